"""The HUD before and after feedback: does what agents did with the memories they were shown (the usefulness record,
retrieval/usefulness.py) raise the HUD's precision at equal recall? Per released agent-view set, with the record's
setting chosen with each set left out.

    # once per set: one pass of real OpenCode sessions against the scripted model (bench_agent_view.py), each turn
    # captured as the daemon captures it, so the store holds the record the product itself wrote from what the
    # sessions did (captured turns, their tool calls: capture/usage.py), not one made from the labels
    .venv/bin/python benchmarks/bench_agent_view.py --only opencode --hud-wait-ms 3000 \\
        --data benchmarks/data/S --work W/av_S --out W/S.json
    # then every HUD request of that pass asked again of the run's store, as a new session asks it
    .venv/bin/python benchmarks/bench_hud_feedback.py --runs W [--sets agent_view,agent_view_judge ...] --out F.json

"Before" is the record's weight at 0: ranking as if no agent had ever been shown anything (retrieval/usefulness.py
`factors` gives nothing at weight 0, which is exactly a store with no record). "After" is each setting of the record
(`[usefulness] weight` and the sink's depth, `MAX_SINK`), with the record of every session of the pass: the same
steps run again in a later session. Each traced /retrieve request is sent again through `Store.retrieve` (the
daemon's code path) with the run's pins, step and request_carried, the plugin's turn block rebuilt as the plugin
builds it (the first call of a turn keeps its first TURN_BLOCK memories for the turn; later calls add what their
step brings), and scored as bench_agent_view.py scores the HUD: precision (mean over calls with a HUD, and micro)
and recall (mean over the calls labelled with memories, no HUD = 0) against the steps' labels. The replay at weight
0 is set beside the live run's own figures (`live`) to show how close the replay is to it.

Left out: for each set, the setting is chosen on the other sets (the one that raises their mean precision most
without lowering their mean recall; none if none does) and that set's before and after are reported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SETS = ("agent_view", *(f"agent_view_judge{n}" for n in ("", 2, 3, 4, 5, 6, 7, 8)))
TURN_BLOCK = 2  # the plugin's turnBlockMemories default: what a turn's first answer keeps for the turn
REPLAY_SESSION = "ses_feedback_replay"  # a session that was shown nothing: every earlier session's record counts
WHY: dict[str, list[dict[str, Any]]] | None = None  # when set: each shown memory's `why`, per showing
WITH_STORED = False  # --with-stored: keep what the sessions stored, as a real later pass would have it
# (weight, MAX_SINK, proactive.ENTITY_ONLY_SINK_BAR): weight 0 is "before"; shipped: (0.5, 0.35, 0.0), until
# 2026-11-28 (1.0, 0.35, 0.0). At weight 1 an entity bar of 0.87 takes an entity-only candidate out after two
# sessions shown it and none used it, 0.83 after three.
SETTINGS = (
    (0.0, 0.35, 0.0),
    (0.5, 0.35, 0.0),
    (1.0, 0.35, 0.0),
    (1.0, 0.5, 0.0),
    (1.0, 0.65, 0.0),
    (1.0, 0.35, 0.87),
    (1.0, 0.35, 0.83),
)


def load_run(run: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str], dict[str, Any]]:
    """(the plugin's trace in order, the live run's per-call results, the scenario's memory ids) of one set's run
    folder."""
    trace = [json.loads(line) for line in (run / "opencode" / "plugin-trace.jsonl").read_text().splitlines() if line]
    results = json.loads((run.parent / f"{run.name.removeprefix('av_')}.json").read_text(encoding="utf-8"))
    data = HERE.parent / results["scenario"]["data"]
    ids = {
        json.loads(line)["id"] for line in (data / "memories.jsonl").read_text(encoding="utf-8").splitlines() if line
    }
    return trace, results["opencode"]["calls"], ids, results


def pair(trace: list[dict[str, Any]], calls: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[str], dict]]:
    """Each model call's trace entries (the cold start's `system` entry before it, its `messages` entry) with the
    call's live result. The plugin traces one `messages` entry per model call it sees."""
    entries: list[tuple[dict[str, Any], list[str]]] = []
    cold: dict[str, list[str]] = {}
    for t in trace:
        if t.get("hook") == "system" and "cold" in t and isinstance(t["cold"], list):
            cold[t["sessionID"]] = t["cold"]
        elif t.get("hook") == "messages":
            entries.append((t, cold.pop(t.get("sessionID", ""), [])))
    if len(entries) != len(calls):
        scripted = [c for c in calls if c["at"] is not None]
        if len(entries) != len(scripted):
            sys.exit(f"{len(entries)} traced model calls for {len(calls)} calls: cannot pair them")
        calls = scripted
    return [(t, cold_ids, c) for (t, cold_ids), c in zip(entries, calls, strict=True)]


