"""Use detection scored again on a finished `bench_agent_view.py` run, without running the agents again: each
assistant's store is copied, what it recorded as used or contradicted is cleared (the exposures and their kept
cues stay), and every turn of the run's sessions is read again from OpenCode's database or Claude Code's
transcripts and handed to `capture.usage.observe_turn` in order, as capture did. Scored against the steps'
`uses` labels exactly as the benchmark scores it (bench_agent_view.use_detection).

    .venv/bin/python benchmarks/research/use_replay.py --results /tmp/run.json [--work DIR] [--data DIR] [--verbose]

`--request-context` replays a run recorded before an exposure's context was only the request's phrases (the
query's tool phrases, the agent's own recent calls, left out: operations/explain.py `asked`): each exposure's
context keeps only the phrases found in the session's user messages.

`--work` is the run's work folder (default benchmarks/.work/agent_view); `--results` its results JSON (the
sessions of each pass); `--data` the run's scenario (default data/agent_view). The run's requests.jsonl (the
steps each request answered) is read from the work folder.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import bench_agent_view as bench  # noqa: E402
from codememory.capture.hook_transcripts import read_session  # noqa: E402
from codememory.capture.opencode_db import OpenCodeDB  # noqa: E402
from codememory.capture.turns import Turn  # noqa: E402
from codememory.capture.usage import observe_turn  # noqa: E402
from codememory.store.database import Database  # noqa: E402

# the records' uses too: the replay writes them again (the shown counts stay, as the exposures do)
CLEAR_RECORDS = (
    "UPDATE memory_usefulness SET used = 0, used_total = 0, contradicted = 0, contradicted_total = 0, "
    "last_used_at = NULL, last_contradicted_at = NULL"
)
CLEAR = (
    "UPDATE memory_exposures SET used_at = NULL, used_by = NULL, evidence = NULL, contradicted_at = NULL, "
    "contradiction = NULL, cues = NULL"
)


def turns_of(assistant: str, home: Path, session_id: str) -> list[Turn]:
    if assistant == "opencode":
        with OpenCodeDB(next(home.rglob("opencode.db"))) as oc:
            return oc.turns(session_id)
    transcript = next(home.rglob(f"{session_id}.jsonl"))
    return read_session(transcript)[1]


def scripted_calls(requests: Path) -> list[dict[str, Any]]:
    """The run's requests with the step each answered (requests.jsonl keeps only its position): the pass counted
    from where the positions start again."""
    scenario = bench.load_scenario(None)
    out: list[dict[str, Any]] = []
    pass_index, last = 0, None
    for line in requests.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        at = tuple(row["at"]) if row["at"] else None
        step = None
        if at is not None:
            if last is not None and at < last:
                pass_index += 1
            last = at
            s, t, i = at
            step = {**scenario["sessions"][s]["turns"][t]["steps"][i], "at": list(at), "pass": pass_index}
        out.append({"step": step, "body": row["body"]})
    return out


def request_only(conn: sqlite3.Connection, asked_by_session: dict[str, str]) -> None:
    """Each exposure's context cut to the phrases its session's user messages hold (see --request-context)."""
    from codememory.text.privacy import scrub

    rows = conn.execute("SELECT rowid, session_id, context FROM memory_exposures WHERE context != ''").fetchall()
    for rowid, session_id, context in rows:
        said = " ".join(scrub(asked_by_session.get(session_id, "")).split())
        kept = [p for p in context.split("\n") if " ".join(p.split()).rstrip("…")[:80] in said]
        conn.execute("UPDATE memory_exposures SET context = ? WHERE rowid = ?", ("\n".join(kept), rowid))


def replay(
    assistant: str,
    work: Path,
    sessions: list[dict[str, Any]],
    save: Path | None = None,
    request_context: bool = False,
) -> dict[str, Any]:
    base = work / assistant
    calls = scripted_calls(base / "requests.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        (project / ".codememory").mkdir(parents=True)
        shutil.copy(base / "project" / ".codememory" / "memory.db", project / ".codememory" / "memory.db")
        conn = sqlite3.connect(project / ".codememory" / "memory.db")
        conn.execute(CLEAR)
        conn.execute(CLEAR_RECORDS)
        if request_context:
            asked = {
                str(sess["session_id"]): " ".join(
                    t.user_text for t in turns_of(assistant, base / "home", str(sess["session_id"]))
                )
                for sess in sessions
            }
            request_only(conn, asked)
        conn.commit()
        conn.close()
        db = Database.open(project / ".codememory" / "memory.db")
        try:
            for sess in sorted(sessions, key=lambda s: (s["pass"], s["index"])):
                for turn in turns_of(assistant, base / "home", str(sess["session_id"])):
                    observe_turn(db, turn)
        finally:
            db.close()
        if save is not None:  # the store with the record this detection writes, for research/hud_replay.py --feedback
            save.mkdir(parents=True, exist_ok=True)
            shutil.copy(project / ".codememory" / "memory.db", save / f"{assistant}-memory.db")
        return bench.use_detection(calls, sessions, project)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=bench.WORK)
    parser.add_argument("--data", type=Path, default=bench.DATA, help="the run's scenario (default: %(default)s)")
    parser.add_argument("--verbose", action="store_true", help="list every false alarm and miss")
    parser.add_argument("--only-pass", type=int, help="score the sessions of this pass only (0: the first)")
    parser.add_argument("--request-context", action="store_true", help="exposure contexts: the request's phrases")
    parser.add_argument("--save", type=Path, help="keep each assistant's replayed store here (<assistant>-memory.db)")
    args = parser.parse_args()
    results = json.loads(args.results.read_text(encoding="utf-8"))
    bench.DATA = args.data.resolve()  # the steps' labels and the scenario's memory ids
    for assistant in ("opencode", "claude"):
        if assistant not in results or not (args.work / assistant / "requests.jsonl").exists():
            continue
        sessions = [s for s in results[assistant]["sessions"] if args.only_pass in (None, s["pass"])]
        use = replay(assistant, args.work, sessions, args.save, args.request_context)
        keys = ("pairs", "true_uses", "predicted_uses", "true_positives", "precision", "recall")
        print(assistant, {k: use[k] for k in keys}, use["by_signal"], use["scenario_memories_only"])
        if args.verbose:
            pass_of = {s["session_id"]: s["pass"] for s in results[assistant]["sessions"]}
            for p in use["false_positives"]:
                print("  false alarm", pass_of[p["session_id"]], p["memory_id"], p["first_step"], p["evidence"])
            for p in use["false_negatives"]:
                print("  miss", pass_of[p["session_id"]], p["memory_id"], p["first_step"], p.get("kind"))


if __name__ == "__main__":
    main()
