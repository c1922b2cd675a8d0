"""Vector search over the embeddings table, kept up to date outside the query.

The table is the source of truth. A copy of its rows lives in append-only files (vector_files.py) that every
process maps instead of reading; a search first appends what the table gained since (only that delta is read),
so no search ever reloads the whole table or rebuilds anything. Above `ann_threshold` vectors an HNSW graph
(usearch) over the files' first rows answers the nearest-neighbour part; the rows written after it are searched
exactly, and the graph's answers are re-scored exactly from the rows (the graph stores half-precision copies).
Extending the graph is `maintenance()`: a job the daemon runs in the background and bulk commands (import,
embed) run when they finish, never a search.

ANN library: usearch (HNSW) — maintained, wheels for Linux/macOS/Windows on every recent Python, an index
that can be used straight from a memory-mapped file (`view`), and no C++ toolchain needed at install (hnswlib
ships sources only).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from codememory.core.blas_threads import one_blas_thread
from codememory.core.page_cache import Pass
from codememory.embedding.vector_files import Keys, Mapped, Matrix, Meta, VectorFiles
from codememory.embedding.vector_rows import Positions, decode_rows
from codememory.store.database import Database
from codememory.store.filters import Filters

_ANN_CONNECTIVITY = 16
_ANN_EXPANSION_ADD = 128
_ANN_EXPANSION_SEARCH = 128
_ANN_MAX_FETCH = 4096  # past this many graph answers a short list stays short (no full scan)
_FILTERED_EXACT_MAX = 20_000  # a filter this selective is searched exactly among its own members
_LIVE_SEEN = 50_000  # memories whose filter check a search keeps while the store is unchanged
FOLD_MIN = 1_000  # rows written after the graph before the background maintenance extends it
_COMPACT_SHARE = 0.25  # rows of forgotten or re-embedded memories in the files before they are rewritten
_COMPACT_MIN_ROWS = 256
_BATCH = 20_000
_RESIDENT_ENOUGH = 0.9  # sampled pages in the page cache for a search to read the index's files without waiting
_PROBE_EVERY = 1.0  # seconds a probe that found them in memory is trusted (a probe opens three files: ~0.3 ms)
# seconds the files count as in memory once a pass has read them through, whatever a probe says: when the cache
# cannot keep them (memory pressure), every probe would start another pass and every answer would be keywords alone
_TRUSTED_AFTER_PASS = 60.0


class VectorIndex:
    def __init__(self, db: Database, model: str, cache_dir: Path | None, ann_threshold: int) -> None:
        self.db = db
        self.model = model
        self.ann_threshold = ann_threshold
        self.files = VectorFiles(cache_dir, model) if cache_dir is not None else None
        self._known: int | None = None  # the table's embedding counter at the last look
        self._stamp: tuple[int, int, int] | None = None  # the meta file as last read
        self._meta: Meta | None = None
        self._mapped: Mapped | None = None
        self._ann: Any = None  # usearch Index, a view of the mapped graph file
        self._ann_buf: Any = None
        # Rows not in the files (no cache folder, or another process was writing them): kept in memory.
        self._extra_pks: Keys = np.zeros(0, np.int64)
        self._extra_seqs: Keys = np.zeros(0, np.int64)
        self._extra: Matrix | None = None
        self._dim: int | None = None
        self._positions = Positions()
        self._scans: dict[bytes, Matrix] = {}  # recent queries' similarity to every row (exact mode)
        # which memories passed the filters, while the store is unchanged: a retrieval ranks its request's phrases
        # twice (with and without the tool phrases), and the graph answers both with mostly the same memories
        self._live_seen: tuple[tuple[Any, ...], dict[int, bool]] = ((), {})
        self.last_method = "none"
        self._reading: Pass | None = None  # the background pass reading the files into the page cache
        self._trusted_until = 0.0  # monotonic time until which the files count as in memory without a probe
        # What happened, for tests and benchmarks to observe (never read by the search itself).
        self.stats = {"rows_read": 0, "rows_appended": 0, "ann_builds": 0, "ann_extends": 0, "full_scans": 0}

    # ------------------------------------------------------------------ rows
    @property
    def seq(self) -> int:
        if len(self._extra_seqs):
            return int(self._extra_seqs[-1])
        return self._meta.seq if self._meta else 0

    def _row_count(self) -> int:
        return (len(self._mapped) if self._mapped else 0) + len(self._extra_pks)

    def _all_pks(self) -> Keys:
        base = self._mapped.pks if self._mapped else np.zeros(0, np.int64)
        return np.concatenate([base, self._extra_pks]) if len(self._extra_pks) else base

    def _matrix_rows(self, rows: npt.NDArray[np.int64]) -> Matrix:
        n_base = len(self._mapped) if self._mapped else 0
        assert self._dim is not None
        out = np.empty((len(rows), self._dim), dtype=np.float32)
        in_base = rows < n_base
        if in_base.any():
            assert self._mapped is not None
            out[in_base] = self._mapped.rows(rows[in_base])
        if (~in_base).any():
            assert self._extra is not None
            out[~in_base] = self._extra[rows[~in_base] - n_base]
        return out

    def _similarities(self, query: Matrix, start: int) -> Matrix:
        """The query's cosine with every row from `start` on (cached per query while the rows stay the same)."""
        key = query.tobytes() + start.to_bytes(8, "little")
        sims = self._scans.get(key)
        if sims is None or len(sims) != self._row_count() - start:
            if len(self._scans) >= 8:  # a query expansion has a few phrases; keep each one's scan
                self._scans.pop(next(iter(self._scans)))
            parts = []
            n_base = len(self._mapped) if self._mapped else 0
            if self._mapped is not None and start < n_base:
                parts.append(self._mapped.matrix[start:] @ query)
            if self._extra is not None and len(self._extra):
                parts.append(self._extra[max(0, start - n_base) :] @ query)
            sims = self._scans[key] = np.concatenate(parts) if parts else np.zeros(0, np.float32)
        return sims

    # ------------------------------------------------------------------ keeping up with the table
    def refresh(self) -> None:
        """Take in what the table (and the files, written by other processes) gained since the last look: one
        counter read and a stat when nothing did."""
        top = self.db.embedding_counter()
        stamp = self.files.meta_stamp() if self.files else None
        if top == self._known and stamp == self._stamp:
            return
        if top < self.seq:  # the table was replaced behind our back (a restored file): start over
            self._forget_rows()
        if stamp != self._stamp or (self._meta is None and self.files is not None):
            self._load_files(top)
        self._catch_up()
        self._known = top

    def _forget_rows(self) -> None:
        self._meta = self._mapped = self._ann = self._ann_buf = self._extra = None
        self._extra_pks = np.zeros(0, np.int64)
        self._extra_seqs = np.zeros(0, np.int64)
        self._positions = Positions()
        self._scans.clear()
        self._stamp = None

    def _load_files(self, top: int) -> None:
        assert self.files is not None
        self._stamp = self.files.meta_stamp()
        meta = self.files.read_meta()
        if meta is not None and not self._belongs(meta, top):
            meta = None
        mapped = self.files.map_rows(meta) if meta is not None else None
        if meta is None or mapped is None or (self._dim is not None and meta.dim != self._dim):
            if self._meta is not None:  # our files vanished or were replaced by something unusable
                self._forget_rows()
                self._stamp = self.files.meta_stamp()
            return
        if self._meta is not None and meta.generation == self._meta.generation and meta.rows < self._meta.rows:
            return  # an older meta than the one we hold: ignore it
        opened = self.files.open_ann(meta)
        self._ann, self._ann_buf = opened if opened else (None, None)
        if self._meta is None or meta.generation != self._meta.generation:
            self._positions = Positions()
        self._meta, self._mapped, self._dim = meta, mapped, meta.dim
        keep = self._extra_seqs > meta.seq  # rows we held in memory that the files now have
        self._extra_pks, self._extra_seqs = self._extra_pks[keep], self._extra_seqs[keep]
        self._extra = self._extra[keep] if self._extra is not None else None
        self._after_rows_changed()

    def _belongs(self, meta: Meta, top: int) -> bool:
        """Whether the files were made from this table: their newest row must still be the table's."""
        if meta.seq > top:
            return False
        if meta.seq == 0:
            return True
        pk = self.db.vector_pk_at(self.model, meta.seq)
        return pk is None or pk == meta.last_pk  # None: that memory was forgotten or embedded again since

    def _after_rows_changed(self) -> None:
        self._positions.update(self._all_pks())
        self._scans.clear()

    def _catch_up(self) -> None:
        for rows in self.db.vector_batches(self.model, self.seq, _BATCH):
            dim = self._dim or rows[0][2]
            pks, seqs, matrix = decode_rows(rows, dim)
            if not len(pks):
                continue
            self._dim = dim
            self.stats["rows_read"] += len(rows)
            if not self._append_to_files(pks, seqs, matrix):
                self._extra_pks = np.concatenate([self._extra_pks, pks])
                self._extra_seqs = np.concatenate([self._extra_seqs, seqs])
                self._extra = matrix.copy() if self._extra is None else np.vstack([self._extra, matrix])
            self._after_rows_changed()

    def _append_to_files(self, pks: Keys, seqs: Keys, matrix: Matrix) -> bool:
        """Append rows to the files (False: they stay in memory this time)."""
        if self.files is None or len(self._extra_pks):
            return False  # rows before these are not in the files yet: the order must stay the table's
        try:
            with self.files.locked(wait=False) as held:
                if not held:
                    return False
                disk = self.files.read_meta()
                if self._meta is None:
                    generation = (disk.generation + 1) if disk is not None else 1
                    meta = Meta(self.model, matrix.shape[1], generation, 0, 0, 0)
                    self.files.start_generation(meta)
                elif disk != self._meta:
                    return False  # another process moved the files on: we take its rows at the next look
                else:
                    meta = self._meta
                self.files.append_rows(meta, pks, matrix)
                new = replace(meta, rows=meta.rows + len(pks), seq=int(seqs[-1]), last_pk=int(pks[-1]))
                self.files.write_meta(new)
                mapped = self.files.map_rows(new)
                self._stamp = self.files.meta_stamp()
        except OSError:
            return False
        if mapped is None:
            return False
        if self._meta is None:
            self._positions = Positions()
            opened = self.files.open_ann(new)
            self._ann, self._ann_buf = opened if opened else (None, None)
        self._meta, self._mapped = new, mapped
        self.stats["rows_appended"] += len(pks)
        return True

    # ------------------------------------------------------------ page cache
    def read_ahead(self, *, known_out: bool = False) -> Pass | None:
        """Start reading the index's files into the page cache in one sequential background pass (the daemon, when
        it warms a store): a search then finds them in memory instead of faulting them in a page at a time. A file
        already in is left alone, unless `known_out` (a probe just found the files out)."""
        meta = self._disk_meta()
        if meta is None or self.files is None:
            return None
        self._reading = self.files.read_ahead(meta, skip_cached=not known_out)
        return self._reading

    @property
    def mapped(self) -> bool:
        """Whether the index has its files mapped (a look at the table and the files then reads only what changed)."""
        return self._meta is not None

    @property
    def reading(self) -> Pass | None:
        """The read-ahead pass started last (None: none since it ended and was seen to end)."""
        return self._reading

    def in_memory(self) -> bool:
        """Whether a search now would find the index's files in the page cache. When sampling their pages shows
        that it would not, a background pass reads them in (seconds at 100k memories, where the faults of one
        search took seconds each) and this answers False until the pass is over, then True for a while whatever a
        probe says (the daemon is never degraded for longer than one pass at a time); where the system cannot
        tell, True."""
        if self.files is None:
            return True
        now = time.monotonic()
        if self._reading is not None:
            if not self._reading.done.is_set():
                return False
            self._reading = None
            # read through just now: if they are out again already, the cache cannot keep them, and searches fault
            # in what they need (as without a read-ahead) rather than wait for a pass that would be pushed out too
            self._trusted_until = now + _TRUSTED_AFTER_PASS
        if now < self._trusted_until:
            return True
        meta = self._disk_meta()
        share = self.files.resident_share(meta) if meta is not None else None
        if share is None or share >= _RESIDENT_ENOUGH:
            self._trusted_until = now + _PROBE_EVERY
            return True
        self.read_ahead(known_out=True)
        return False

    def _disk_meta(self) -> Meta | None:
        """The files' meta: the one held while the file is unchanged, else read again."""
        if self.files is None:
            return None
        if self._meta is not None and self.files.meta_stamp() == self._stamp:
            return self._meta
        return self.files.read_meta()

    # ----------------------------------------------------------------- search
    @one_blas_thread()
    def search(self, query: Matrix, k: int, filters: Filters) -> list[tuple[int, float]]:
        """Top-k (memory pk, cosine) among memories passing `filters` (the scan on one BLAS thread:
        core/blas_threads.py)."""
        self.refresh()
        total = self._row_count()
        if not total:
            return []
        ann_rows = self._meta.ann_rows if (self._ann is not None and self._meta is not None) else 0
        fetch = min(total, max(4 * k + 20, k))
        while True:
            found = self._candidates(query, fetch, ann_rows)
            live = self._live([pk for pk, _ in found], filters)
            hits = [(pk, s) for pk, s in found if pk in live]
            if len(hits) >= k:
                return hits[:k]
            if ann_rows and fetch >= min(total, _ANN_MAX_FETCH):
                return self._filtered_exact(query, k, filters, hits)
            if fetch >= total:
                return hits
            fetch = min(total, fetch * 4)

    def _live(self, pks: list[int], filters: Filters) -> set[int]:
        """Which of these memories pass the filters (asked of the store once per memory while it is unchanged)."""
        where, params = filters.where()
        state = (self.db.write_stamp(), where, tuple(params))
        seen_state, known = self._live_seen
        if seen_state != state or len(known) > _LIVE_SEEN:
            known = {}
            self._live_seen = (state, known)
        unknown = [pk for pk in pks if pk not in known]
        if unknown:
            passing = self.db.live_pks(unknown, filters)
            known.update({pk: pk in passing for pk in unknown})
        return {pk for pk in pks if known[pk]}

    def _candidates(self, query: Matrix, fetch: int, ann_rows: int) -> list[tuple[int, float]]:
        """The best `fetch` memories: the graph's answer over its rows and an exact scan of the rows after it, every
        score computed exactly from the latest row of each memory. Best first."""
        scored: dict[int, float] = {}
        if ann_rows:
            self.last_method = "ann"
            self._ann.expansion_search = max(_ANN_EXPANSION_SEARCH, fetch)
            keys = np.asarray(self._ann.search(query, min(fetch, len(self._ann))).keys, dtype=np.int64)
            rows = self._positions.rows(keys)
            has = rows >= 0  # a memory forgotten since the graph was written has no row any more
            if has.any():
                scores = self._matrix_rows(rows[has]) @ query
                scored.update(zip(keys[has].tolist(), scores.tolist(), strict=True))
        else:
            self.last_method = "exact"
            self.stats["full_scans"] += 1
        sims = self._similarities(query, ann_rows)
        if len(sims):
            take = min(len(sims), fetch)
            top = np.argpartition(-sims, take - 1)[:take] if take < len(sims) else np.arange(len(sims))
            rows = top.astype(np.int64) + ann_rows
            pks = self._all_pks()[rows]
            latest = self._positions.rows(pks) == rows  # an older vector of a memory embedded again
            scored.update(zip(pks[latest].tolist(), sims[top[latest]].tolist(), strict=True))
        return sorted(scored.items(), key=lambda kv: -kv[1])[:fetch]

    def _filtered_exact(
        self, query: Matrix, k: int, filters: Filters, hits: list[tuple[int, float]]
    ) -> list[tuple[int, float]]:
        """The graph's best answers were mostly filtered out: when the filter admits few memories, score those
        exactly (never the whole store); otherwise the short list is the answer."""
        members = self.db.filtered_pks(filters, _FILTERED_EXACT_MAX + 1)
        if len(members) > _FILTERED_EXACT_MAX:
            return hits
        scores = self.cosines(query, members)
        return sorted(scores.items(), key=lambda kv: -kv[1])[:k]

    def _stored(self, pks: list[int]) -> tuple[Any, Any] | None:
        """The rows of these memories' vectors and their pks, those that have one from this model; None if none."""
        self.refresh()
        if not pks or self._dim is None:
            return None
        rows = self._positions.rows(pks)
        has = rows >= 0
        if not has.any():
            return None
        return rows[has], np.asarray(pks, dtype=np.int64)[has]

    def vectors(self, pks: list[int]) -> dict[int, Matrix]:
        """The stored vectors of these memories (those that have one from this model)."""
        stored = self._stored(pks)
        if stored is None:
            return {}
        rows, wanted = stored
        matrix = self._matrix_rows(rows)
        return {pk: matrix[i] for i, pk in enumerate(wanted.tolist())}

    def cosines(self, query: Matrix, pks: list[int]) -> dict[int, float]:
        """Similarity of specific memories to the query (those with a vector from this model)."""
        stored = self._stored(pks)
        if stored is None:
            return {}
        rows, wanted = stored
        ann_rows = self._meta.ann_rows if (self._ann is not None and self._meta is not None) else 0
        cached = None if ann_rows else self._scans.get(query.tobytes() + (0).to_bytes(8, "little"))
        if cached is not None and len(cached) == self._row_count():
            values = cached[rows]
        else:
            values = self._matrix_rows(rows) @ query
        return dict(zip(wanted.tolist(), values.tolist(), strict=True))

    # ------------------------------------------------------------ maintenance
    def maintenance(self, *, force: bool = False) -> Callable[[], bool] | None:
        """The work that brings the ANN graph up to date (built once the store has `ann_threshold` vectors, then
        extended by the rows written after it), as a job that needs neither the store nor its lock: the daemon
        runs it in the background, bulk commands when they finish. None when nothing is due (`force`: extend it
        by any number of rows, not only past FOLD_MIN)."""
        self.refresh()
        files, meta = self.files, self._meta
        if files is None or meta is None or len(self._extra_pks):
            return None
        live = self.db.count_vectors(self.model)
        compact = meta.rows >= _COMPACT_MIN_ROWS and meta.rows - live > _COMPACT_SHARE * meta.rows
        graph = self._positions.distinct() >= self.ann_threshold
        pending = meta.rows - (meta.ann_rows if self._ann is not None else 0)
        extend = graph and (self._ann is None or pending >= FOLD_MIN or (force and pending > 0))
        if not (compact or extend):
            return None
        db_path = self.db.path

        def job() -> bool:
            return _maintain(files, meta, db_path, compact, graph, self.stats)

        return job

    def maintain(self, *, force: bool = False) -> bool:
        """Run the maintenance job here and now (bulk commands); True when it changed the files."""
        job = self.maintenance(force=force)
        return job() if job is not None else False