class Session:
    def __init__(self) -> None:
        self.turn: list[str] = []  # the turn block's memories
        self.pinned: list[str] = []
        self.carried: set[str] = set()  # ids the conversation carries (tool results), as the live requests said


def replay(
    store: Any,
    paired: list[tuple[dict[str, Any], list[str], dict[str, Any]]],
    stored: Sequence[str] = (),
    feedback: Feedback | None = None,
) -> list[list[str]]:
    """What the HUD shows at each call, the run's requests asked again of `store` as it is now set; `stored`: the
    memories the run's sessions stored (memory_store), left out: no label can name them, and the live requests were
    made before they existed. With `feedback`, what each call showed and each turn the session then made are
    recorded as the product records them (see Feedback)."""
    from codememory.retrieval.step import step_from_call

    sessions: dict[str, Session] = {}
    shown_per_call: list[list[str]] = []
    for index, (t, cold_ids, call) in enumerate(paired):
        if feedback is not None:
            feedback.before_call(call, cold_ids, t.get("sessionID", ""))
        shown_per_call.append(_one_call(store, t, cold_ids, sessions, stored, feedback, step_from_call))
        if feedback is not None:
            feedback.after_call(call, shown_per_call[-1], t, paired[index + 1][2] if index + 1 < len(paired) else None)
    return shown_per_call


def _one_call(
    store: Any,
    t: dict[str, Any],
    cold_ids: list[str],
    sessions: dict[str, Session],
    stored: Sequence[str],
    feedback: Feedback | None,
    step_from_call: Any,
) -> list[str]:
    """What the HUD shows at one call (the plugin's state per session in `sessions`)."""
    s = sessions.setdefault(t.get("sessionID", ""), Session())
    request = t.get("request")
    planned = "kept" in t
    if isinstance(request, dict):
        live_exclude = set(request.get("exclude_memory_ids") or [])
        s.carried |= live_exclude - set(t.get("turn") or []) - set(cold_ids)
    if planned:
        s.turn = []
    if not isinstance(request, dict):
        return [] if planned else [i for i in s.turn if i not in s.carried]
    turn_now = [] if planned else [i for i in s.turn if i not in s.carried]
    exclude = list(dict.fromkeys([*(cold_ids if not planned else []), *turn_now, *sorted(s.carried), *stored]))
    step = request.get("step")
    result = store.retrieve(
        request["query_expansion"],
        entities=request.get("entities") or [],
        pinned=s.pinned,
        exclude=exclude,
        max_memories=request.get("max_memories", 4),
        max_new=request.get("max_new", 3),
        token_budget=request.get("token_budget", 1500),
        touch=False,
        session_id=REPLAY_SESSION if feedback is None else feedback.session_of(t.get("sessionID", "")),
        step=step_from_call(**step, root=str(store.root)) if isinstance(step, dict) else None,
        request_phrases=request.get("request_phrases", 1),
        request_carried=bool(request.get("request_carried")),
    )
    answer = [m.id for m in result.memories if m.id not in exclude]
    if WHY is not None:
        for m in result.memories:
            WHY.setdefault(m.id, []).append(m.why)
    if planned:
        # the plugin keeps the cold start's memories and the first TURN_BLOCK others; the cold start shows its own
        kept = [i for i in answer if i not in cold_ids][:TURN_BLOCK]
        s.turn = [i for i in answer if i in cold_ids or i in kept]
        s.pinned = s.turn
        return kept
    s.pinned = answer
    return list(dict.fromkeys([*turn_now, *answer]))


