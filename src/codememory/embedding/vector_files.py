"""The vector index's files under `.codememory/cache/vectors/`: a rebuildable copy of the embeddings table that a
process maps into memory instead of reading, and the ANN graph over it.

Per model (`<slug>` below):
- `<slug>.json`, the meta, written last and atomically: which generation of the row files counts, how many rows,
  the highest embedding sequence number they hold, and the ANN file with the rows it covers.
- `<slug>.<gen>.vec` (float32 rows) and `<slug>.<gen>.pks` (int64 memory row keys): append-only, in the table's
  sequence order, so a vector written after the files is simply appended. A memory embedded again is appended
  again; its last row counts. A new generation (new names) is written when the rows are compacted.
- `<slug>.<gen>.<seq>.usearch`: the HNSW graph (usearch) over the first `ann_rows` rows, written under a new name
  each time it is extended and never changed afterwards, so a process that maps it is never disturbed.
- `<slug>.lock`: writers of the files take it (a reader never waits: an append that cannot take it now is kept
  in memory until a later search).

Everything here is an optimisation: a missing, foreign or damaged file is ignored and rebuilt from the table.
The folder may be committed with the project, so it is opened without following links (safe_files) and checked
before use; its contents are numbers, never code.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import mmap
import os
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from codememory.core import page_cache, safe_files
from codememory.errors import UnsafePath

Matrix = npt.NDArray[np.float32]
Keys = npt.NDArray[np.int64]
_MAX_META = 100_000
_RECENT_ROWS = 2048  # rows (1.5 KB each at 384 dimensions) a mapping keeps after reading them: 3 MB
_FORMAT = 1
# The most bytes per row a graph file may take (usearch, half-precision vectors and 16 links a node: about
# 2 * dim + 150): a search's read-ahead reads no further, whatever the file's length (the folder is untrusted).
_ANN_ROW_BYTES = 4096
_ANN_HEADER_BYTES = 1 << 16


def slug(model: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model)[:60]
    return f"{safe}-{hashlib.sha1(model.encode()).hexdigest()[:8]}"


@dataclass
class Meta:
    model: str
    dim: int
    generation: int  # which row files count
    rows: int  # rows of the row files that count (a crash may leave more bytes after them: ignored, then cut)
    seq: int  # highest embedding sequence number among those rows
    last_pk: int  # the memory whose vector has that sequence number (a check that the files belong to the table)
    ann_file: str | None = None
    ann_rows: int = 0  # rows [0, ann_rows) are in the ANN graph
    ann_seq: int = 0
    format: int = _FORMAT

    @classmethod
    def parse(cls, raw: Any, model: str) -> Meta | None:
        if not isinstance(raw, dict) or raw.get("format") != _FORMAT or raw.get("model") != model:
            return None
        try:
            meta = cls(**{k: raw[k] for k in cls.__dataclass_fields__})
        except (KeyError, TypeError):
            return None
        ints = (meta.dim, meta.generation, meta.rows, meta.seq, meta.last_pk, meta.ann_rows, meta.ann_seq)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in ints) or meta.dim == 0:
            return None
        if meta.ann_file is not None and (not isinstance(meta.ann_file, str) or "/" in meta.ann_file):
            return None
        if meta.ann_rows > meta.rows or meta.ann_seq > meta.seq:
            return None
        return meta


class Mapped:
    """The row files of one generation, mapped read-only (nothing is read until a row is used). Scans read the
    mapping; a few scattered rows (re-scoring the graph's candidates) are read with pread instead, so the pages of
    a long-running daemon's mapping do not fill up its resident memory one random row at a time."""

    def __init__(self, pks: Keys, matrix: Matrix, maps: list[mmap.mmap], vec_fd: int | None = None) -> None:
        self.pks = pks
        self.matrix = matrix
        self._maps = maps
        self._fd = vec_fd
        # rows read lately: a retrieval re-scores the graph's answers for the same phrases twice (with and without
        # its tool phrases), mostly the same rows; the files of a generation never change, so a row read stays true
        self._recent: dict[int, bytes] = {}
        self._recent_lock = threading.Lock()
        self.rows_read = 0  # rows read from the file (not from `_recent`)

    def __len__(self) -> int:
        return len(self.pks)

    def rows(self, index: npt.NDArray[np.int64]) -> Matrix:
        if self._fd is None or not hasattr(os, "pread"):
            return np.asarray(self.matrix[index])
        dim = self.matrix.shape[1]
        width = dim * 4
        wanted = index.tolist()
        with self._recent_lock:
            found = [self._recent.get(row) for row in wanted]
        read: dict[int, bytes] = {}
        for row, data in zip(wanted, found, strict=True):
            if data is None and row not in read:
                read[row] = os.pread(self._fd, width, row * width)
        if read:
            self.rows_read += len(read)
            with self._recent_lock:
                self._recent.update(read)
                for old in list(self._recent)[: max(0, len(self._recent) - _RECENT_ROWS)]:
                    del self._recent[old]
        joined = b"".join(data if data is not None else read[row] for row, data in zip(wanted, found, strict=True))
        return np.frombuffer(joined, dtype="<f4").reshape(len(wanted), dim).copy()

    def __del__(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


class VectorFiles:
    def __init__(self, cache_dir: Path, model: str) -> None:
        self.folder = cache_dir / "vectors"
        self.model = model
        self.base = slug(model)

    # ------------------------------------------------------------------ names
    def _path(self, name: str) -> Path:
        return self.folder / name

    def _rows_names(self, generation: int) -> tuple[str, str]:
        return f"{self.base}.{generation}.vec", f"{self.base}.{generation}.pks"

    @property
    def meta_path(self) -> Path:
        return self._path(f"{self.base}.json")

    def meta_stamp(self) -> tuple[int, int, int] | None:
        """What changes whenever the meta is replaced (checked before every search: a stat, no read)."""
        try:
            st = os.stat(self.meta_path, follow_symlinks=False)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    # ------------------------------------------------------------------ reading
    def read_meta(self) -> Meta | None:
        try:
            return Meta.parse(json.loads(safe_files.read_text(self.meta_path, _MAX_META)), self.model)
        except (OSError, ValueError, UnsafePath):
            return None

    def map_rows(self, meta: Meta) -> Mapped | None:
        """The first `meta.rows` rows, or None when the files are missing or shorter than the meta says."""
        vec_name, pks_name = self._rows_names(meta.generation)
        if meta.rows == 0:
            return Mapped(np.zeros(0, np.int64), np.zeros((0, meta.dim), np.float32), [])
        maps = []
        try:
            vec_map = self._map(vec_name, meta.rows * meta.dim * 4)
            maps.append(vec_map)
            pks_map = self._map(pks_name, meta.rows * 8)
            maps.append(pks_map)
        except (OSError, ValueError, UnsafePath):
            for m in maps:
                with contextlib.suppress(BufferError):
                    m.close()
            return None
        matrix = np.frombuffer(vec_map, dtype="<f4", count=meta.rows * meta.dim).reshape(meta.rows, meta.dim)
        pks = np.frombuffer(pks_map, dtype="<i8", count=meta.rows)
        try:
            fd: int | None = safe_files.open_fd(self._path(vec_name), os.O_RDONLY)
        except (OSError, UnsafePath):
            fd = None
        return Mapped(pks, matrix, maps, fd)

    def _map(self, name: str, need: int) -> mmap.mmap:
        fd = safe_files.open_fd(self._path(name), os.O_RDONLY)
        try:
            if os.fstat(fd).st_size < need:
                raise ValueError(f"{name} is shorter than its meta says")
            return mmap.mmap(fd, need, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)

    def open_ann(self, meta: Meta) -> tuple[Any, mmap.mmap] | None:
        """The ANN graph, mapped (usearch's `view`: only the pages a search walks are read), or None."""
        if not meta.ann_file or not meta.ann_file.startswith(self.base + "."):
            return None
        try:
            fd = safe_files.open_fd(self._path(meta.ann_file), os.O_RDONLY)
            try:
                # the view walks every node once to find where each one starts: out of the page cache, that walk
                # is a fault per page. WILLNEED is a head start only (Linux reads at most its readahead maximum
                # however much is asked: 8 MiB of a 64 MiB file, measured); the daemon maps the graph only once a
                # read-ahead pass (core/page_cache.py) has read it through
                advise = getattr(os, "posix_fadvise", None)
                if advise is not None:
                    advise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
                buf = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            finally:
                os.close(fd)
            from usearch.index import Index

            index = Index.restore(memoryview(buf), view=True)
        except (OSError, ValueError, RuntimeError, UnsafePath):
            return None
        if index is None or index.ndim != meta.dim or len(index) > meta.ann_rows:
            return None
        return index, buf

    def _used_files(self, meta: Meta) -> list[tuple[str, int]]:
        """The files a search reads and how many of their bytes, in the order a process opening them touches them
        (the graph's view walks it whole; the row keys are read whole; the rows only where the graph lands). The
        lengths are the meta's, not the files': bytes after them are never used."""
        vec_name, pks_name = self._rows_names(meta.generation)
        used = [(vec_name, meta.rows * meta.dim * 4), (pks_name, meta.rows * 8)] if meta.rows else []
        if meta.ann_file and meta.ann_file.startswith(self.base + ".") and "/" not in meta.ann_file:
            used.insert(0, (meta.ann_file, meta.ann_rows * (2 * meta.dim + _ANN_ROW_BYTES) + _ANN_HEADER_BYTES))
        return used

    def resident_share(self, meta: Meta) -> float | None:
        """The smallest share of pages the page cache holds over the files a search reads (sampled, without
        reading from disk); None when this system cannot tell or there is nothing to read."""
        shares = []
        for name, length in self._used_files(meta):
            try:
                fd = safe_files.open_fd(self._path(name), os.O_RDONLY)
            except (OSError, UnsafePath):
                continue
            try:
                share = page_cache.resident_share(fd, min(length, os.fstat(fd).st_size))
            finally:
                os.close(fd)
            if share is None:
                return None
            shares.append(share)
        return min(shares) if shares else None

    def read_ahead(self, meta: Meta, *, skip_cached: bool) -> page_cache.Pass:
        """Read the files a search uses into the page cache in one sequential background pass."""
        files = [(functools.partial(self._open_read, name), length) for name, length in self._used_files(meta)]
        return page_cache.read_ahead(files, skip_cached=skip_cached)

    def _open_read(self, name: str) -> int:
        return safe_files.open_fd(self._path(name), os.O_RDONLY)

    def load_ann(self, meta: Meta) -> Any:
        """A modifiable copy of the ANN graph (for extending it), or None."""
        if not meta.ann_file or not meta.ann_file.startswith(self.base + "."):
            return None
        try:
            from usearch.index import Index

            index = Index.restore(safe_files.read_bytes(self._path(meta.ann_file)))
        except (OSError, ValueError, RuntimeError, UnsafePath):
            return None
        if index is None or index.ndim != meta.dim:
            return None
        return index

    # ------------------------------------------------------------------ writing (under the lock)
    @contextlib.contextmanager
    def locked(self, wait: bool) -> Iterator[bool]:
        """The writers' lock: yields whether it is held (False: another process writes now, or no locking here)."""
        try:
            fd = safe_files.open_fd(self._path(f"{self.base}.lock"), os.O_RDWR | os.O_CREAT, create_dirs=True)
        except (OSError, UnsafePath):
            yield False
            return
        try:
            yield _lock(fd, wait)
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def write_meta(self, meta: Meta) -> None:
        safe_files.write_atomic(self.meta_path, json.dumps(asdict(meta)))

    def start_generation(self, meta: Meta) -> None:
        """Empty row files for a new generation (its rows are then appended)."""
        for name in self._rows_names(meta.generation):
            fd = safe_files.open_fd(self._path(name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, create_dirs=True)
            os.close(fd)

    def append_rows(self, meta: Meta, pks: Keys, matrix: Matrix) -> None:
        """Append rows after the first `meta.rows` (whatever a crashed writer left after them is cut first)."""
        vec_name, pks_name = self._rows_names(meta.generation)
        for name, data, width in (
            (vec_name, np.ascontiguousarray(matrix, dtype="<f4"), meta.dim * 4),
            (pks_name, np.ascontiguousarray(pks, dtype="<i8"), 8),
        ):
            fd = safe_files.open_fd(self._path(name), os.O_WRONLY)
            try:
                os.ftruncate(fd, meta.rows * width)
                os.lseek(fd, 0, os.SEEK_END)
                view = memoryview(data.tobytes())
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)

    def save_ann(self, index: Any, meta: Meta) -> str:
        """Write the graph under a new name; returns it (the caller records it in the meta)."""
        name = f"{self.base}.{meta.generation}.{meta.ann_seq}.{os.urandom(3).hex()}.usearch"
        safe_files.write_atomic(self._path(name), bytes(index.save()))
        return name

    def remove_unused(self, meta: Meta) -> None:
        """Delete this model's files that the meta no longer names (best effort: a file another process still maps
        stays readable to it on POSIX, and on Windows the delete fails until it lets go)."""
        keep = {*self._rows_names(meta.generation), meta.ann_file, f"{self.base}.json", f"{self.base}.lock"}
        safe_files.remove_files(
            self.folder,
            lambda name: name.startswith(self.base + ".") and name not in keep and not name.endswith(".tmp"),
        )


def _lock(fd: int, wait: bool) -> bool:
    try:
        import fcntl
    except ImportError:
        try:
            import msvcrt
        except ImportError:
            return False
        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
            return True
        except OSError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        return True
    except OSError:
        return False
