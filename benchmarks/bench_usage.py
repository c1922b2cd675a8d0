"""What use detection costs: per captured turn (capture/usage.py, reading the turn against what its session was
shown) and per injection (operations/explain.py, recording what was shown), in a store of 10,000 memories.

    .venv/bin/python benchmarks/bench_usage.py                 # 10,000 memories, 200 sessions
    .venv/bin/python benchmarks/bench_usage.py --memories 1000 --sessions 50

The store is a fresh project with `--memories` synthetic memories (benchmarks/synthetic.py, imported as
`codememory import` does, keyword-only). Each session is shown memories as the HUD shows them: `--calls` injections
of up to five memories each, found by `Store.retrieve` for phrases taken from random memories (so the exposures
have real query contexts), then `--turns` turns are captured through `write_turn`, the path every capture source
takes. Each turn has five tool calls (a read, an edit whose added lines hold terms of some shown memories and of
others, a shell command, a search and an unrelated read), except each session's first, which asks a question: it
only looks (a read of a shown memory's path, a search for one of its terms, an unrelated read) and then answers in
the words of some shown memories and of others (the answer is read for the memories the looks found).

Measured per turn, alternating in the same process: `observe_turn` alone (the use signals) and the whole
`write_turn` of a copy of the turn (its daily-log append, its row, and the use signals again, by then mostly
settled); per injection: `record_injection` with a session (ledger row, exposures and the cues kept with the ones
new to the session) and the same injection without a session (the ledger row alone): their difference is what use
tracking adds to an injection. The figures are milliseconds on this machine, both sides measured in this run.
Everything is read cold: the in-process cue cache is cleared before every turn and injection, as a hook process
(which starts afresh) has it.

Writes benchmarks/results-usage.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_core import log, machine, pct  # noqa: E402
from codememory.capture import exposure_cues, usage  # noqa: E402
from codememory.capture.daily_log import MEMORY_DIR, DailyLog  # noqa: E402
from codememory.capture.opencode import write_turn  # noqa: E402
from codememory.capture.turns import SessionInfo, ToolCall, Turn  # noqa: E402
from codememory.core.dates import now_iso  # noqa: E402
from codememory.core.project import store_dir  # noqa: E402
from codememory.operations.explain import record_injection  # noqa: E402
from codememory.service.project_store import Store  # noqa: E402
from codememory.store.capture import CaptureTables  # noqa: E402
from codememory.text.usage_cues import memory_terms  # noqa: E402
from synthetic import generate  # noqa: E402

RESULTS = HERE / "results-usage.json"


def cold() -> None:
    """Every in-process cache of use detection emptied, as a hook process (which starts afresh) has them (the ones
    this checkout has: the script also runs against older trees)."""
    from codememory.text import usage_cues

    exposure_cues._text_cues.cache_clear()
    for name in ("_phrase_words", "_added_words", "_added_grams"):
        cached = getattr(usage_cues, name, None)
        if cached is not None:
            cached.cache_clear()
    try:
        from codememory.text.answer_cues import prose_values
    except ImportError:  # an older tree
        return
    prose_values.cache_clear()


def stats(ms: list[float]) -> dict[str, float]:
    return {
        "n": len(ms),
        "p50": round(pct(ms, 50), 3),
        "p95": round(pct(ms, 95), 3),
        "max": round(max(ms), 3),
        "mean": round(statistics.fmean(ms), 3),
    }


def make_store(root: Path, n: int) -> Store:
    (root / "config").mkdir(parents=True)
    (root / "config" / "codememory").mkdir()
    (root / "config" / "codememory" / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    project = root / "project"
    project.mkdir()
    store, _ = Store.init(project)
    data = root / "memories.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in generate(n, seed=29)), encoding="utf-8")
    started = time.perf_counter()
    report = store.import_(data)
    log(f"imported {report.added} memories in {time.perf_counter() - started:.1f} s")
    return store


def tool_calls(rng: random.Random, shown: list[str], others: list[str], at: str) -> tuple[ToolCall, ...]:
    """A turn's tool calls: terms of some shown memories and of some others in the edit, the rest plain."""
    used = [t for text in rng.sample(shown, min(2, len(shown))) for t in memory_terms(text)[:2]]
    noise = [t for text in rng.sample(others, 3) for t in memory_terms(text)[:1]]
    added = "\n".join(f"value = {t.text!r}" for t in [*used, *noise]) or "value = 1"
    return (
        ToolCall("read", "c1", "completed", {"filePath": "/w/project/src/app/main.py"}, "x" * 2000, started_at=at),
        ToolCall(
            "edit",
            "c2",
            "completed",
            {"filePath": "/w/project/src/app/service.py", "oldString": "pass", "newString": f"pass\n{added}"},
            "ok",
            started_at=at,
        ),
        ToolCall("bash", "c3", "completed", {"command": "pytest -q tests/ && git status"}, "ok\n" * 50, started_at=at),
        ToolCall("grep", "c4", "completed", {"pattern": "retry", "path": "src"}, "src/a.py:1: retry", started_at=at),
        ToolCall("read", "c5", "completed", {"filePath": "/w/project/README.md"}, "y" * 500, started_at=at),
    )


