"""The extraction benchmark's Claude Code path: every session script replayed through the real `claude` binary
(tests/clis, the pinned version) against a scripted Anthropic server, its transcript recorded, then captured
through the real hooks as `codememory init --assistants claude` installs them.

Recording (`bench_extraction.py --record-claude`): for each session script, a throwaway HOME and a git project
made from the script's files, with `codememory init --assistants claude` run in it (so the transcript holds what
our hooks inject, as it would for a user). Each turn is one `claude -p PROMPT` (`--resume SESSION` after the
first), the scripted server answering each conversation request with the script's next step, the script's tools
mapped to Claude Code's: bash -> Bash, read -> Read, write -> Write, edit -> Edit, todos -> TaskCreate /
TaskUpdate (a todo list rewritten whole becomes the tasks created and the status changes since the last list).
The build and test commands the machine lacks get their canned output from the same shim as the OpenCode path.
Every hook Claude Code ran was wrapped: its payload and how many transcript lines were on disk at that moment are
logged. Written to `recorded-claude/<name>.json`: the transcript lines (without Claude Code's own bookkeeping of
API requests, prompt snapshots, its system prompt's parts and skill/agent listings, which no reader looks at and
which weigh ~95% of a file) and the capture hooks' runs (Stop, SessionEnd), with the paths replaced by
placeholders and the hook commands as `init` wrote them (the logger that wrapped them cut out).

Replaying: a fresh project with `codememory init --assistants claude`; for each recorded hook run, the transcript
is written up to the lines that were on disk then, where Claude Code writes it, and the command `init` put in
`.claude/settings.json` for that event runs with the recorded payload on stdin, as Claude Code runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import extraction_corpus as corpus

sys.path.insert(0, str(corpus.HERE.parent / "tests"))

from support.scripted_anthropic import Reply, ScriptedAnthropic, ToolUse, is_side_request

CLAUDE_BIN = corpus.HERE.parent / "tests" / "clis" / "node_modules" / ".bin" / "claude"
ALLOWED = "Bash Read Write Edit TaskCreate TaskUpdate"
CAPTURE_EVENTS = ("Stop", "SessionEnd")  # the hooks that capture turns; the others inject context
_BOOKKEEPING = {"api-request", "api-request-shape", "api-request-blob", "atis-latch", "tools-used", "cost-state"}
_BOOKKEEPING_ATTACHMENTS = {
    *("prompt_snapshot", "skill_listing", "agent_listing_delta", "deferred_tools_delta", "instructions"),
    *("mcp_instructions_delta", "remote_session_change", "environment", "session_context", "model", "date"),
}
TRANSCRIPT = "__TRANSCRIPT__"
BIN = "__BIN__"  # the folder of the codememory commands init wrote into the hooks
PROJECT_KEY = "__PROJECT_KEY__"
_STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "completed", "cancelled": "deleted"}
HOOK_LOGGER = '''#!{python}
"""Log a Claude Code hook's payload and the transcript's line count, then run the real hook command."""
import json, os, subprocess, sys
raw = sys.stdin.read()
try:
    payload = json.loads(raw)
except ValueError:
    payload = {{}}
path = payload.get("transcript_path") or ""
lines = sum(1 for _ in open(path, "rb")) if path and os.path.exists(path) else 0
with open({log!r}, "a") as out:
    out.write(json.dumps({{"event": sys.argv[1], "lines": lines, "payload": payload}}) + "\\n")
sys.exit(subprocess.run(sys.argv[2:], input=raw, text=True).returncode)
'''


def claude_bin() -> Path:
    if not CLAUDE_BIN.exists():
        raise RuntimeError(f"no claude binary at {CLAUDE_BIN}: run `npm ci --prefix tests/clis`")
    return CLAUDE_BIN


def claude_key(project: Path) -> str:
    """The folder name Claude Code gives a project's transcripts: every non-alphanumeric character as `-`."""
    return "".join(ch if ch.isalnum() else "-" for ch in str(project))


