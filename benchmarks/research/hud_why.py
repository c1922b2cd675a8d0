"""Why the HUD shows what it shows, per step, and what a change of the request's decision does, each scenario left out.

    python benchmarks/research/hud_why.py --runs RUN1:DATA1 RUN2:DATA2 ... [--why] [--arms base,op:2:0.5:0.5:2,...]

Each RUN is a `bench_agent_view.py --only opencode` run's opencode folder (its plugin trace and store), DATA its
scenario. Every traced /retrieve request is asked again of the run's own store exactly as the plugin sent it
(query phrases, entities, step, `request_carried`, session; no pins: they follow what was shown, which an arm
changes), and the plugin's turn logic is replayed on the answers (call.ts): a turn's first call asks on the request
alone and keeps the cold start's memories it finds plus its first `turnBlockMemories` others as the turn's block,
carried to every later call of the turn; a later call with a step asks for what its step brings, the block excluded.
Each call is scored on all it carries (the cold-start block at a session's first call, the turn's block, the step's
own HUD), as bench_agent_view.py scores it: HUD precision (mean over the calls carrying any block), recall (mean over
the labelled calls) and the share of steps needing nothing that carry nothing.

Arms (`--arms`, comma-separated):
- `base`: as shipped;
- `op:TOP:PENALTY:COSINE:AGREEMENT`: the second model's opinion of the request's phrases (proactive.REQUEST_OPINION);
- `bar:ANSWER:KEEP`: the injection bars' answer and keep bars for the default model;
- `slots:N`: the turn's block holds N memories besides the cold start's;
- `quiet:P`, `naming:N`: proactive.QUIET_STEP_LIKELIHOOD, proactive.MAX_NAMING (what a later call's step brings);
- `nostep`: a later call carries the turn's block only;
- `retire:edit` / `retire:any`: a block memory naming a file leaves the block once a step edited (touched) that file;
- `gate:C` / `gatereq:C`: at a turn's first call, a memory whose MiniLM cosine to the request's nearest phrase is
  under C leaves (the slots fill from the rest) / the block is empty unless its best memory reaches C;
- `+` joins arms: `op:2:1:0.5:2+slots:1`.

`--synthetic DATA ...` builds the calls from a scenario's steps.json instead of a run's trace (derive.ts's derivation
ported; no cold start, no pins, no usefulness record) on a fresh store set up as bench_agent_view.py sets one up
(kept under `--synthetic-work`). `--merge OUT ...` prints the left-out table of earlier outputs.

`--why` prints, per step needing nothing that carries a memory and per labelled memory missed, where it came from
(cold start, the turn's block, the step's HUD), the phrase kind that found it, and the decision's evidence.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

Call = tuple[dict[str, Any], list[str], dict[str, Any] | None, tuple[int, int], list[str]]


@contextmanager
def arm(spec: str) -> Any:
    """Switch the code's settings for one arm (research only: module attributes, set back after)."""
    from codememory.retrieval import evidence, proactive
    from codememory.retrieval.second_opinion import Form

    saved = (proactive.REQUEST_OPINION, evidence.calibration_for)
    saved_step = (proactive.QUIET_STEP_LIKELIHOOD, proactive.MAX_NAMING)
    slots = 2
    original = evidence.calibration_for
    try:
        for part in spec.split("+"):
            kind, *args = part.split(":")
            if kind == "op":
                top, pen, cos, agree = (float(a) for a in args)
                proactive.REQUEST_OPINION = Form(int(top), pen, cos, agree)
            elif kind == "bar":
                answer, keep = (float(a) for a in args)

                def calibration_for(model: str | None, _a: float = answer, _k: float = keep) -> Any:
                    cal = original(model)
                    return replace(cal, inject=replace(cal.inject, answer=_a, keep=_k))

                evidence.calibration_for = calibration_for  # type: ignore[assignment]
            elif kind == "slots":
                slots = int(args[0])
            elif kind == "quiet":  # a memory about a step's file in a turn whose request called for nothing
                proactive.QUIET_STEP_LIKELIHOOD = float(args[0])
            elif kind == "naming":
                proactive.MAX_NAMING = int(args[0])
            elif kind == "nostep":  # a later call shows the turn's block only
                NO_STEP[0] = True
            elif kind == "retire":  # a block memory naming a file leaves the block once a step edited that file
                RETIRE[0] = args[0]
            elif kind in ("gate", "gatereq"):  # MiniLM's cosine to the request's nearest phrase, per memory or best
                GATE[0], GATE[1] = kind, float(args[0])
            elif kind != "base":
                sys.exit(f"unknown arm {part}")
        yield slots
    finally:
        proactive.REQUEST_OPINION, evidence.calibration_for = saved  # type: ignore[assignment]
        proactive.QUIET_STEP_LIKELIHOOD, proactive.MAX_NAMING = saved_step
        NO_STEP[0] = False
        RETIRE[0] = ""
        GATE[0] = ""


