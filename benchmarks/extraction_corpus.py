"""The extraction benchmark's corpus: recording scripted sessions through the real `opencode`, and replaying the
recordings into a fresh HOME where the real `codememory capture` extracts them (benchmarks/data/extraction/).

Recording (`bench_extraction.py --record`): for each OpenCode session script, a throwaway HOME whose OpenCode talks
to a scripted OpenAI-compatible server (tests/support/scripted_llm.py) that answers each model call with the
script's next step; OpenCode runs the tool calls for real in a git project built from the script's files. Build
and test commands the machine lacks (go, cargo, npm, pytest, ...) are answered by a canned-output shim on PATH
(`canned` outputs in the script, with their exit status), so the transcript has the command as typed, its output
and its real exit status. Then the rows of OpenCode's database that belong to the sessions (project, session,
message, part, todo, with their CREATE statements) are written to recorded/<name>.json with the recording's
paths replaced by placeholders.

Replaying: one fresh HOME; every recording's rows go into one OpenCode database there (paths pointing at fresh
project folders, each with `codememory init`), Claude Code and Codex transcripts are written where those CLIs write
them and handed to the real `codememory-hook <assistant> SessionEnd`; then `codememory capture --idle-after 0`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from support.opencode import OpenCodeHome  # noqa: E402
from support.scripted_llm import Reply, ScriptedLLM, ToolCallSpec, is_title_request  # noqa: E402

DATA = HERE / "data" / "extraction"
# The main corpus, and held-out sets written without looking at the rules (tuned against the main corpus) to
# measure whether they generalise: heldout (read while the rules were being improved) and heldout2 (a final
# judge, kept out of the tuning loop); each has sessions/ and recorded/.
SETS = {"main": DATA, "heldout": DATA / "heldout", "heldout2": DATA / "heldout2"}
# Blind sets written in other voices by writers who never read the rules: two to tune on (terse / non-native,
# chatty / "mostly says ok"), a final judge, and planted instructions (in tool output, pages, files, the assistant's
# claims about the user).
SETS |= {
    name: DATA / name
    for name in (
        "blind_a",
        "blind_b",
        "blind_judge",
        "blind_judge2",
        "blind_judge3",
        "blind_judge4",
        "blind_judge5",
        "blind_judge6",
        "blind_judge7",
        "blind_judge8",
        "blind_judge9",
        "blind_judge10",
        "planted",
    )
}
CODEMEMORY = Path(sys.executable).with_name("codememory")
HOOK = Path(sys.executable).with_name("codememory-hook")
TABLES = ("project", "session", "message", "part", "todo")
PROJECT, HOME = "__PROJECT__", "__HOME__"
GIT_ID = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com"}
GIT_ID |= {"GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}
SHIMMED = (
    *("go", "golangci-lint", "cargo", "rustc", "npm", "npx", "pnpm", "node", "tsc", "vitest", "eslint", "vite"),
    *("pytest", "ruff", "mypy", "uv", "pip", "python", "python3", "alembic", "django-admin", "psql"),
    *("docker", "make", "terraform", "kubectl", "helm", "gh", "rsync"),
    *("bundle", "rails", "rspec", "ruby", "mvn", "gradle", "cmake", "ctest", "mix", "elixir", "php", "composer"),
    *("tflint", "nvidia-smi", "systemctl"),
    *("xcodebuild", "swiftlint", "sbt", "spark-submit", "dbmate", "stylua", "nvim", "dune", "opam"),
)
SHIM = '''#!{python}
"""Canned output for a build/test command the recording machine lacks: the first queued entry whose argv is
this command's is printed and removed, with its exit status; otherwise the real program runs."""
import fcntl, json, os, shutil, sys
name = os.path.basename(sys.argv[0]); argv = " ".join([name, *sys.argv[1:]])
queue_path = os.environ.get("BENCH_CANNED", "")
found = None
if queue_path and os.path.exists(queue_path):
    with open(queue_path, "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # the commands of a pipeline start together: one takes its entry at a time
        queue = json.load(f)
        for i, entry in enumerate(queue):
            if entry["argv"] == argv:
                found = queue.pop(i)
                f.seek(0); f.truncate(); json.dump(queue, f)
                break
if found is not None:
    sys.stdout.write(found["out"] + ("" if found["out"].endswith("\\n") else "\\n"))
    sys.exit(found["exit"])
here = os.path.dirname(os.path.abspath(sys.argv[0]))
path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.abspath(p) != here)
real = shutil.which(name, path=path)
if real is None:
    sys.stderr.write(f"bash: {{name}}: command not found\\n"); sys.exit(127)