class Feedback:
    """A replayed pass recorded as the product records a live one, so that the next pass ranks with it: what each
    call showed becomes the ledger's exposures of the pass's session (store/usage.py `record_shown`, with the cues
    the ledger keeps), dated just before the tool calls its step made; and after each turn, the turn the live
    session made (read back from OpenCode's database, the same captured turn, re-dated and under this pass's session
    id) goes through the use detection (capture/usage.py `observe_turn`), as capture hands it every turn. The
    scripted agent does the same steps whatever it is shown, so a live pass would capture the same turns."""

    def __init__(self, store: Any, turns: dict[str, list[Any]], steps: dict[str, Any], pass_index: int) -> None:
        from datetime import UTC, datetime, timedelta

        self.store, self.turns, self.steps, self.pass_index = store, turns, steps, pass_index
        self.clock = datetime.now(UTC) - timedelta(days=2) + timedelta(hours=pass_index)
        self.calls: list[Any] = []  # the current turn's tool calls, re-dated
        self.turn_start: str | None = None

    def tick(self) -> str:
        from datetime import timedelta

        from codememory.core.dates import to_iso

        self.clock += timedelta(seconds=1)
        return str(to_iso(self.clock))

    def session_of(self, live: str) -> str:
        return f"ses_pass{self.pass_index}_{live}"

    def before_call(self, call: dict[str, Any], cold_ids: list[str], live: str) -> None:
        from codememory.capture.exposure_cues import exposure_cues
        from codememory.store.usage import Shown

        self.turn_start = self.turn_start or self.tick()
        if cold_ids:  # the session's cold start, shown as it was live (the record does not choose it)
            self.store.db.record_shown(
                at=self.tick(),
                source="opencode",
                session_id=self.session_of(live),
                kind="cold_start",
                memories=[Shown(m) for m in cold_ids],
                context="",
                cues_of=lambda ids, ctx: exposure_cues(self.store.db, ids, ctx),
            )

    def after_call(
        self, call: dict[str, Any], shown: list[str], t: dict[str, Any], following: dict[str, Any] | None
    ) -> None:
        from dataclasses import replace

        from codememory.capture.exposure_cues import exposure_cues
        from codememory.capture.usage import observe_turn
        from codememory.store.usage import Shown

        live, at = t.get("sessionID", ""), call["at"]
        request = t.get("request") if isinstance(t.get("request"), dict) else {}
        when = self.tick()
        if shown:
            self.store.db.record_shown(
                at=when,
                source="opencode",
                session_id=self.session_of(live),
                kind="hud",
                memories=[Shown(m) for m in shown],
                context="\n".join((request.get("query_expansion") or [])[:8]),
                cues_of=lambda ids, ctx: exposure_cues(self.store.db, ids, ctx),
            )
        if at is None:
            return
        s_i, t_i, i = at
        made = len(self.steps["sessions"][s_i]["turns"][t_i]["steps"][i].get("tool_calls") or [])
        turn = self._turn(live, t_i)
        for tool_call in (turn.tool_calls if turn else ())[len(self.calls) : len(self.calls) + made]:
            self.calls.append(replace(tool_call, started_at=self.tick()))
        if turn is not None and (following is None or following["at"] is None or following["at"][:2] != at[:2]):
            rest = [replace(c, started_at=self.tick()) for c in turn.tool_calls[len(self.calls) :]]
            calls = (*self.calls, *rest)
            observe_turn(
                self.store.db,
                replace(turn, session_id=self.session_of(live), turn_id=f"{turn.turn_id}_p{self.pass_index}",
                        started_at=self.turn_start or when, ended_at=self.tick(), tool_calls=calls),
            )  # fmt: skip
            self.calls, self.turn_start = [], None

    def _turn(self, live: str, index: int) -> Any:
        turns = self.turns.get(live) or []
        return turns[index] if index < len(turns) else None


def score(shown: list[list[str]], labels: list[list[str] | None]) -> dict[str, Any]:
    """As bench_agent_view.summarise_opencode scores the HUD (labels None: an unscripted call, not scored)."""
    precisions, recalls, hits_all, shown_all = [], [], 0, 0
    for ids, relevant in zip(shown, labels, strict=True):
        if relevant is None:
            continue
        hits = len(set(ids) & set(relevant))
        if ids:
            precisions.append(hits / len(ids))
            hits_all, shown_all = hits_all + hits, shown_all + len(ids)
        if relevant:
            recalls.append(hits / len(relevant))
    return {
        "precision": round(statistics.fmean(precisions), 4) if precisions else None,
        "precision_micro": round(hits_all / shown_all, 4) if shown_all else None,
        "recall": round(statistics.fmean(recalls), 4) if recalls else None,
        "shown": shown_all,
        "calls_with_hud": len(precisions),
    }


