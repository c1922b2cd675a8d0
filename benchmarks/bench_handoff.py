"""Hand-off between coding assistants: what tool B's first model request carries of a session tool A just had.

For each tool A (the real CLIs of tests/clis and OpenCode, each against its scripted model server: tests/support/
agent_cli.py), in a fresh git project with `codememory init --assistants claude,codex,gemini,copilot,opencode`:

1. A's session: the user states the goal and a decision with its reason; the model writes limiter.py, saves a
   `checkpoint` through codememory's tool (goal, work done, the decision, the todo left open) and answers.
2. The session ends as it does for a user: A's own hooks (or OpenCode's plugin) close it, and the capture pass the
   daemon runs once the session is idle (`codememory capture --idle-after 0`) captures and extracts it.
3. The HOME and project are saved. For each other tool B, both are restored and B gets one new prompt that says
   nothing of the work ("Let's pick up where the last session stopped."); its first model request is read from
   its scripted server.

Scored in that request, only inside the blocks codememory put there (`<project_memory>`, the plugin's
`<developer_context>`; Gemini CLI escapes their tags): each of the five items of A's session, by a phrase only
that item has — the goal, the work done, the decision with its reason (both halves), the pending todo, the file
touched. Cost: those blocks' tokens as codememory counts them (⌈characters / 4⌉), against the per-call budget
(`[context] call_budget_tokens`, 2,000).

    .venv/bin/python benchmarks/bench_handoff.py [--tools claude,codex,...] [--from A,...] [--no-checkpoint]
        [--out results-handoff.json]

`--no-checkpoint`: A's model saves no checkpoint (it says what is done and still to do in its answer), so only
the hooks, the plugin and capture carry the session.

Runs are sequential (the CLIs are slow on a loaded machine); work files go to benchmarks/.work/handoff/.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from codememory.text.tokens import estimate_tokens  # noqa: E402
from support.agent_cli import AgentCli, agents  # noqa: E402
from support.opencode import make_git_project  # noqa: E402
from support.scripted_llm import Reply, ToolCallSpec  # noqa: E402

WORK = HERE / ".work" / "handoff"
BUDGET = 2000  # [context] call_budget_tokens, the default
ALL = ("claude", "codex", "gemini", "copilot", "opencode")

GOAL = "Add per-key rate limiting to the public API"
DECISION = "Keep the rate limit counters in Redis instead of Memcached: we need atomic INCR with expiry"
DONE = "Wrote limiter.py with a 60-second fixed window per API key"
TODO = "Wire the limiter into the API gateway"
FILE = "limiter.py"
PROMPT_A = (
    f"{GOAL}. We decided to keep the rate limit counters in Redis instead of Memcached because we need atomic "
    "INCR with expiry. Please write the limiter; wiring it into the API gateway comes later."
)
PROMPT_B = "Let's pick up where the last session stopped."
LIMITER = "WINDOW_SECONDS = 60\n"

# each item, and the phrases (all of them, case-insensitive) that mean a block carries it
ITEMS: dict[str, tuple[str, ...]] = {
    "goal": ("per-key rate limiting",),
    "work done": ("60-second fixed window",),
    "decision + reason": ("Redis instead of Memcached", "atomic INCR"),
    "pending todo": ("Wire the limiter into the API gateway",),  # the prompt's "wiring it into…" does not count
    "file touched": (FILE,),
}
BLOCK_RE = re.compile(r"<(project_memory|developer_context)>(.*?)</\1>", re.S)


@dataclass
class Pair:
    a: str
    b: str
    carried: dict[str, bool] = field(default_factory=dict)
    share: float = 0.0
    tokens: int = 0  # codememory's blocks in B's first request
    blocks: int = 0
    injected: str = ""  # codememory's blocks, as B's model got them
    seconds: float = 0.0
    error: str | None = None


def blocks_of(text: str) -> list[str]:
    """codememory's blocks in a request's text (Gemini CLI sends them HTML-escaped inside its own tags)."""
    found = [m.group(0) for m in BLOCK_RE.finditer(text)]
    found += [m.group(0) for m in BLOCK_RE.finditer(html.unescape(text)) if m.group(0) not in found]
    return found


def score(text: str) -> tuple[dict[str, bool], int, int]:
    blocks = blocks_of(text)
    joined = "\n".join(blocks).lower()
    carried = {item: all(p.lower() in joined for p in phrases) for item, phrases in ITEMS.items()}
    return carried, sum(estimate_tokens(b) for b in blocks), len(blocks)


@contextmanager
def daemon_for(agent: AgentCli) -> Iterator[None]:
    """OpenCode's plugin answers through the daemon; the other CLIs' hooks run without one."""
    with agent.daemon() if agent.key == "opencode" else nullcontext():  # type: ignore[attr-defined]
        yield


def session_a(agent: AgentCli, project: Path, *, checkpoint_call: bool = True) -> None:
    """A's session; without `checkpoint_call` the model saves no checkpoint and says what is done and still to do
    in its answer instead: only the hooks (or the plugin) and capture carry it."""
    checkpoint = {
        "slug": "per-key-rate-limiting",  # the tool asks for one; where the hooks hold the session open, it is moot
        "goal": GOAL,
        "work_completed": [DONE],
        "work_pending": [TODO],
        "decisions": [DECISION],
    }
    replies = [
        Reply("Writing the limiter.", tool_calls=[agent.write_file(project / FILE, LIMITER)]),
        Reply("Saving where we are.", tool_calls=[ToolCallSpec(agent.mcp("checkpoint"), checkpoint)]),
        Reply(f"{DONE}. Still to do: {TODO}."),
    ]
    if not checkpoint_call:
        del replies[1]
    with daemon_for(agent):
        agent.run(project, PROMPT_A, replies).check()
    agent.cm(project, "capture", "--idle-after", "0")  # the daemon's pass once the session is idle


def commit_setup(project: Path) -> None:
    """The files init wrote are committed, as a team does (docs/assistants.md, "Files a team commits"): the session's
    files touched are then its own."""
    who = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
    for args in (["add", "-A"], [*who, "commit", "-q", "-m", "codememory init"]):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


def save(tar: Path, *folders: Path) -> None:
    with tarfile.open(tar, "w") as out:
        for folder in folders:
            out.add(folder, arcname=folder.name)


def restore(tar: Path, parent: Path, *folders: Path) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    with tarfile.open(tar) as archive:
        archive.extractall(parent, filter="tar")


def run_from(a: str, bs: list[str], factories: dict[str, Any], *, checkpoint_call: bool = True) -> list[Pair]:
    base = WORK / a
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    home, project = base / "home", base / "app"
    agent_a: AgentCli = factories[a](home)
    make_git_project(project)
    agent_a.cm(project, "init", "--assistants", ",".join(ALL))
    commit_setup(project)
    started = time.monotonic()
    try:
        session_a(agent_a, project, checkpoint_call=checkpoint_call)
    except Exception as exc:  # one tool's failure is reported, the others still run
        return [Pair(a, b, error=f"session in {a}: {type(exc).__name__}: {str(exc)[:300]}") for b in bs]
    print(f"{a}: session done in {time.monotonic() - started:.0f} s", file=sys.stderr)
    snapshot = base / "after-a.tar"
    save(snapshot, home, project)
    pairs = []
    for b in bs:
        restore(snapshot, base, home, project)
        pair = Pair(a, b)
        started = time.monotonic()
        try:
            agent_b: AgentCli = factories[b](home)
            with daemon_for(agent_b):
                run = agent_b.run(project, PROMPT_B, [Reply("Picking up from there.")]).check()
            pair.carried, pair.tokens, pair.blocks = score(run.texts[0])
            pair.injected = "\n".join(blocks_of(run.texts[0]))
            pair.share = sum(pair.carried.values()) / len(ITEMS)
        except Exception as exc:
            pair.error = f"{type(exc).__name__}: {str(exc)[:300]}"
        pair.seconds = round(time.monotonic() - started, 1)
        print(f"  {a} -> {b}: {pair.share:.1f} ({pair.tokens} tokens) {pair.error or ''}", file=sys.stderr)
        pairs.append(pair)
    return pairs


def table(pairs: list[Pair]) -> str:
    head = "| A → B | " + " | ".join(ITEMS) + " | carried | tokens |"
    rows = [head, "|" + " --- |" * (len(ITEMS) + 3)]
    for p in pairs:
        marks = ["error" if p.error else ("✓" if p.carried.get(i) else "✗") for i in ITEMS]
        rows.append(f"| {p.a} → {p.b} | " + " | ".join(marks) + f" | {p.share:.1f} | {p.tokens} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", default=",".join(ALL), help="comma-separated, of: " + ", ".join(ALL))
    parser.add_argument("--from", dest="sources", help="only these tools as A (default: --tools)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--no-checkpoint", action="store_true", help="A's model saves no checkpoint: capture only")
    parser.add_argument("--rescore", type=Path, help="score the blocks saved in this results file again; run nothing")
    args = parser.parse_args()
    if args.rescore:
        pairs = [Pair(**p) for p in json.loads(args.rescore.read_text(encoding="utf-8"))]
        for p in pairs:
            if not p.error:
                p.carried, p.tokens, p.blocks = score(p.injected)
                p.share = sum(p.carried.values()) / len(ITEMS)
        print(table(pairs))
        args.rescore.write_text(json.dumps([asdict(p) for p in pairs], indent=1) + "\n", encoding="utf-8")
        return
    tools = [t for t in args.tools.split(",") if t]
    sources = [t for t in (args.sources or args.tools).split(",") if t]
    factories = agents()
    unknown = sorted(set(tools + sources) - set(factories))
    if unknown:
        parser.error(f"unknown tools: {', '.join(unknown)}")
    pairs: list[Pair] = []
    for a in sources:
        pairs += run_from(a, [b for b in tools if b != a], factories, checkpoint_call=not args.no_checkpoint)
    print(table(pairs))
    if args.out:
        args.out.write_text(json.dumps([asdict(p) for p in pairs], indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
