"""Vector search over the embeddings table.

The table is the source of truth. A snapshot of it (matrix + row keys, and an ANN index once the store
has `ann_threshold` vectors) is cached in memory and in `.codememory/cache/vectors/`; vectors written
after the snapshot are searched exactly as a small delta, and the snapshot is rebuilt when the delta
grows, when it is missing or unreadable, or when it belongs to another model.

ANN library: usearch (HNSW) — maintained, wheels for Linux/macOS/Windows on every recent Python, an
index file that memory-maps on load, and no C++ toolchain needed at install (hnswlib ships sources only).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from codememory.core import safe_files
from codememory.store.database import Database
from codememory.store.filters import Filters

Matrix = npt.NDArray[np.float32]
_DELTA_LIMIT = 2_000
_ANN_CONNECTIVITY = 16
_ANN_EXPANSION_ADD = 128
_ANN_EXPANSION_SEARCH = 128
_MAX_META = 100_000


@dataclass
class _Snapshot:
    model: str
    seq: int  # highest embedding sequence number included
    pks: npt.NDArray[np.int64]
    matrix: Matrix
    ann: Any = None  # usearch.index.Index when the snapshot is large
    _position: dict[int, int] | None = None

    def position(self) -> dict[int, int]:
        if self._position is None:
            self._position = {int(pk): i for i, pk in enumerate(self.pks)}
        return self._position


def _slug(model: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model)[:60]
    return f"{safe}-{hashlib.sha1(model.encode()).hexdigest()[:8]}"


def from_blob(blob: bytes) -> Matrix:
    return np.frombuffer(blob, dtype=np.float32)


class VectorIndex:
    def __init__(self, db: Database, model: str, cache_dir: Path | None, ann_threshold: int) -> None:
        self.db = db
        self.model = model
        self.cache_dir = cache_dir
        self.ann_threshold = ann_threshold
        self._snap: _Snapshot | None = None
        self._scans: dict[bytes, Matrix] = {}  # recent queries' similarity to every snapshot row
        self.last_method = "none"

    # ------------------------------------------------------------------ cache
    def _paths(self) -> tuple[Path, Path, Path] | None:
        if self.cache_dir is None:
            return None
        base = self.cache_dir / "vectors" / _slug(self.model)
        return base.with_suffix(".npz"), base.with_suffix(".json"), base.with_suffix(".usearch")

    def _load_cached(self) -> _Snapshot | None:
        paths = self._paths()
        if not paths:
            return None
        npz, meta_path, ann_path = paths
        try:  # the cache folder may hold links committed with the project: never followed (safe_files)
            meta = json.loads(safe_files.read_text(meta_path, _MAX_META))
            if meta.get("model") != self.model:
                return None
            with safe_files.open_read(npz) as f, np.load(f) as data:
                snap = _Snapshot(self.model, int(meta["seq"]), data["pks"], data["matrix"])
            if meta.get("ann"):
                from usearch.index import Index

                snap.ann = Index.restore(safe_files.read_bytes(ann_path))
                if snap.ann is None or len(snap.ann) != len(snap.pks):
                    return None
            return snap
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            return None  # a damaged cache is rebuilt, never trusted

    def _save(self, snap: _Snapshot) -> None:
        paths = self._paths()
        if not paths:
            return
        npz, meta_path, ann_path = paths
        try:
            with safe_files.atomic_file(npz) as f:
                np.savez(f, pks=snap.pks, matrix=snap.matrix)
            if snap.ann is not None:
                safe_files.write_atomic(ann_path, bytes(snap.ann.save()))
            meta = {"model": self.model, "seq": snap.seq, "count": len(snap.pks), "ann": snap.ann is not None}
            # written last: a crash leaves the old meta, which is rebuilt
            safe_files.write_atomic(meta_path, json.dumps(meta))
        except OSError:
            pass  # the cache is an optimisation; searching still works from the table

    def _build(self) -> _Snapshot:
        rows = self.db.vectors(self.model)
        if rows:
            pks = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            matrix = np.vstack([from_blob(r[2]) for r in rows])
            seq = max(r[1] for r in rows)
        else:
            pks, matrix, seq = np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32), 0
        snap = _Snapshot(self.model, seq, pks, matrix)
        if len(pks) >= self.ann_threshold:
            from usearch.index import Index

            ann = Index(
                ndim=matrix.shape[1],
                metric="ip",  # vectors are unit length: inner product is cosine
                dtype="f32",
                connectivity=_ANN_CONNECTIVITY,
                expansion_add=_ANN_EXPANSION_ADD,
                expansion_search=_ANN_EXPANSION_SEARCH,
            )
            ann.add(pks.astype(np.uint64), matrix)
            snap.ann = ann
        self._save(snap)
        return snap

    def snapshot(self) -> tuple[_Snapshot, list[tuple[int, int, bytes]]]:
        """The current snapshot and the rows written since it (rebuilding when that delta is large)."""
        count, top = self.db.embedding_state(self.model)
        snap = self._snap or self._load_cached()
        if snap is not None and top < snap.seq:
            snap = None  # the table was rebuilt behind our back (e.g. restored file): start over
        delta = self.db.vectors(self.model, snap.seq) if snap is not None else []
        stale = snap is None or len(delta) > _DELTA_LIMIT or len(snap.pks) > 2 * max(count, 1) + _DELTA_LIMIT
        want_ann = count >= self.ann_threshold
        if not stale and snap is not None and want_ann and snap.ann is None and len(snap.pks) + len(delta) > 0:
            stale = True
        if stale:
            snap, delta = self._build(), []
        assert snap is not None
        if snap is not self._snap:
            self._scans.clear()
        self._snap = snap
        return snap, delta

    # ----------------------------------------------------------------- search
    def search(self, query: Matrix, k: int, filters: Filters) -> list[tuple[int, float]]:
        """Top-k (memory pk, cosine) among memories passing `filters`."""
        snap, delta = self.snapshot()
        delta_pks = {r[0] for r in delta}
        scores: dict[int, float] = {}
        if delta:
            d_matrix = np.vstack([from_blob(r[2]) for r in delta])
            for pk, score in zip((r[0] for r in delta), d_matrix @ query, strict=True):
                scores[pk] = float(score)
        total = len(snap.pks)
        fetch = min(total, max(4 * k + 20, k))
        while True:
            found = dict(scores)
            if total:
                for pk, score in self._search_snapshot(snap, query, fetch):
                    if pk not in delta_pks:
                        found[pk] = score
            ranked = sorted(found.items(), key=lambda kv: -kv[1])
            live = self.db.live_pks([pk for pk, _ in ranked], filters)
            hits = [(pk, s) for pk, s in ranked if pk in live]
            if len(hits) >= k or fetch >= total:
                return hits[:k]
            fetch = min(total, fetch * 4)

    def _similarities(self, snap: _Snapshot, query: Matrix) -> Matrix:
        key = query.tobytes()
        sims = self._scans.get(key)
        if sims is None or len(sims) != len(snap.pks):
            if len(self._scans) >= 8:  # a query expansion has a few phrases; keep each one's scan
                self._scans.pop(next(iter(self._scans)))
            sims = self._scans[key] = snap.matrix @ query
        return sims

    def cosines(self, query: Matrix, pks: list[int]) -> dict[int, float]:
        """Similarity of specific memories to the query (reusing the last full scan when there was one)."""
        snap, delta = self.snapshot()
        out: dict[int, float] = {}
        for pk, _seq, blob in delta:
            if pk in pks:
                out[pk] = float(from_blob(blob) @ query)
        rest = [pk for pk in pks if pk not in out]
        if snap.ann is None and len(snap.pks):
            sims, position = self._similarities(snap, query), snap.position()
            for pk in rest:
                i = position.get(pk)
                if i is not None:
                    out[pk] = float(sims[i])
            rest = [pk for pk in rest if pk not in out]
        if rest:
            for pk, blob in self.db.vectors_for(self.model, rest).items():
                out[pk] = float(from_blob(blob) @ query)
        return out

    def _search_snapshot(self, snap: _Snapshot, query: Matrix, fetch: int) -> list[tuple[int, float]]:
        if snap.ann is not None and fetch < len(snap.pks) // 2:
            self.last_method = "ann"
            matches = snap.ann.search(query, fetch)
            return [(int(key), 1.0 - float(dist)) for key, dist in zip(matches.keys, matches.distances, strict=True)]
        self.last_method = "exact"
        sims = self._similarities(snap, query)
        top = np.argpartition(-sims, fetch - 1)[:fetch] if fetch < len(sims) else np.arange(len(sims))
        return [(int(snap.pks[i]), float(sims[i])) for i in top]