def load_run(run: Path, data: Path) -> list[Call]:
    """(request or None, relevant ids, None, (session, turn), cold-start ids) per traced model call, paired with the
    scenario's steps in order; each request carries what the run showed at that call (`_turn`, `_surfaced`). A call
    that sent no request (a later call with nothing done since the request, a skipped HUD) is kept: it carries the
    turn's block all the same."""
    trace = [json.loads(line) for line in (run / "plugin-trace.jsonl").read_text().splitlines() if line.strip()]
    scenario = json.loads((data / "steps.json").read_text(encoding="utf-8"))
    at = [
        (s, t, i)
        for s, session in enumerate(scenario["sessions"])
        for t, turn in enumerate(session["turns"])
        for i in range(len(turn["steps"]))
    ]
    out: list[Call] = []
    cold: list[str] = []
    where_of = iter(at)
    for entry in trace:
        if entry.get("hook") == "system" and isinstance(entry.get("cold"), list):
            cold = entry["cold"]
            continue
        if entry.get("hook") != "messages":
            continue
        where = next(where_of, None)
        if where is None:
            break
        s, t, i = where
        step = scenario["sessions"][s]["turns"][t]["steps"][i]
        req = entry.get("request")
        shown = {"_turn": entry.get("turn") or [], "_surfaced": entry.get("surfaced") or [], "_kept": entry.get("kept")}
        out.append(
            (
                {**req, **shown} if req else {"_none": True, **shown},
                list(step.get("relevant") or []),
                None,
                (s, t),
                cold,
            )
        )
        cold = []
    return out


_PATH_RE = re.compile(r"(?:~|\.{1,2})?/?(?:[\w@.-]+/)+[\w@.-]+|\b[\w-]+\.(?:[a-z][a-z0-9]{0,7})\b")
_ERROR_RE = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Fault)\b|\b(?:E[A-Z]{3,}|ERR_[A-Z_]+)\b")
_CODE_RE = re.compile(r"`([^`\n]{2,80})`")
_IDENT_RE = re.compile(
    r"\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+"
    r"|[a-z][\w]*(?:\.[a-z_][\w]*){1,4}\(\)?)\b"
)


def entities_of(text: str) -> list[str]:
    """The OpenCode plugin's extractEntities (integrations/opencode/src/derive.ts), ported for the synthetic calls."""
    hits: list[tuple[int, str]] = []
    spans: list[tuple[int, int]] = []
    for m in _PATH_RE.finditer(text):
        v = re.sub(r"[.,:;]+$", "", m.group(0))
        if len(v) < 3 or v.lower() in ("e.g", "i.e", "etc", "vs") or re.fullmatch(r"\d+(\.\d+)*", v):
            continue
        if "/" not in v and not re.search(r"\.(?:[a-z][a-z0-9]{0,7})$", v):
            continue
        if re.search(r"[a-z]:/*$", text[max(0, m.start() - 3) : m.start()], re.I):
            continue
        hits.append((m.start(), v))
        spans.append((m.start(), m.end()))
    for rx in (_ERROR_RE, _IDENT_RE):
        for m in rx.finditer(text):
            if not any(a <= m.start() < b for a, b in spans):
                hits.append((m.start(), m.group(0)))
    for m in _CODE_RE.finditer(text):
        hits.append((m.start(), m.group(1).strip()))
    hits.sort(key=lambda h: h[0])
    return list(dict.fromkeys(v for _, v in hits))