class TaskBoard:
    """Claude Code's task list for one session, kept in step with the script's whole-list todo writes."""

    def __init__(self) -> None:
        self.tasks: dict[str, tuple[str, str]] = {}  # content -> (task id, status)

    def uses(self, todos: list[list[str]]) -> list[ToolUse]:
        out: list[ToolUse] = []
        listed = set()
        for content, status, _priority in todos:
            listed.add(content)
            wanted = _STATUS.get(status, "pending")
            if content not in self.tasks:
                task_id = str(len(self.tasks) + 1)  # Claude Code numbers a session's tasks 1, 2, ...
                out.append(ToolUse("TaskCreate", {"subject": content, "description": content, "activeForm": content}))
                self.tasks[content] = (task_id, "pending")
            task_id, now = self.tasks[content]
            if wanted != now:
                out.append(ToolUse("TaskUpdate", {"taskId": task_id, "status": wanted}))
                self.tasks[content] = (task_id, wanted)
        for content, (task_id, now) in list(self.tasks.items()):
            if content not in listed and now != "deleted":
                out.append(ToolUse("TaskUpdate", {"taskId": task_id, "status": "deleted"}))
                self.tasks[content] = (task_id, "deleted")
        return out


def tool_uses(spec: dict[str, Any], root: Path, board: TaskBoard) -> tuple[list[ToolUse], list[dict[str, Any]]]:
    """A script's tool call as Claude Code's tool uses, and its canned outputs (see corpus.tool_call)."""
    if "todos" in spec:
        return board.uses(spec["todos"]), []
    call, canned = corpus.tool_call(spec, root)
    args = call.arguments
    if call.name == "bash":
        return [ToolUse("Bash", {"command": args["command"], "description": args["description"]})], canned
    if call.name == "read":
        return [ToolUse("Read", {"file_path": args["filePath"]})], []
    if call.name == "write":
        return [ToolUse("Write", {"file_path": args["filePath"], "content": args["content"]})], []
    edit = {"file_path": args["filePath"], "old_string": args["oldString"], "new_string": args["newString"]}
    return [ToolUse("Edit", edit)], []


def wrap_hooks(project: Path, logger: Path) -> None:
    """Every hook command init wrote, run through the logger (which then runs the command itself)."""
    settings_path = project / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    for event, groups in settings["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                hook["command"] = f"{logger} {event} {hook['command']}"
    settings_path.write_text(json.dumps(settings, indent=2), encoding="utf-8")


def _env(home: Path, base_url: str, bin_dir: Path, canned: Path) -> dict[str, str]:
    env = corpus.isolated_env(home)
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="scripted-bench-key",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        NO_COLOR="1",
        BENCH_CANNED=str(canned),
    )
    # the hooks init writes name `codememory-hook` on PATH, as a user's committed settings do
    env["PATH"] = os.pathsep.join([str(bin_dir), str(corpus.CODEMEMORY.parent), env["PATH"]])
    return env