def question(
    rng: random.Random, session: str, others: list[str], at: str, store: Store
) -> tuple[tuple[ToolCall, ...], str]:
    """A turn that only looks (the path and a term of the memory shown to the session with the most terms) and
    answers in the terms of it and of another shown memory (as kept with their exposures) and of others."""

    def kept(cues: str | None) -> list[str]:
        terms = json.loads(cues or "{}").get("terms", [])
        return [t for t, kind in terms if kind not in ("phrase", "commit")]

    exposures = store.db.session_exposures(session)
    richest = max(exposures, key=lambda e: len(kept(e.cues)), default=None)  # the one the read looks up
    said = [t for e in [richest, *rng.sample(exposures, min(1, len(exposures)))] if e for t in kept(e.cues)]
    found = exposure_cues.memory_cues(store.db, others)
    noise = [c.terms[0].text for c in found.values() if c.terms and c.terms[0].kind != "phrase"]
    first = said[0] if said else "main.py"
    calls = (
        ToolCall("read", "c1", "completed", {"filePath": f"/w/project/src/{first}"}, "z" * 2000, started_at=at),
        ToolCall("grep", "c2", "completed", {"pattern": first, "path": "src"}, "src/a.py:1: x", started_at=at),
        ToolCall("read", "c3", "completed", {"filePath": "/w/project/README.md"}, "y" * 500, started_at=at),
    )
    return calls, "It is " + ", ".join([*said, *noise]) + ", as the code says."