def synthetic_calls(data: Path, root: Path) -> list[Call]:
    """The calls the OpenCode plugin would send for the scenario, built from steps.json alone (derive.ts's default
    derivation; no cold start, no pins, no usefulness record): a turn's first call on the request alone, a later one
    with its step (the scripted call before it) and `request_carried`."""
    scenario = json.loads((data / "steps.json").read_text(encoding="utf-8"))
    out: list[Call] = []
    for s, session in enumerate(scenario["sessions"]):
        for t, turn in enumerate(session["turns"]):
            user = re.sub(r"\s+", " ", f'"{turn["user"]}"').strip()
            sentences = [x.strip() for x in re.split(r"(?<=[.!?])\s+|\n+", user) if len(x.strip()) > 2]
            request = [" ".join(sentences[:3])[:300]] + ([" ".join(sentences[3:8])[:300]] if len(sentences) > 3 else [])
            tools: list[dict[str, Any]] = []
            for step in turn["steps"]:
                req: dict[str, Any] = {
                    "max_memories": 4,
                    "max_new": 3,
                    "token_budget": 917,
                    "request_phrases": len(request),
                    "_kept": None,
                    "_surfaced": [],
                }
                phrases = []
                for tc in reversed(tools):
                    phrases.append(f"{tc['tool']} {' '.join(str(v) for v in tc['args'].values())}".strip()[:200])
                req["query_expansion"] = list(dict.fromkeys([*request, *list(dict.fromkeys(phrases))[:4]]))[:8]
                ents = entities_of(turn["user"])
                tool_ents = entities_of("\n".join(str(v) for tc in reversed(tools) for v in tc["args"].values()))
                tool_ents += [
                    str(tc["args"].get("filePath") or tc["args"].get("path")).split("/")[-1]
                    for tc in reversed(tools)
                    if tc["args"].get("filePath") or tc["args"].get("path")
                ]
                req["entities"] = list(dict.fromkeys([*ents, *list(dict.fromkeys(tool_ents))[:12]]))[:24]
                if tools:
                    req["step"] = {"tool": tools[-1]["tool"], "args": tools[-1]["args"], "error": False}
                    req["request_carried"] = True
                out.append((req, list(step.get("relevant") or []), None, (s, t), []))
                for tc in step.get("tool_calls") or []:
                    args = {
                        k: str(v).replace("{root}", str(root))
                        for k, v in tc.get("args", {}).items()
                        if isinstance(v, str)
                    }
                    tools.append({"tool": tc["tool"], "args": args})
    return out


def synthetic_store(data: Path, work: Path) -> Path:
    """A fresh project for the scenario as bench_agent_view.py sets it up (its files in git, `codememory init`,
    `import --own` with the default model), reused when there."""
    project = work / data.name / "project"
    if (project / ".codememory").is_dir():
        return project.resolve()
    project.mkdir(parents=True, exist_ok=True)
    for rel, text in json.loads((data / "project.json").read_text(encoding="utf-8")).items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    home = work / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "XDG_DATA_HOME": str(home / ".data"),
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "scenario"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)
    cm = str(Path(sys.executable).with_name("codememory"))
    for args in (
        ["init", "--assistants", "none", "--json"],
        ["import", "--own", str((data / "memories.jsonl").resolve())],
    ):
        subprocess.run([cm, *args], cwd=project, env=env, check=True, capture_output=True)
    return project.resolve()


def ask(store: Any, request: dict[str, Any], exclude: list[str], carried: bool) -> Any:
    from codememory.retrieval.step import step_from_call

    step = request.get("step")
    return store.retrieve(
        request["query_expansion"],
        entities=request.get("entities") or [],
        exclude=exclude,
        max_memories=request.get("max_memories", 4),
        max_new=request.get("max_new", 3),
        token_budget=request.get("token_budget", 1500),
        touch=False,
        session_id=request.get("session_id"),
        step=step_from_call(**step, root=str(store.root)) if step else None,
        request_carried=carried and step is not None,
        **({"request_phrases": request["request_phrases"]} if "request_phrases" in request else {}),
    )