def _maintain(files: VectorFiles, seen: Meta, db_path: Path, compact: bool, graph: bool, stats: dict[str, int]) -> bool:
    with files.locked(wait=True) as held:
        if not held:
            return False
        meta = files.read_meta()
        if meta is None or meta.generation != seen.generation or meta.ann_file != seen.ann_file:
            return False  # another process did it meanwhile
        if compact:
            meta = _compact(files, meta, db_path)
            if not graph:
                files.write_meta(meta)
                files.remove_unused(meta)
                return True
        mapped = files.map_rows(meta)
        if mapped is None:
            return False
        index = files.load_ann(meta) if meta.ann_file else None
        start = meta.ann_rows if index is not None else 0
        if index is None:
            from usearch.index import Index

            index = Index(
                ndim=meta.dim,
                metric="ip",  # vectors are unit length: inner product is cosine
                dtype="f16",  # candidates only: every answer is re-scored from the float32 rows
                connectivity=_ANN_CONNECTIVITY,
                expansion_add=_ANN_EXPANSION_ADD,
                expansion_search=_ANN_EXPANSION_SEARCH,
            )
            stats["ann_builds"] += 1
        else:
            stats["ann_extends"] += 1
        keys = mapped.pks[start:]
        if len(keys):
            # The last row of a memory in these rows counts; a memory the graph has already is replaced.
            reversed_unique = np.unique(keys[::-1], return_index=True)[1]
            last = np.sort(len(keys) - 1 - reversed_unique)
            keys, vectors = keys[last], np.asarray(mapped.matrix[start:][last])
            present = [int(key) for key in keys.tolist() if index.contains(key)]
            if present:
                index.remove(present)
            index.add(keys.astype(np.uint64), vectors)
        meta = replace(meta, ann_rows=meta.rows, ann_seq=meta.seq)
        meta = replace(meta, ann_file=files.save_ann(index, meta))
        files.write_meta(meta)
        files.remove_unused(meta)
        return True


def _compact(files: VectorFiles, meta: Meta, db_path: Path) -> Meta:
    """A new generation of the row files with only the table's current rows (forgotten memories and older vectors
    of re-embedded ones dropped); the graph keeps covering the rows up to its sequence number."""
    from codememory.store.database import Database

    db = Database.open(db_path)
    try:
        new = Meta(meta.model, meta.dim, meta.generation + 1, 0, 0, 0, meta.ann_file, 0, meta.ann_seq)
        files.start_generation(new)
        for rows in db.vector_batches(meta.model, 0, _BATCH):
            pks, seqs, matrix = decode_rows(rows, meta.dim)
            if not len(pks):
                continue
            files.append_rows(new, pks, matrix)
            covered = int((seqs <= meta.ann_seq).sum())
            new = replace(
                new, rows=new.rows + len(pks), seq=int(seqs[-1]), last_pk=int(pks[-1]), ann_rows=new.ann_rows + covered
            )
        return new
    finally:
        db.close()