def one_set(run: Path, settings: tuple[tuple[float, float, float], ...], passes: int) -> dict[str, Any]:
    """Pass 2 asks the run's requests again with the record the live pass left; each later pass with that and what
    the replayed passes before it recorded (Feedback). Each setting starts again from the live pass's store."""
    import sqlite3

    from codememory import Store
    from codememory.capture.opencode_db import OpenCodeDB
    from codememory.core.dates import now_iso
    from codememory.retrieval import proactive, usefulness

    trace, calls, scenario_ids, results = load_run(run)
    paired = pair(trace, calls)
    labels = [c["relevant"] if c["at"] is not None else None for _, _, c in paired]
    steps = json.loads((HERE.parent / results["scenario"]["data"] / "steps.json").read_text(encoding="utf-8"))
    live_sessions = [str(x["session_id"]) for x in results["opencode"]["sessions"]]
    with OpenCodeDB(next((run / "opencode" / "home").rglob("opencode.db"))) as oc:
        turns = {sid: oc.turns(sid) for sid in live_sessions}
    out: dict[str, Any] = {"calls": len(paired), "live": score([c["hud_ids"] for _, _, c in paired], labels)}
    out["settings"] = {}
    shipped = usefulness.MAX_SINK
    project = run / "opencode" / "project"
    db_file = project / ".codememory" / "memory.db"
    snapshot = run / "memory-live-pass.db"
    if not snapshot.exists():  # the live pass's store, kept: every setting starts from it
        with sqlite3.connect(db_file) as src, sqlite3.connect(snapshot) as dst:
            src.backup(dst)
    for weight, sink, bar in settings:
        with sqlite3.connect(snapshot) as src, sqlite3.connect(db_file) as dst:
            src.backup(dst)
        store = Store.open(project)
        try:
            every = [str(i) for (i,) in store.db.conn.execute("SELECT id FROM memories")]
            stored = [] if WITH_STORED else [m for m in every if m not in scenario_ids]
            out["stored_by_sessions"] = len([m for m in every if m not in scenario_ids])
            if "record" not in out:
                records = store.db.all_usefulness(now_iso())
                out["record"] = {
                    "memories": len(records),
                    "shown_sessions": sum(r.shown_total for r in records),
                    "used_sessions": sum(r.used_total for r in records),
                    "never_used": sum(1 for r in records if r.used_total == 0),
                }
            store.db.usage_weight = weight
            usefulness.MAX_SINK = sink
            proactive.ENTITY_ONLY_SINK_BAR = bar
            rows = []
            for p_index in range(2, passes + 1):
                started = time.perf_counter()
                feedback = Feedback(store, turns, steps, p_index) if p_index < passes else None
                global WHY
                WHY = {} if p_index == passes else None
                shown = replay(store, paired, stored, feedback)
                if WHY is not None:
                    out.setdefault("sunk_but_shown", {})[key(weight, sink, bar)] = sunk_but_shown(WHY)
                    WHY = None
                rows.append({**score(shown, labels), "seconds": round(time.perf_counter() - started, 1),
                             "shown_per_call": shown})  # fmt: skip
                print(run.name, key(weight, sink, bar), f"pass {p_index}", strip(rows[-1]), flush=True)
                if weight == 0.0:  # the record ignored: every pass is the same
                    rows += [rows[-1]] * (passes - p_index)
                    break
            out["settings"][key(weight, sink, bar)] = {"passes": rows, **rows[-1]}
        finally:
            usefulness.MAX_SINK, proactive.ENTITY_ONLY_SINK_BAR = shipped, 0.0
            store.close()
    with sqlite3.connect(snapshot) as src, sqlite3.connect(db_file) as dst:
        src.backup(dst)  # the run's store as the live pass left it
    base = out["settings"][key(*settings[0])]["shown_per_call"]
    for setting in out["settings"].values():
        setting["moved"] = moved(base, setting["shown_per_call"], labels)
    return out


