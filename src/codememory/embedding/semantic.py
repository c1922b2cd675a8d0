"""The meaning-based half of retrieval: a lazily loaded embedder, vectors on write, and vector search.

Everything here fails soft: when no embedder is configured, or it cannot load or answer, `reason`
says why and callers fall back to lexical + fuzzy search, marking their results `degraded`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from codememory.core.config import Config
from codememory.errors import EmbedderError
from codememory.store.database import Database
from codememory.store.filters import Filters

# Why search is keyword-only when the user never chose a model (callers tell it apart from a model that failed).
NOT_CONFIGURED = (
    "no embedding model configured ([embedding] provider in ~/.config/codememory/config.toml, or in a "
    "trusted .codememory/config.toml)"
)
# Why an answer came from keywords alone although a model is loaded: the vector index's files were out of the page
# cache, and a caller that must answer fast (the daemon) does not wait while a background pass reads them in.
VECTORS_LOADING = "the vector index is being read into memory from disk: answered from keywords alone meanwhile"

if TYPE_CHECKING:
    from codememory.core.page_cache import Pass
    from codememory.embedding import Embedder
    from codememory.embedding.base import Vectors
    from codememory.embedding.vectors import VectorIndex


AUTO_BACKFILL = 16  # a search embeds up to this many memories that lack a vector itself (about 0.2 s)
# What of a query or retrieval phrase is embedded: the model's cost grows faster than the text (the default model,
# one thread: 30 ms for 100 characters, 310 ms for 1,000, 1.6 s for 4,000, the longest phrase accepted), and a
# prompt that long is a paste whose first lines say what it is about; its keywords are all searched.
QUERY_EMBED_CHARS = 1_000
NEEDING_RECOUNT_S = 600.0  # at most this long between two counts of the memories needing a vector (count_needing)


RECENT_DOCUMENTS = 256  # vectors kept from the last batch (a span's candidates are a few dozen)


class Semantic:
    def __init__(self, db: Database, config: Config, cache_dir: Path | None) -> None:
        self.db = db
        self.config = config
        self.cache_dir = cache_dir
        self._embedder: Embedder | None = None
        self._index: VectorIndex | None = None
        self._tried = False
        # the last documents embedded, by text: extraction's reader embeds a span's candidates in one batch
        # (extract/reader.py) and `Store.add` then asks for each kept one again; the model is not run twice
        self._recent: dict[str, Vectors] = {}
        self._missing: tuple[tuple[int, int], int] | None = (
            None  # (the store's change counters, memories without a vector)
        )
        # (the store's change counters, the model, when counted, memories needing a vector from it)
        self._needing: tuple[tuple[int, int], str, float, int] | None = None
        self.reason: str | None = None
        # False in the daemon: a search whose vectors are out of the page cache answers from keywords (VECTORS_LOADING)
        # instead of waiting seconds for random reads from disk; a command waits, it wants the whole answer
        self.wait_for_disk = True

    @property
    def configured(self) -> bool:
        return self.config.embedding.provider.strip().lower() not in ("", "none", "off")

    def embedder(self) -> Embedder | None:
        if not self._tried:
            self._tried = True
            if not self.configured:
                self.reason = NOT_CONFIGURED
                return None
            from codememory.embedding import create_embedder

            try:
                self._embedder = create_embedder(self.config.embedding)
            except EmbedderError as exc:
                self.reason = f"embedding model unavailable: {exc}"
        return self._embedder

    @property
    def model(self) -> str | None:
        emb = self.embedder()
        return emb.name if emb else None

    def _fail(self, exc: Exception) -> None:
        self.reason = f"embedding failed: {exc}"

    def embed_documents(self, texts: Sequence[str]) -> Vectors | None:
        emb = self.embedder()
        if emb is None or not texts:
            return None
        recent = self._recent  # one dict for the whole check: the daemon's threads may replace it meanwhile
        if all(t in recent for t in texts):
            import numpy as np

            known: Vectors = np.vstack([recent[t] for t in texts])
            return known
        try:
            vectors = emb.embed_documents(texts)
        except EmbedderError as exc:
            self._fail(exc)
            return None
        if len(texts) > 1:  # a batch is what is asked for again one by one; a single text seldom is
            self._recent = dict(zip(texts[-RECENT_DOCUMENTS:], vectors[-RECENT_DOCUMENTS:], strict=True))
        return vectors

    def embed_query(self, text: str) -> Vectors | None:
        """A query's vector; kept for the process's lifetime (embedding/query_cache.py): an agent's consecutive
        calls repeat most of their phrases."""
        vectors = self.embed_queries([text])
        return vectors[0] if vectors else None

    def embed_queries(self, texts: Sequence[str]) -> list[Vectors] | None:
        """One vector per query, those not seen before embedded in one model call; None when the model fails."""
        emb = self.embedder()
        if emb is None:
            return None
        from codememory.embedding.query_cache import QUERY_VECTORS, vector_space

        space = vector_space(emb.name, self.config.embedding)
        try:
            return QUERY_VECTORS.vectors(space, [embedded_part(t) for t in texts], emb.embed_queries)
        except EmbedderError as exc:
            self._fail(exc)
            return None

    def index(self) -> VectorIndex | None:
        emb = self.embedder()
        if emb is None:
            return None
        if self._index is None or self._index.model != emb.name:
            from codememory.embedding.vectors import VectorIndex

            self._index = VectorIndex(self.db, emb.name, self.cache_dir, self.config.search.ann_threshold)
        return self._index

    def vectors_ready(self) -> bool:
        """Whether a search may use the vectors now: always when it waits for the disk, else only while the index's
        files are in the page cache (when they are not, reading them in starts in the background)."""
        if self.wait_for_disk:
            return True
        index = self.index()
        return index is None or index.in_memory()

    @contextlib.contextmanager
    def waiting_for_disk(self) -> Iterator[None]:
        """Within the block, searches wait for the disk whatever `wait_for_disk` says: a command the daemon runs
        for the CLI, whose user wants the whole answer (the caller holds the store: no other thread sees it)."""
        before, self.wait_for_disk = self.wait_for_disk, True
        try:
            yield
        finally:
            self.wait_for_disk = before

    def read_ahead(self) -> Pass | None:
        """Read the vector index's files into the page cache in the background (the daemon's warm-up)."""
        index = self.index() if self.configured else None
        return index.read_ahead() if index is not None else None

    def neighbours(self, vector: Vectors, k: int, filters: Filters) -> list[tuple[int, float]]:
        index = self.index()
        return index.search(vector, k, filters) if index is not None else []

    def cosines(self, vector: Vectors, pks: list[int]) -> dict[int, float]:
        index = self.index()
        return index.cosines(vector, pks) if index is not None else {}

    def vectors(self, pks: list[int]) -> dict[int, Vectors]:
        """These memories' stored vectors (for comparing memories with each other)."""
        index = self.index()
        return index.vectors(pks) if index is not None else {}

    def store_vectors(self, items: Sequence[tuple[int, str]], vectors: Vectors) -> None:
        emb = self.embedder()
        if emb is None:
            return
        from codememory.embedding.vector_rows import to_blob

        self.db.save_embeddings(
            emb.name,
            [(pk, text, to_blob(vec), int(vec.shape[0])) for (pk, text), vec in zip(items, vectors, strict=True)],
        )

    def coverage_gap(self) -> str | None:
        """Why meaning-based results are incomplete — memories without a vector from the model (after the model
        changed, or embeddings were turned on) — or None. A small gap is filled here and now."""
        emb = self.embedder()
        if emb is None:
            return None
        missing = self._count_missing(emb.name)
        if 0 < missing <= AUTO_BACKFILL:
            self.backfill(AUTO_BACKFILL)
            missing = self._count_missing(emb.name)
        if not missing:
            return None
        return (
            f"{missing} memories have no vector from {emb.name} yet, so meaning-based search misses them: "
            "`codememory embed` adds them (a running daemon does it in the background)"
        )

    def _count_missing(self, model: str) -> int:
        """Memories without a vector, counted again only after a memory or a vector was added or removed (the two
        counters the store bumps then; counting both tables took milliseconds at 100k, on every search)."""
        key = self.db.change_counters()
        if self._missing is None or self._missing[0] != key:
            missing = self.db.count_without_vector(model)
            if missing:  # rows a committed store holds that are not memories never get a vector: not a gap
                missing = self.db.count_valid_without_vector(model)
            self._missing = (key, missing)
        return self._missing[1]

    def count_needing(self, model: str) -> int:
        """`count_needing_embedding`, counted again only after a memory's text or a vector changed (the store's two
        counters), or NEEDING_RECOUNT_S after the last count (a row a repair made valid without touching its text)."""
        known = self.needing_if_known(model)
        if known is None:
            known = self.db.count_needing_embedding(model)
            self.remember_needing(model, self.db.change_counters(), known)
        return known

    def needing_if_known(self, model: str) -> int | None:
        """The last count of memories needing a vector from `model` while it still holds (neither counter moved, and
        counted less than NEEDING_RECOUNT_S ago), else None. The daemon asks it at every poll of every project and
        counts apart when None (store.embeddings.count_needing_apart): the count joins every memory to its vector,
        0.6 s of a core at 100k memories, which requests to the store waited behind on its own connection."""
        known = self._needing
        if known is None or known[:2] != (self.db.change_counters(), model):
            return None
        return known[3] if time.monotonic() - known[2] <= NEEDING_RECOUNT_S else None

    def remember_needing(self, model: str, counters: tuple[int, int], count: int) -> None:
        """A count made of the state the store's `counters` describe (here or on another connection)."""
        self._needing = (counters, model, time.monotonic(), count)

    def maintenance(self, *, force: bool = False) -> Callable[[], bool] | None:
        """The vector index's pending upkeep as a job needing no lock on the store (VectorIndex.maintenance). When
        this does not wait for the disk (the daemon), None while an index not yet mapped has its files out of the
        page cache: finding what is due maps it, which would fault it in a page at a time while the caller holds
        the store. An index mapped already is not probed: looking again reads only what changed, and a probe of an
        idle store would read its files back each time memory pressure pushed them out."""
        index = self.index() if self.configured else None
        if index is None or not (self.wait_for_disk or index.mapped or index.in_memory()):
            return None
        return index.maintenance(force=force)

    def maintain(self, *, force: bool = True) -> bool:
        """Bring the vector index up to date here and now (bulk commands, once their vectors are written)."""
        job = self.maintenance(force=force)
        return job() if job is not None else False

    def backfill(self, batch: int = 64, pks: Sequence[int] | None = None) -> int:
        """Embed one batch of memories that have no (or an outdated) vector; returns how many."""
        emb = self.embedder()
        if emb is None:
            return 0
        rows = self.db.needing_embedding(emb.name, batch, pks)
        if not rows:
            return 0
        vectors = self.embed_documents([text for _, text in rows])
        if vectors is None:
            return 0
        self.store_vectors(rows, vectors)
        return len(rows)


def embedded_part(query: str) -> str:
    """The part of a query that is embedded: all of it up to QUERY_EMBED_CHARS, else its beginning up to the last
    whole word within them."""
    if len(query) <= QUERY_EMBED_CHARS:
        return query
    cut = query[:QUERY_EMBED_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > QUERY_EMBED_CHARS // 2 else cut