os.execv(real, [real, *sys.argv[1:]])
'''


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_items(names: list[str] | None = None, data: Path = DATA) -> list[dict[str, Any]]:
    """Every session script of a set (`data`/sessions/*.json), in name order; `names` keeps only those."""
    items = []
    for path in sorted((data / "sessions").glob("*.json")):
        item = json.loads(path.read_text(encoding="utf-8"))
        item["name"] = path.stem
        item["data"] = str(data)  # where its recording and transcript live
        if names is None or item["name"] in names:
            items.append(item)
    return items


# --------------------------------------------------------------------------------------------- recording
def tool_call(spec: dict[str, Any], root: Path) -> tuple[ToolCallSpec, list[dict[str, Any]]]:
    """A script's tool call as OpenCode's tool, and its canned outputs (bash only: `out` and `exit` for the
    command itself, or `canned`, a list of {argv, out, exit}, for a command line running several)."""

    def at(rel: str) -> str:
        return str(root / rel)

    if "bash" in spec:
        args = {"command": spec["bash"], "description": spec.get("description") or spec["bash"][:60]}
        canned = [
            {"argv": c["argv"], "out": c.get("out", ""), "exit": int(c.get("exit", 0))} for c in spec.get("canned", [])
        ]
        if "out" in spec:
            canned.append(
                {"argv": spec.get("argv", spec["bash"]), "out": spec["out"], "exit": int(spec.get("exit", 0))}
            )
        return ToolCallSpec("bash", args), canned
    if "read" in spec:
        return ToolCallSpec("read", {"filePath": at(spec["read"])}), []
    if "write" in spec:
        return ToolCallSpec("write", {"filePath": at(spec["write"]), "content": spec["content"]}), []
    if "edit" in spec:
        args = {"filePath": at(spec["edit"]), "oldString": spec["old"], "newString": spec["new"]}
        return ToolCallSpec("edit", args), []
    if "todos" in spec:
        todos = [
            {"content": c, "status": st, "priority": pr, "id": str(i)}
            for i, (c, st, pr) in enumerate(spec["todos"], start=1)
        ]
        return ToolCallSpec("todowrite", {"todos": todos}), []
    raise ValueError(f"unknown tool call in script: {spec}")


def turn_steps(turn: dict[str, Any]) -> list[dict[str, Any]]:
    """A turn's steps as a CLI can be driven through them: a step with text and no tools ends a turn (the CLI takes
    it as the final answer), so a text-only step before the last one goes in front of the next step's text."""
    steps: list[dict[str, Any]] = []
    carried = ""
    raw = turn["steps"]
    for n, step in enumerate(raw):
        text = "\n\n".join(t for t in (carried, step.get("text", "")) if t)
        if not step.get("tools") and n + 1 < len(raw):
            carried = text
            continue
        carried = ""
        steps.append({**step, "text": text})
    return steps


def cli_prompt(text: str) -> str:
    """A prompt as a command-line argument: OpenCode's argument parser turns a bare number ("2", a user picking the
    second option) into a number and fails on it; a trailing newline keeps it text."""
    return f"{text}\n" if re.fullmatch(r"\s*[-+]?\d+(?:\.\d+)?\s*", text) else text


def with_scripted_model(files: dict[str, str], oc: OpenCodeHome) -> dict[str, str]:
    """The project's files, with its own `opencode.json` (if it has one) also offering the scripted model: a project
    config naming its own providers would leave OpenCode without the one the recording talks to."""
    out = dict(files)
    for name in ("opencode.json", "opencode.jsonc"):
        if name not in out:
            continue
        try:
            config = json.loads(out[name])
        except ValueError:
            continue
        ours = oc.config()
        config.setdefault("provider", {}).update(ours["provider"])  # type: ignore[union-attr]
        config["model"] = ours["model"]
        out[name] = json.dumps(config, indent=2) + "\n"
    return out


def make_project(root: Path, files: dict[str, str], env: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in {"README.md": f"# {root.name}\n", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root.resolve()


def canned_commands(item: dict[str, Any]) -> set[str]:
    """The programs the item's script gives canned output for (a command the machine has, such as `head` on a
    path that only existed on the writer's machine, or `prove`, whose timings change every run)."""
    names = set()
    for session in item.get("sessions", []):
        for turn in session["turns"]:
            for step in turn["steps"]:
                for spec in step.get("tools", []):
                    if "bash" in spec and "out" in spec:
                        names.add(str(spec.get("argv", spec["bash"])).split()[0])
                    names.update(str(c["argv"]).split()[0] for c in spec.get("canned", []))
    return {n for n in names if n and "/" not in n}


def install_shims(folder: Path, extra: set[str] | frozenset[str] = frozenset()) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in sorted(set(SHIMMED) | set(extra)):
        path = folder / name
        path.write_text(SHIM.format(python=sys.executable), encoding="utf-8")
        path.chmod(0o755)


def record(item: dict[str, Any], work: Path) -> dict[str, Any]:
    """Run the item's sessions through the real opencode; write recorded/<name>.json; return a summary."""
    base = work / "record" / item["name"]
    shutil.rmtree(base, ignore_errors=True)
    queue: list[Reply] = []
    canned_path = base / "canned.json"

    def handler(body: dict[str, Any]) -> Reply:
        if is_title_request(body):
            return Reply(item.get("title", item["name"]))
        return queue.pop(0) if queue else Reply("Done.")

    started = time.perf_counter()
    with ScriptedLLM(handler) as llm:
        oc = OpenCodeHome(base / "home", llm.base_url)
        install_shims(base / "bin", canned_commands(item))
        env = {**oc.env(), **GIT_ID, "BENCH_CANNED": str(canned_path)}
        env["PATH"] = f"{base / 'bin'}{os.pathsep}{env['PATH']}"
        oc.env = lambda: env  # type: ignore[method-assign]
        if os.environ.get("BENCH_OPENCODE_LOGS"):  # OpenCode's own error log on stderr, to see why a run failed
            plain_args = oc.args
            oc.args = (
                lambda *a, **k: [
                    *plain_args(*a, **k)[:2],
                    "--print-logs",
                    "--log-level",
                    "ERROR",  # type: ignore[method-assign]
                    *plain_args(*a, **k)[2:],
                ]
            )
        project = make_project(base / item["project"], with_scripted_model(item.get("files", {}), oc), env)
        session_ids = []
        for session in item["sessions"]:
            session_id = None
            for turn in session["turns"]:
                canned = []
                for step in turn_steps(turn):
                    calls = [tool_call(spec, project) for spec in step.get("tools", [])]
                    canned += [c for _, cs in calls for c in cs]
                    queue.append(Reply(step.get("text", ""), [spec for spec, _ in calls]))
                canned_path.write_text(json.dumps(canned), encoding="utf-8")
                result = oc.run(project, cli_prompt(turn["user"]), session=session_id, timeout=300, check=False)
                if result.returncode != 0:
                    errors = [line for line in result.stdout.splitlines() if '"type":"error"' in line.replace(" ", "")]
                    logged = [line for line in result.stderr.splitlines() if "ERROR" in line]
                    said = "\n".join(errors + logged)[-3000:] or result.stderr[-3000:]
                    where = f"session {len(session_ids) + 1}, turn {session['turns'].index(turn) + 1}"
                    raise RuntimeError(f"{item['name']}: opencode run failed ({result.returncode}) in {where}:\n{said}")
                session_id = session_id or result.session_id
                if queue or json.loads(canned_path.read_text()):
                    raise RuntimeError(f"{item['name']}: turn {turn['user'][:40]!r} left steps or canned output")
            session_ids.append(session_id)
        rows = export_rows(oc.db_path, [s for s in session_ids if s], {str(project): PROJECT, str(base): HOME})
    failed = [
        f"{data['tool']} {str(data['state'].get('input', {}).get('command', ''))[:50]!r}: "
        f"{data['state'].get('status')} exit={data['state'].get('metadata', {}).get('exit')}"
        for data in (json.loads(r["data"]) for r in rows["part"]["rows"])
        if data.get("type") == "tool"
        and (
            data["state"].get("status") != "completed" or data["state"].get("metadata", {}).get("exit") not in (0, None)
        )
    ]
    out = {"name": item["name"], "opencode_version": opencode_version(env), "sessions": session_ids, "tables": rows}
    recorded = Path(item["data"]) / "recorded"
    recorded.mkdir(parents=True, exist_ok=True)
    (recorded / f"{item['name']}.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return {"name": item["name"], "seconds": round(time.perf_counter() - started, 1), "failed_tools": failed}


def opencode_version(env: dict[str, str]) -> str:
    from support.opencode import opencode_bin

    done = subprocess.run([str(opencode_bin()), "--version"], env=env, capture_output=True, text=True, timeout=60)
    return done.stdout.strip()


def _sub(value: Any, paths: dict[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in sorted(paths.items(), key=lambda kv: -len(kv[0])):  # the longest path first
            value = value.replace(old, new)
    return value


def export_rows(db: Path, session_ids: list[str], paths: dict[str, str]) -> dict[str, Any]:
    """Each table's CREATE statement and the rows belonging to these sessions, paths replaced."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    marks = ",".join("?" * len(session_ids))
    where = {
        "project": f"id IN (SELECT project_id FROM session WHERE id IN ({marks}))",
        "session": f"id IN ({marks})",
        "message": f"session_id IN ({marks})",
        "part": f"session_id IN ({marks})",
        "todo": f"session_id IN ({marks})",
    }
    out = {}
    try:
        for table in TABLES:
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()[0]
            rows = conn.execute(f"SELECT * FROM {table} WHERE {where[table]} ORDER BY rowid", session_ids).fetchall()
            out[table] = {"create": sql, "rows": [{k: _sub(r[k], paths) for k in r.keys()} for r in rows]}  # noqa: SIM118
    finally:
        conn.close()
    return out


# --------------------------------------------------------------------------------------------- replaying
def isolated_env(home: Path) -> dict[str, str]:
    # PYTHONPATH passes through: `PYTHONPATH=<a tree>/src bench_extraction.py` scores that tree's extraction
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        CODEX_HOME=str(home / ".codex"),
        **GIT_ID,
    )
    return env


def cm(env: dict[str, str], cwd: Path, *args: str, timeout: float = 600) -> dict[str, Any]:
    done = subprocess.run(
        [str(CODEMEMORY), *args, "--json"], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        said = done.stderr[-3000:] + done.stdout[-3000:]
        raise RuntimeError(f"codememory {' '.join(args)} failed ({done.returncode}):\n{said}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def new_project(root: Path, env: dict[str, str], assistants: str = "none") -> Path:
    """A git folder with a codememory store (OpenCode's capture needs only the store; Claude Code's goes through
    the hooks `init --assistants claude` installs)."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=env, check=True, capture_output=True)
    cm(env, root, "init", "--assistants", assistants)
    return root.resolve()


def configure_model(home: Path, llm: dict[str, str]) -> Path:
    """The extraction model goes into the user's own config (trusted), as a user would set it: a project's
    `.codememory/config.toml` is untrusted and may not choose a model or where transcripts are sent, so an [llm]
    written there is ignored and capture quietly falls back to the rules."""
    config = home / ".config" / "codememory" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{k} = {json.dumps(v)}" for k, v in llm.items()]
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    config.write_text(text + "\n[llm]\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return config


def model_use(report: dict[str, Any], memories: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, int]:
    """How much of a run the model did: its calls (capture's reports) and the memories it entered. A --with-model
    run where both are 0 used the rules alone."""
    calls = 0

    def walk(value: Any) -> None:
        nonlocal calls
        if isinstance(value, dict):
            if isinstance(value.get("llm_calls"), int) and "spans" in value:
                calls += value["llm_calls"]
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(report)
    entered = sum(
        1
        for per_item in memories.values()
        for items in per_item.values()
        for m in items
        if str(m.get("entered_by", "")).endswith(":llm")
    )
    return {"llm_calls": calls, "memories_by_model": entered}


def load_recordings(db: Path, recordings: list[tuple[dict[str, Any], Path, Path]]) -> None:
    """One OpenCode database holding every recording's rows, each recording's paths pointing at its project."""
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    try:
        created: set[str] = set()
        for recording, project, home in recordings:
            paths = {PROJECT: str(project), HOME: str(home)}
            for table in TABLES:
                spec = recording["tables"][table]
                if table not in created:
                    conn.execute(spec["create"])
                    created.add(table)
                for row in spec["rows"]:
                    cols = list(row)
                    conn.execute(
                        f"INSERT INTO {table} ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                        [_sub(row[c], paths) for c in cols],
                    )
        conn.commit()
    finally:
        conn.close()


def transcript_path(source: str, home: Path, project: Path, session_id: str) -> Path:
    """Where Claude Code / Codex write a session's transcript."""
    if source == "claude-code":
        return home / ".claude" / "projects" / str(project).replace("/", "-") / f"{session_id}.jsonl"
    return home / ".codex" / "sessions" / "2026" / "11" / "20" / f"rollout-2026-11-20T10-00-00-{session_id}.jsonl"


def hook_capture(env: dict[str, str], item: dict[str, Any], project: Path, home: Path) -> None:
    """Write the item's transcript as the CLI would and run the real hook that ends its session on it (Codex has
    no SessionEnd: its Stop hook captures)."""
    transcript = Path(item["data"]) / "sessions" / item["transcript"]
    text = transcript.read_text(encoding="utf-8").replace(PROJECT, str(project))
    path = transcript_path(item["source"], home, project, item["session_id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    assistant, event = {"claude-code": ("claude", "SessionEnd"), "codex": ("codex", "Stop")}[item["source"]]
    payload = {
        "session_id": item["session_id"],
        "transcript_path": str(path),
        "cwd": str(project),
        "hook_event_name": event,
        "reason": "exit",
    }
    subprocess.run(
        [str(HOOK), assistant, event, "--project", str(project)],
        input=json.dumps(payload), cwd=project, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip


def replay(
    items: list[dict[str, Any]],
    work: Path,
    llm: dict[str, str] | None,
    progress: Callable[[str], None] = log,
    assistants: tuple[str, ...] = ("opencode",),
    skip_unrecorded: bool = False,
) -> tuple[dict[str, dict[str, list[dict[str, Any]]]], dict[str, Any]]:
    """Replay every item into one fresh HOME, run `codememory capture --idle-after 0`, and return, per assistant
    ("opencode": the OpenCode recordings and the hand-written transcripts; "claude": the Claude Code recordings
    of the same scripts), each item's stored memories (text, category, entered_by, source; oldest first) and the
    pass's report. With `skip_unrecorded`, an item an assistant has no recording of is left out of that
    assistant's results (the report's "unrecorded" lists it) rather than stopping the run."""
    import extraction_claude

    run = work / "run"
    shutil.rmtree(run, ignore_errors=True)
    home = run / "home"
    env = isolated_env(home)
    (home / ".config" / "codememory").mkdir(parents=True)
    if llm:
        configure_model(home, llm)
        key = llm.get("api_key_env", "")
        if key and key in os.environ:  # the key stays in the environment, named by the config
            env[key] = os.environ[key]
    projects: dict[tuple[str, str], Path] = {}
    recordings = []
    unrecorded: list[str] = []
    for item in items:
        if skip_unrecorded and item["source"] == "opencode":
            for assistant, path in (
                ("opencode", Path(item["data"]) / "recorded" / f"{item['name']}.json"),
                ("claude", extraction_claude.recording_path(item)),
            ):
                if assistant in assistants and not path.exists():
                    unrecorded.append(f"{assistant}:{item['name']}")
        if "opencode" in assistants and f"opencode:{item['name']}" not in unrecorded:
            project = new_project(run / "projects" / item["name"] / item["project"], env)
            projects[("opencode", item["name"])] = project
            if item["source"] == "opencode":
                path = Path(item["data"]) / "recorded" / f"{item['name']}.json"
                if not path.exists():
                    raise RuntimeError(
                        f"{item['name']} is not recorded: run bench_extraction.py --record {item['name']}"
                    )
                recordings.append((json.loads(path.read_text(encoding="utf-8")), project, home))
            else:
                hook_capture(env, item, project, home)
        if "claude" in assistants and item["source"] == "opencode" and f"claude:{item['name']}" not in unrecorded:
            project = new_project(run / "projects-claude" / item["name"] / item["project"], env, "claude")
            projects[("claude", item["name"])] = project
            extraction_claude.replay_item(item, project, home, env)
    progress(f"replay: {len(projects)} projects set up")
    if recordings:  # an OpenCode database without its tables would be an error for capture
        load_recordings(home / ".local" / "share" / "opencode" / "opencode.db", recordings)
    report = cm(env, run, "capture", "--idle-after", "0")
    if skip_unrecorded:
        report["unrecorded"] = unrecorded
    memories: dict[str, dict[str, list[dict[str, Any]]]] = {a: {} for a in assistants}
    for (assistant, name), project in projects.items():
        listed = cm(env, project, "list", "--limit", "500", "--sort", "created", "--order", "asc")
        memories[assistant][name] = listed.get("results", listed.get("memories", []))
    return memories, report