def evidence(store: Any, request: dict[str, Any], mid: str) -> dict[str, Any]:
    """The request decision's evidence for one memory: its likelihood, coverage, cosine and standout on the request's
    own phrases (the request and its parts), where the second model ranks it among the pool, and the request phrase
    (the whole or a part) that gives it its best likelihood."""
    from codememory.retrieval.proactive import request_parts
    from codememory.retrieval.search import rank_phrases
    from codememory.retrieval.second_opinion import Form
    from codememory.store.filters import Filters

    n = request.get("request_phrases", 1)
    asked = [*request["query_expansion"][:n], *request_parts(request["query_expansion"][0])] if n else []
    if not asked:
        return {}
    pk = dict(store.db.get_pk_map([mid])).get(mid)
    flt = Filters(injectable=True)
    r = rank_phrases(store.db, asked, flt, want=10 * len(asked), semantic=store.semantic, opinion=Form(2, 0, 1, 0))
    row = next((e for e in (r.ranked or r.order) if e[1] == pk), None)
    out: dict[str, Any] = {"in_pool": row is not None}
    if row is not None:
        ex = row[3]
        out.update(
            {
                k: round(float(ex[k]), 3)
                for k in ("likelihood", "coverage", "cosine", "standout")
                if ex.get(k) is not None
            }
        )
        out["second_rank"] = ex.get("second_rank")
        out["pos"] = [e[1] for e in (r.ranked or r.order)].index(pk)
    best = (-1.0, "")
    for phrase in asked:
        one = rank_phrases(store.db, [phrase], flt, want=10, semantic=store.semantic)
        got = next((e[3].get("likelihood") or 0.0 for e in (one.ranked or one.order) if e[1] == pk), 0.0)
        best = max(best, (float(got), phrase[:70]))
    out["best_phrase"], out["best_phrase_p"] = best[1], round(best[0], 3)
    return out


LATER: dict[tuple[Any, ...], Any] = {}
NO_STEP = [False]
RETIRE = [""]
GATE: list[Any] = ["", 0.0]


def second_cosines(store: Any, request: dict[str, Any], ids: list[str]) -> dict[str, float]:
    """MiniLM's cosine of each memory to the nearest of the request's phrases (the request and its parts)."""
    import numpy as np

    from codememory.embedding.second_model import NAME, load
    from codememory.retrieval.proactive import request_parts
    from codememory.retrieval.second_opinion import candidate_vectors, query_vector

    model = load()
    n = request.get("request_phrases", 1)
    asked = [*request["query_expansion"][:n], *request_parts(request["query_expansion"][0])] if n else []
    if model is None or not asked or not ids:
        return {}
    pks = dict(store.db.get_pk_map(ids))
    vecs = candidate_vectors(store.db, model, NAME, list(pks.values()))
    q = np.stack([query_vector(model, a) for a in asked])
    return {i: float((q @ vecs[pk]).max()) for i, pk in pks.items() if pk in vecs}


def steps_as_run() -> bool:
    from codememory.retrieval import proactive

    return (proactive.QUIET_STEP_LIKELIHOOD, proactive.MAX_NAMING) == (0.0, 1)