def run(n_memories: int, n_sessions: int, calls: int, turns: int) -> dict[str, Any]:
    rng = random.Random(29)
    tmp = Path(tempfile.mkdtemp(prefix="bench-usage-"))
    import os

    os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")
    os.environ["XDG_STATE_HOME"] = str(tmp / "state")
    try:
        store = make_store(tmp, n_memories)
        texts = {m.id: m.text for _pk, m in store.db.get_by_ids([r["id"] for r in generate(n_memories, seed=29)])}
        ids = list(texts)
        tables = CaptureTables(store.db)
        log_folder = DailyLog(store_dir(store.root) / MEMORY_DIR, root=store.root)
        inject_ms: list[float] = []
        ledger_ms: list[float] = []
        turn_ms: list[float] = []
        observe_ms: list[float] = []
        # the same, as the CPU time of this thread: what the work costs, without the waits for a core that a loaded
        # machine adds to the wall-clock tails
        inject_cpu: list[float] = []
        ledger_cpu: list[float] = []
        observe_cpu: list[float] = []
        exposures = 0
        for s in range(n_sessions):
            session = f"ses_bench_{s:04d}"
            shown: list[str] = []
            for _ in range(calls):
                phrase = " ".join(texts[rng.choice(ids)].split()[:6])
                found = store.retrieve([phrase], max_memories=5, touch=False).memories
                memories = [m.to_dict() for m in found]
                if not memories:
                    continue
                cold()  # as in a hook process
                started, cpu = time.perf_counter(), time.thread_time()
                record_injection(store, kind="hud", memories=memories, query=[phrase], session_id=session)
                inject_ms.append((time.perf_counter() - started) * 1000)
                inject_cpu.append((time.thread_time() - cpu) * 1000)
                started, cpu = time.perf_counter(), time.thread_time()  # without a session: the ledger row alone
                record_injection(store, kind="hud", memories=memories, query=[phrase], session_id=None)
                ledger_ms.append((time.perf_counter() - started) * 1000)
                ledger_cpu.append((time.thread_time() - cpu) * 1000)
                shown += [m["id"] for m in memories]
            exposures += len(set(shown))
            for t in range(turns):
                at = now_iso()
                seen = [texts[i] for i in shown] or ["-"]
                other_ids = [rng.choice(ids) for _ in range(3)]
                answer = "done"
                if t == 0 and shown:
                    calls_made, answer = question(rng, session, other_ids, at, store)
                else:
                    calls_made = tool_calls(rng, seen, [texts[i] for i in other_ids], at)
                turn = Turn("opencode", session, f"{session}-t{t}", t + 1, at, at, "bench turn", (answer,), calls_made)
                info = SessionInfo("opencode", session, str(store.root), None, at, at)
                cold()  # as in a hook process
                started, cpu = time.perf_counter(), time.thread_time()
                usage.observe_turn(store.db, turn)
                observe_ms.append((time.perf_counter() - started) * 1000)
                observe_cpu.append((time.thread_time() - cpu) * 1000)
                cold()
                other = Turn(turn.source, turn.session_id, turn.turn_id + "b", turn.seq, at, at, "bench turn",
                             assistant_texts=turn.assistant_texts, tool_calls=turn.tool_calls)  # fmt: skip
                started = time.perf_counter()
                write_turn(tables, log_folder, info, other, now_iso())
                turn_ms.append((time.perf_counter() - started) * 1000)
        signals = dict(store.db.conn.execute("SELECT used_by, count(*) FROM memory_exposures GROUP BY used_by"))
        store.close()
        return {
            "memories": n_memories,
            "sessions": n_sessions,
            "exposures": exposures,
            "used_by": {str(k): v for k, v in signals.items()},  # the signals the turns gave
            "per_turn": {
                "observe_turn_ms": stats(observe_ms),
                "observe_turn_cpu_ms": stats(observe_cpu),
                "write_turn_ms": stats(turn_ms),
                "observe_share_of_write_turn_p50": round(pct(observe_ms, 50) / pct(turn_ms, 50), 3),
            },
            "per_injection": {
                "record_injection_ms": stats(inject_ms),
                "without_session_ms": stats(ledger_ms),
                "added_p50_ms": round(pct(inject_ms, 50) - pct(ledger_ms, 50), 3),
                "added_p95_ms": round(pct(inject_ms, 95) - pct(ledger_ms, 95), 3),
                "record_injection_cpu_ms": stats(inject_cpu),
                "without_session_cpu_ms": stats(ledger_cpu),
                "added_cpu_ms": stats([a - b for a, b in zip(inject_cpu, ledger_cpu, strict=True)]),
            },
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--calls", type=int, default=6, help="injections per session")
    parser.add_argument("--turns", type=int, default=3, help="captured turns per session")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    result = {"machine": machine(), **run(args.memories, args.sessions, args.calls, args.turns)}
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    turn, inj = result["per_turn"], result["per_injection"]
    print(
        f"{result['memories']} memories, {result['sessions']} sessions, {result['exposures']} exposures, "
        f"used by {result['used_by']}\n"
        f"use signals per captured turn (observe_turn): p50 {turn['observe_turn_ms']['p50']} ms, "
        f"p95 {turn['observe_turn_ms']['p95']} ms, max {turn['observe_turn_ms']['max']} ms "
        f"(the whole write_turn: p50 {turn['write_turn_ms']['p50']} ms)\n"
        f"record_injection with a session: p50 {inj['record_injection_ms']['p50']} ms, without one (the ledger row "
        f"alone) p50 {inj['without_session_ms']['p50']} ms: use tracking adds {inj['added_p50_ms']} ms at p50, "
        f"{inj['added_p95_ms']} ms at p95\n"
        f"CPU time: per turn p50 {turn['observe_turn_cpu_ms']['p50']} / p95 {turn['observe_turn_cpu_ms']['p95']} ms; "
        f"added per injection (each injection's own difference) p50 {inj['added_cpu_ms']['p50']} / "
        f"p95 {inj['added_cpu_ms']['p95']} ms"
    )


if __name__ == "__main__":
    main()
