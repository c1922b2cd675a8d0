"""Benchmark of capture and extraction (issue 4):

1. **Turn -> daily log**: a real daemon (`codememory daemon run`) polls OpenCode's database every
   `--poll` seconds (default 10, the shipped default) while the real `opencode` binary, talking to a
   scripted model, runs `--turns` one-turn sessions one after another. For each turn: the time from
   the moment OpenCode marked the answer complete (`time.completed` of its last assistant message, i.e.
   the turn's `ended_at`) to the moment the daemon recorded it (`captured_turns.captured_at`, written
   after the daily-log entry). Expected: about half the poll interval on average, at most one interval
   plus the pass time.
2. **Extraction throughput**: `--sessions` (default 100) recorded sessions, replayed through
   `extract_session` into a fresh store, with the heuristic extractor (no LLM) and with an
   OpenAI-compatible scripted model on 127.0.0.1 that answers instantly (so the figure is our own
   overhead: rendering, windowing, validation, dedup, storage, spend records). The sessions are
   recorded once from real OpenCode runs (a plain turn, a turn with bash and write tool calls, a
   decision, a Remember note, a todo list), then replayed with distinct session ids and texts.

    python benchmarks/bench_ingest.py [--poll 10] [--turns 6] [--sessions 100] [--out results.json]

Needs the opencode binary (`npm ci --prefix integrations/opencode`). Work files go to
benchmarks/.work/ingest/ (gitignored).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_core import log, machine  # noqa: E402
from codememory.capture.opencode_db import OpenCodeDB  # noqa: E402
from codememory.capture.turns import SessionInfo, Turn  # noqa: E402
from codememory.core.dates import from_iso  # noqa: E402
from codememory.extract import OpenAICompatible, extract_session  # noqa: E402
from codememory.service.project_store import Store  # noqa: E402
from codememory.store.capture import CaptureTables  # noqa: E402
from support.daemon import isolated_env  # noqa: E402
from support.opencode import OpenCodeHome, make_git_project  # noqa: E402
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, is_title_request  # noqa: E402

WORK = HERE / ".work" / "ingest"
PY = sys.executable


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def env_for(base: Path, db: Path) -> dict[str, str]:
    return isolated_env(base, OPENCODE_DB=str(db))


# ------------------------------------------------------------------------------------- capture lag
def capture_lag(poll: float, turns: int) -> dict[str, Any]:
    base = WORK / f"lag-{poll:g}"
    shutil.rmtree(base, ignore_errors=True)
    project = make_git_project(base / "project")
    Store.init(project)[0].close()
    (project / ".codememory" / "config.toml").write_text("[capture]\nidle_after = 86400\n")
    replies = [Reply(f"Answer number {i}.") for i in range(turns)]
    with ScriptedLLM(Script(replies)) as llm:
        oc = OpenCodeHome(base / "oc", llm.base_url)
        oc.run(project, "warm up")  # creates OpenCode's database before the daemon starts
        env = env_for(base, oc.db_path)
        config = base / "config" / "codememory" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f"[capture]\npoll_interval = {poll}\n")
        daemon = subprocess.Popen(
            [PY, "-m", "codememory.daemon", "run", "--port", "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for i in range(turns):
                oc.run(project, f"question {i}")
            deadline = time.monotonic() + poll * 2 + 30
            while time.monotonic() < deadline:
                with Store.open(project) as store:
                    rows = CaptureTables(store.db).turns("opencode")
                if len(rows) >= turns + 1:
                    break
                time.sleep(0.1)
        finally:
            daemon.terminate()
            daemon.wait(30)
    lags = [(from_iso(r.captured_at) - from_iso(r.ended_at or r.started_at)).total_seconds() for r in rows[1:]]
    return {
        "poll_interval_s": poll,
        "turns": len(lags),
        "lag_p50_s": round(statistics.median(lags), 2),
        "lag_max_s": round(max(lags), 2),
        "lag_mean_s": round(statistics.mean(lags), 2),
        "lags_s": [round(x, 2) for x in lags],
    }


# ------------------------------------------------------------------------------------- extraction
def record_sessions() -> list[tuple[SessionInfo, list[Turn]]]:
    base = WORK / "recorded"
    shutil.rmtree(base, ignore_errors=True)
    project = make_git_project(base / "project")
    todos = [{"content": "wire the cache into the API", "status": "pending", "priority": "high", "id": "1"}]
    script = Script(
        [
            Reply("Agreed. *Remember*: run `make migrate` before the integration tests."),
            Reply(tool_calls=[ToolCallSpec("todowrite", {"todos": todos})]),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "pytest -q tests/", "description": "run tests"})]),
            Reply(tool_calls=[ToolCallSpec("write", {"filePath": str(project / "cache.py"), "content": "X = 1\n"})]),
            Reply("Tests pass; cache.py written. Don't call the API without the retry wrapper."),
            Reply("We should prefer httpx over requests for async calls."),
        ]
    )
    with ScriptedLLM(script) as llm:
        oc = OpenCodeHome(base / "oc", llm.base_url)
        first = oc.run(project, "We decided to use SQLite instead of Postgres for the cache.").session_id
        oc.run(project, "write the cache and run the tests", session=first)
        second = oc.run(project, "which http client for async calls?").session_id
        out = []
        with OpenCodeDB(oc.db_path) as reader:
            for sid in (first, second):
                info = reader.session(sid or "")
                assert info is not None
                out.append((info, reader.turns(info.session_id)))
    return out


def replay(recorded: list[tuple[SessionInfo, list[Turn]]], n: int) -> list[tuple[SessionInfo, list[Turn]]]:
    sessions = []
    for i in range(n):
        info, turns = recorded[i % len(recorded)]
        sid = f"{info.session_id}-{i:03d}"
        new_turns = [
            replace(t, session_id=sid, user_text=f"{t.user_text} (session {i})", turn_id=f"{t.turn_id}-{i:03d}")
            for t in turns
        ]
        sessions.append((replace(info, session_id=sid), new_turns))
    return sessions


class InstantModel:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.calls += 1
        system = " ".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system")
        if is_title_request(body) or "memories" not in system.lower():
            return Reply("Ran the test suite.")
        memories = [
            {"text": f"Memory {self.calls} about the cache decision.", "category": "decision", "importance": 0.7},
            {
                "text": f"Gotcha {self.calls}: call the API through the retry wrapper.",
                "category": "gotcha",
                "importance": 0.6,
            },
        ]
        return Reply(json.dumps({"memories": memories}), usage={"prompt_tokens": 900, "completion_tokens": 80})


def throughput(sessions: list[tuple[SessionInfo, list[Turn]]], arm: str) -> dict[str, Any]:
    base = WORK / f"extract-{arm}"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    store, _ = Store.init(base)
    model = InstantModel()
    created = 0
    with store, ScriptedLLM(model) as llm:
        provider = OpenAICompatible(llm.base_url, "scripted") if arm == "llm" else None
        start = time.perf_counter()
        per: list[float] = []
        for info, turns in sessions:
            t0 = time.perf_counter()
            report = extract_session(store, info, turns, provider=provider)
            per.append(time.perf_counter() - t0)
            created += len(report.created_ids)
        total = time.perf_counter() - start
    return {
        "arm": arm,
        "sessions": len(sessions),
        "turns": sum(len(t) for _, t in sessions),
        "seconds": round(total, 2),
        "sessions_per_s": round(len(sessions) / total, 1),
        "ms_per_session_p50": round(statistics.median(per) * 1000, 1),
        "ms_per_session_p95": round(pct(per, 0.95) * 1000, 1),
        "memories_created": created,
        "model_requests": model.calls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--poll", type=float, action="append", help="daemon poll interval(s), seconds (default 10)")
    parser.add_argument("--turns", type=int, default=6, help="turns measured per poll interval")
    parser.add_argument("--sessions", type=int, default=100, help="sessions replayed through extraction")
    parser.add_argument("--out", help="also write the results as JSON to this file")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"machine": machine()}
    log("recording sessions with the real opencode binary")
    sessions = replay(record_sessions(), args.sessions)
    results["extraction"] = [throughput(sessions, arm) for arm in ("heuristic", "llm")]
    for row in results["extraction"]:
        log(json.dumps(row))
    results["capture_lag"] = []
    for poll in args.poll or [10.0]:
        log(f"capture lag, poll every {poll:g} s, {args.turns} turns")
        row = capture_lag(poll, args.turns)
        results["capture_lag"].append(row)
        log(json.dumps(row))
    text = json.dumps(results, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