def record(item: dict[str, Any], work: Path) -> dict[str, Any]:
    """Run the item's sessions through the real claude; write recorded-claude/<name>.json; return a summary."""
    base = work / "record-claude" / item["name"]
    shutil.rmtree(base, ignore_errors=True)
    home = base / "home"
    (home / ".config" / "codememory").mkdir(parents=True)
    queue: list[Reply] = []
    canned_path = base / "canned.json"
    hook_log = base / "hooks.jsonl"

    def handler(body: dict[str, Any]) -> Reply:
        if is_side_request(body):
            return Reply(item.get("title", item["name"]))
        return queue.pop(0) if queue else Reply("Done.")

    started = time.perf_counter()
    corpus.install_shims(base / "bin", corpus.canned_commands(item))
    logger = base / "hook_logger.py"
    logger.write_text(HOOK_LOGGER.format(python=sys.executable, log=str(hook_log)), encoding="utf-8")
    logger.chmod(0o755)
    with ScriptedAnthropic(handler) as api:
        env = _env(home, api.base_url, base / "bin", canned_path)
        project = corpus.make_project(base / item["project"], item.get("files", {}), env)
        corpus.cm(env, project, "init", "--assistants", "claude")
        wrap_hooks(project, logger)
        sessions = []
        for session in item["sessions"]:
            session_id = None
            board = TaskBoard()
            first_hook = _count_lines(hook_log)
            for turn in session["turns"]:
                canned: list[dict[str, Any]] = []
                for step in corpus.turn_steps(turn):
                    uses: list[ToolUse] = []
                    for spec in step.get("tools", []):
                        more, outs = tool_uses(spec, project, board)
                        uses += more
                        canned += outs
                    queue.append(Reply(step.get("text", ""), uses))
                canned_path.write_text(json.dumps(canned), encoding="utf-8")
                args = [str(claude_bin()), "-p", "--allowedTools", ALLOWED, "--output-format", "json"]
                if session_id:
                    args += ["--resume", session_id]
                args += ["--", turn["user"]]  # a prompt may start with "-" ("-1 means …"): text, not an option
                done = subprocess.run(
                    args, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
                )
                if done.returncode != 0:
                    raise RuntimeError(
                        f"{item['name']}: claude -p failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
                    )
                session_id = session_id or json.loads(done.stdout)["session_id"]
                if queue or json.loads(canned_path.read_text()):
                    raise RuntimeError(f"{item['name']}: turn {turn['user'][:40]!r} left steps or canned output")
            sessions.append(_session(home, project, session_id, hook_log, first_hook))
    paths = {str(project): corpus.PROJECT, str(home): corpus.HOME, claude_key(project): PROJECT_KEY}
    paths |= {f"{logger} {event} ": "" for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact")}
    paths |= {f"{logger} {event} ": "" for event in CAPTURE_EVENTS}
    paths[str(Path(sys.executable).parent)] = BIN
    out = {
        "name": item["name"],
        "claude_version": _version(),
        "sessions": [_placeheld(s, paths) for s in sessions],
    }
    folder = Path(item["data"]) / "recorded-claude"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{item['name']}.json").write_text(_dump(out), encoding="utf-8")
    failed = [
        f"{u['name']}: {str(r.get('content'))[:80]!r}"
        for s in sessions
        for u, r in _tool_pairs(s["lines"])
        if r.get("is_error") and u["name"] != "Bash"
    ]
    return {"name": item["name"], "seconds": round(time.perf_counter() - started, 1), "failed_tools": failed}


def _dump(recording: dict[str, Any]) -> str:
    """The recording as JSON with one transcript line or hook run per text line (small diffs, no indent bloat)."""
    sessions = []
    for s in recording["sessions"]:
        lines = ",\n".join(json.dumps(x, ensure_ascii=False) for x in s["lines"])
        hooks = ",\n".join(json.dumps(x, ensure_ascii=False) for x in s["hooks"])
        sessions.append(
            f'{{"session_id": {json.dumps(s["session_id"])},\n"lines": [\n{lines}],\n"hooks": [\n{hooks}]}}'
        )
    head = f'{{"name": {json.dumps(recording["name"])}, "claude_version": {json.dumps(recording["claude_version"])},'
    return head + '\n"sessions": [\n' + ",\n".join(sessions) + "]}\n"


def _count_lines(path: Path) -> int:
    return sum(1 for _ in path.open("rb")) if path.exists() else 0


def _session(home: Path, project: Path, session_id: str | None, hook_log: Path, first_hook: int) -> dict[str, Any]:
    """The session's transcript lines (bookkeeping dropped) and its capture hooks' runs, with line counts
    counted in the kept lines."""
    if session_id is None:
        raise RuntimeError("claude printed no session id")
    path = home / ".claude" / "projects" / claude_key(project) / f"{session_id}.jsonl"
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept_before = [0]
    lines = []
    for line in raw:
        if not _bookkeeping(line):
            lines.append(line)
        kept_before.append(len(lines))
    hooks = []
    with hook_log.open(encoding="utf-8") as f:
        runs = [json.loads(x) for x in f.read().splitlines()[first_hook:]]
    for run in runs:
        if run["event"] in CAPTURE_EVENTS and run["payload"].get("session_id") == session_id:
            payload = {**run["payload"], "transcript_path": TRANSCRIPT}
            hooks.append({"event": run["event"], "lines": kept_before[min(run["lines"], len(raw))], "payload": payload})
    return {"session_id": session_id, "lines": lines, "hooks": hooks}


def _bookkeeping(line: dict[str, Any]) -> bool:
    kind = line.get("type")
    if kind in _BOOKKEEPING:
        return True
    attachment = line.get("attachment")
    return kind == "attachment" and isinstance(attachment, dict) and attachment.get("type") in _BOOKKEEPING_ATTACHMENTS


def _tool_pairs(lines: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    uses: dict[str, dict[str, Any]] = {}
    pairs = []
    for line in lines:
        content = (line.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                uses[block["id"]] = block
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in uses:
                pairs.append((uses[block["tool_use_id"]], block))
    return pairs


def _placeheld(value: Any, paths: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _placeheld(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_placeheld(v, paths) for v in value]
    return corpus._sub(value, paths)


def _version() -> str:
    done = subprocess.run([str(claude_bin()), "--version"], capture_output=True, text=True, timeout=60)
    return done.stdout.strip()


# --------------------------------------------------------------------------------------------- replaying
def recording_path(item: dict[str, Any]) -> Path:
    return Path(item["data"]) / "recorded-claude" / f"{item['name']}.json"


def replay_item(item: dict[str, Any], project: Path, home: Path, env: dict[str, str]) -> None:
    """Write the item's recorded transcripts where Claude Code writes them, hook run by hook run, and run the
    capture hooks `init` installed in `project` with the recorded payloads."""
    path = recording_path(item)
    if not path.exists():
        raise RuntimeError(f"{item['name']} has no Claude Code recording: run bench_extraction.py --record-claude")
    recording = json.loads(path.read_text(encoding="utf-8"))
    settings = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    commands = {
        event: [h["command"] for g in groups for h in g["hooks"]] for event, groups in settings["hooks"].items()
    }
    paths = {corpus.PROJECT: str(project), corpus.HOME: str(home), PROJECT_KEY: claude_key(project)}
    paths[BIN] = str(corpus.CODEMEMORY.parent)
    folder = home / ".claude" / "projects" / claude_key(project)
    folder.mkdir(parents=True, exist_ok=True)
    # the hooks init writes name `codememory-hook` on PATH, as a user's committed settings do
    hook_env = {**env, "CLAUDE_PROJECT_DIR": str(project)}
    hook_env["PATH"] = os.pathsep.join([str(corpus.CODEMEMORY.parent), env.get("PATH", "")])
    for session in recording["sessions"]:
        transcript = folder / f"{session['session_id']}.jsonl"
        lines = [json.dumps(_placeheld(line, paths), ensure_ascii=False) + "\n" for line in session["lines"]]
        written = 0
        transcript.write_text("", encoding="utf-8")
        for hook in session["hooks"]:
            with transcript.open("a", encoding="utf-8") as f:
                f.writelines(lines[written : hook["lines"]])
            written = max(written, hook["lines"])
            payload = {**_placeheld(hook["payload"], paths), "transcript_path": str(transcript), "cwd": str(project)}
            for command in commands.get(hook["event"], []):
                subprocess.run(
                    command, shell=True, input=json.dumps(payload), cwd=project, env=hook_env,
                    capture_output=True, text=True, timeout=120, check=True,
                )  # fmt: skip
        with transcript.open("a", encoding="utf-8") as f:
            f.writelines(lines[written:])