def replay(store: Any, calls: list[Call], slots: int, why: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    precisions, recalls, nothing, blank, shown_all, hits_all = [], [], 0, 0, 0, 0
    same = 0
    seen_miss: set[str] = set()
    turn: tuple[int, int] | None = None
    block: list[str] = []
    run_block: list[str] | None = None
    whys: dict[str, dict[str, Any]] = {}
    for n_call, (request, relevant, _call, where, cold) in enumerate(calls):
        exclude = [i for i in request.get("exclude_memory_ids") or [] if i not in cold]
        first = where != turn
        step_ids: list[str] = []
        if first and request.get("_none"):
            turn, block, run_block = where, [], []
        elif request.get("_none"):
            pass
        elif first:
            run_block = request["_kept"]
            turn = where
            res = ask(store, request, exclude, False)
            added = 0
            block = []
            memories = list(res.memories)
            if GATE[0] and memories:
                cos = second_cosines(store, request, [m.id for m in memories])
                if GATE[0] == "gate":
                    memories = [m for m in memories if cos.get(m.id, 1.0) >= GATE[1]]
                elif max(cos.values(), default=1.0) < GATE[1]:
                    memories = []
            for m in memories:
                if m.id in cold or added < slots:
                    added += m.id not in cold
                    block.append(m.id)
                whys[m.id] = {"stage": "block", **m.why}
        elif request.get("step") and NO_STEP[0]:
            pass
        elif request.get("step") and run_block == block and steps_as_run():
            step_ids = list(request["_surfaced"])  # the run's own answer: the same block excluded (as_run checks it)
        elif request.get("step"):
            from codememory.retrieval import proactive

            key = (id(calls), n_call, tuple(block), proactive.QUIET_STEP_LIKELIHOOD, proactive.MAX_NAMING)
            if key not in LATER:  # a later call's answer depends on the arm only through the block it excludes
                LATER[key] = ask(store, request, [*exclude, *block], True)
            res = LATER[key]
            step_ids = [m.id for m in res.memories]
            for m in res.memories:
                whys[m.id] = {"stage": "step", **m.why}
        if RETIRE[0] and not first and request.get("step") and not request.get("_none"):
            from codememory.retrieval.step import step_from_call

            st = request["step"]
            if RETIRE[0] == "any" or st.get("tool") in ("edit", "write", "patch"):
                done = step_from_call(**st, root=str(store.root))
                texts = {i: store.get(i, touch=False).text for i in block if i not in cold}
                block = [i for i in block if i not in texts or not done.touches(texts[i])]
        carried = list(dict.fromkeys([*cold, *block, *step_ids]))
        real = set(cold) | set(request.get("_turn") or []) | set(request.get("_surfaced") or [])
        same += real == set(carried)
        hits = len(set(carried) & set(relevant))
        shown_all, hits_all = shown_all + len(carried), hits_all + hits
        if carried:
            precisions.append(hits / len(carried))
        if relevant:
            recalls.append(hits / len(relevant))
        else:
            nothing += 1
            blank += not carried
        if why is not None:
            for mid in carried:
                if mid not in relevant:
                    src = "cold" if mid in cold else ("step" if mid in step_ids else "block")
                    why.append(
                        {
                            "kind": "noise",
                            "need": bool(relevant),
                            "first": first,
                            "src": src,
                            "id": mid,
                            "request": (request.get("query_expansion") or [""])[0][:90],
                            "step": request.get("step"),
                            **({} if src == "cold" else whys.get(mid, {})),
                            **(evidence(store, request, mid) if src == "block" and first else {}),
                        }
                    )
            for mid in relevant:
                if mid not in carried and (first or mid not in seen_miss):
                    seen_miss.add(mid)
                    why.append(
                        {
                            "kind": "miss",
                            "first": first,
                            "id": mid,
                            **(evidence(store, request, mid) if first and "query_expansion" in request else {}),
                            "request": (request.get("query_expansion") or [""])[0][:90],
                            "step": request.get("step"),
                        }
                    )
    return {
        "P": round(statistics.fmean(precisions), 3) if precisions else 0.0,
        "R": round(statistics.fmean(recalls), 3) if recalls else 0.0,
        "blank": round(blank / nothing, 3) if nothing else 0.0,
        "calls_with_block": len(precisions),
        "shown": shown_all,
        "as_run": f"{same}/{len(calls)}",
    }


def merit(f: dict[str, Any]) -> float:
    return statistics.fmean([f["P"], f["R"], f["blank"]])


def left_out(table: dict[str, dict[str, dict[str, Any]]], names: list[str]) -> None:
    """For each scenario left out: the arm best on the others (mean of P, R, blank), its figures on the one left out."""
    arms = [a for a in table if all(n in table[a] for n in names)]
    print("| left out | base P / R / blank | chosen on the others | left out, with it |")
    print("|---|---|---|---|")
    sums = {"base": [0.0, 0.0, 0.0], "out": [0.0, 0.0, 0.0]}
    for out in names:
        best = max(arms, key=lambda a: (statistics.fmean(merit(table[a][n]) for n in names if n != out), a == "base"))
        b, o = table["base"][out], table[best][out]
        for key, f in (("base", b), ("out", o)):
            sums[key] = [x + f[k] for x, k in zip(sums[key], ("P", "R", "blank"), strict=True)]
        three = "{P:.3f} / {R:.3f} / {blank:.3f}"
        print(f"| {out} | {three.format(**b)} | {best} | {three.format(**o)} |")
    mb, mo = (" / ".join(f"{x / len(names):.3f}" for x in sums[k]) for k in ("base", "out"))
    print(f"| mean | {mb} | | {mo} |")
    ranked = sorted(arms, key=lambda a: -statistics.fmean(merit(table[a][n]) for n in names))
    for a in ranked[:8]:
        f = [table[a][n] for n in names]
        print(
            f"  all {len(names)}: {a}: "
            + " / ".join(f"{statistics.fmean(x[k] for x in f):.3f}" for k in ("P", "R", "blank"))
        )


def merged(files: list[str]) -> None:
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for name in files:
        for line in Path(name).read_text().splitlines():
            if line.startswith("{") and '"arm"' in line:
                row = json.loads(line)
                table.setdefault(row["arm"], {})[row["scenario"]] = row
    names = sorted(table["base"])
    left_out(table, names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="*", default=[], help="RUN:DATA pairs (opencode folder : scenario folder)")
    parser.add_argument("--synthetic", nargs="*", default=[], help="scenario folders: calls built from steps.json")
    parser.add_argument("--synthetic-work", type=Path, default=Path("/tmp/hud_why"))
    parser.add_argument("--arms", default="base")
    parser.add_argument(
        "--merge", nargs="*", default=[], help="earlier outputs of this script: the left-out table of them"
    )
    parser.add_argument("--why", action="store_true", help="print every noise and miss of the base arm (JSON lines)")
    args = parser.parse_args()
    if args.merge:
        return merged(args.merge)
    from codememory import Store

    arms = args.arms.split(",")
    table: dict[str, dict[str, dict[str, Any]]] = {}
    names = []
    t0 = time.time()
    specs = [*args.runs, *(f"synthetic:{d}" for d in args.synthetic)]
    for spec in specs:
        run, data = (Path(p) for p in spec.split(":"))
        if str(run) == "synthetic":
            project = synthetic_store(data, args.synthetic_work)
            store, calls = Store.open(project), synthetic_calls(data, project)
        else:
            store, calls = Store.open(run / "project"), load_run(run, data)
        names.append(data.name)
        for a in arms:
            why: list[dict[str, Any]] | None = [] if args.why and a == arms[0] else None
            with arm(a) as slots:
                table.setdefault(a, {})[data.name] = replay(store, calls, slots, why)
            print(
                json.dumps({"scenario": data.name, "arm": a, **table[a][data.name], "t": round(time.time() - t0, 1)}),
                flush=True,
            )
            if why is not None:
                for row in why:
                    print("WHY " + json.dumps(row, default=str), flush=True)
                print(
                    "CAUSES "
                    + json.dumps(
                        Counter(
                            ":".join(
                                (r["kind"], "need" if r.get("need") else "noneed", str(r.get("src")), str(r["first"]))
                            )
                            for r in why
                        ).most_common()
                    ),
                    flush=True,
                )
    if len(names) < 2:
        return
    print("left out: the arm best on the others (mean of P, R, blank), its figures on the one left out")
    for out in names:
        best = max(arms, key=lambda a: statistics.fmean(merit(table[a][n]) for n in names if n != out))
        print(f"  {out}: {best} -> {table[best][out]}  (base: {table['base'][out] if 'base' in table else '-'})")


if __name__ == "__main__":
    main()