def sunk_but_shown(why: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The memories the last pass still showed with a factor under 1 (agents kept not using them), and why they
    stayed: the retriever that found them, their likelihood, their factor."""
    out = {}
    for mid, whys in why.items():
        sunk = [w for w in whys if (w.get("usefulness") or {}).get("factor", 1.0) < 1.0]
        if sunk:
            w = sunk[-1]
            out[mid] = {"times": len(sunk), "retriever": w.get("retriever"), "likelihood": w.get("likelihood"),
                        "step": w.get("step"), "usefulness": w.get("usefulness")}  # fmt: skip
    return out


def moved(before: list[list[str]], after: list[list[str]], labels: list[list[str] | None]) -> dict[str, Any]:
    """What feedback changed, call by call: memories it took out of a call's HUD or put in, relevant to the call's
    step (by its labels) or not, and which memories."""
    out: dict[str, Any] = {"out_relevant": 0, "out_unneeded": 0, "in_relevant": 0, "in_unneeded": 0, "memories": {}}
    for b, a, relevant in zip(before, after, labels, strict=True):
        if relevant is None:
            continue
        for mid, way in [*((m, "out") for m in b if m not in a), *((m, "in") for m in a if m not in b)]:
            kind = "relevant" if mid in relevant else "unneeded"
            out[f"{way}_{kind}"] += 1
            out["memories"][f"{way} {mid}"] = out["memories"].get(f"{way} {mid}", 0) + 1
    return out


def key(weight: float, sink: float, bar: float) -> str:
    return f"weight {weight:g}, sink {sink:g}" + (f", entity bar {bar:g}" if bar else "")


def left_out(results: dict[str, dict[str, Any]], before: str) -> dict[str, dict[str, Any]]:
    """For each set, the setting the other sets choose: the largest rise of their mean precision (mean over sets of
    the per-call mean) among the settings that do not lower their mean recall; `before` (no feedback) if none
    rises."""
    out = {}
    for held in results:
        others = [results[s]["settings"] for s in results if s != held]

        def mean_of(setting: str, field: str, sets: list[dict[str, Any]] = others) -> float:
            return statistics.fmean(float(s[setting][field] or 0.0) for s in sets)

        best, gain = before, 0.0
        for setting in results[held]["settings"]:
            if setting == before or mean_of(setting, "recall") < mean_of(before, "recall") - 1e-9:
                continue
            rise = mean_of(setting, "precision") - mean_of(before, "precision")
            if rise > gain + 1e-9:
                best, gain = setting, rise
        b, a = results[held]["settings"][before], results[held]["settings"][best]
        out[held] = {"chosen": best, "others_gain": round(gain, 4), "before": strip(b), "after": strip(a)}
    return out


def strip(s: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in s.items() if k not in ("shown_per_call", "seconds", "passes", "moved")}


def fmt(s: dict[str, Any]) -> str:
    p, m, r = s["precision"], s["precision_micro"], s["recall"]
    return " / ".join("–" if v is None else f"{v:.3f}" for v in (p, m)) + f", {'–' if r is None else f'{r:.3f}'}"


def markdown(results: dict[str, dict[str, Any]], chosen: dict[str, dict[str, Any]], before: str) -> str:
    settings = list(next(iter(results.values()))["settings"])
    lines = [
        "| set (calls) | live run: P mean / micro, R | " + " | ".join(settings) + " |",
        "|---|---|" + "---|" * len(settings),
    ]
    for name, r in results.items():
        cells = [fmt(r["settings"][s]) + f" ({r['settings'][s]['shown']})" for s in settings]
        lines.append(f"| {name} ({r['calls']}) | {fmt(r['live'])} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| left out | chosen on the others | before: P mean / micro, R | after | moved |",
        "|---|---|---|---|---|",
    ]
    for name, c in chosen.items():
        b, a = c["before"], c["after"]
        moved = "none" if c["chosen"] == before else (
            f"P {a['precision'] - b['precision']:+.3f}, R {a['recall'] - b['recall']:+.3f}"
            if None not in (a["precision"], b["precision"], a["recall"], b["recall"]) else "?"
        )  # fmt: skip
        lines.append(f"| {name} | {c['chosen']} | {fmt(b)} | {fmt(a)} | {moved} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, required=True, help="the folder holding av_<set>/ and <set>.json per set")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated set names (default: every one)")
    parser.add_argument("--out", type=Path, help="results JSON")
    parser.add_argument("--passes", type=int, default=4, help="the last pass replayed (the live one is pass 1)")
    parser.add_argument("--with-stored", action="store_true", help="keep the memories the sessions stored")
    args = parser.parse_args()
    global WITH_STORED
    WITH_STORED = args.with_stored
    results = {}
    for name in args.sets.split(","):
        run = args.runs / f"av_{name}"
        if not (run / "opencode" / "plugin-trace.jsonl").exists() or not (args.runs / f"{name}.json").exists():
            print(f"{name}: no finished run in {args.runs}", file=sys.stderr)
            continue
        results[name] = one_set(run, SETTINGS, args.passes)
    before = key(*SETTINGS[0])
    chosen = left_out(results, before) if len(results) > 1 else {}
    if args.out:
        args.out.write_text(json.dumps({"sets": results, "left_out": chosen}, indent=1) + "\n", encoding="utf-8")
    print(markdown(results, chosen, before))


if __name__ == "__main__":
    main()
