"""Whether a file's pages are in the operating system's page cache, and reading files into it in one sequential pass.

A large store's vector files and graph (hundreds of MB at 100k memories) are memory-mapped or read a row at a
time. When the page cache does not hold them (the machine was rebooted, or other work pushed them out), a search
reads them by random page faults: one request took seconds while thousands of scattered pages came from disk.
Read sequentially in one pass, the same bytes take a fraction of that. So:

- `resident_share` samples a file's pages with `preadv(RWF_NOWAIT)`, which answers from the cache or fails at once
  instead of going to disk (Linux 4.14+; it needs no ownership of the file, unlike `mincore` on a file mapping).
  Elsewhere it answers None (unknown), and callers treat the file as in memory, as before. For a page it does not
  hold, the kernel starts reading around it (a readahead window): probing a file out of the cache begins to bring
  it in, so the second probe of a file may already find what the first did not.
- `read_ahead` queues files for one background thread that asks the kernel for them (`posix_fadvise(WILLNEED)`,
  which Linux caps at its readahead maximum, a few MiB a file: a head start) and then reads them through in large
  chunks, so the caller can tell when the pass is over (`Pass.done`). Each
  file is read up to the length its caller knows it uses: the files may come from an untrusted folder, and a
  file longer than that (a crashed writer's leftovers, or a huge sparse one) must not be read whole.

Reading through the cache uses no memory of the process: the chunks go to one reused buffer.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

log = logging.getLogger("codememory")

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_SAMPLES = 64  # pages probed per file: enough to tell "mostly in memory" from "mostly not", about 0.1 ms
_CHUNK = 4 << 20
_NOWAIT = getattr(os, "RWF_NOWAIT", None)


def resident_share(fd: int, size: int, samples: int = _SAMPLES) -> float | None:
    """The share of `samples` pages spread evenly over the first `size` bytes that the page cache holds, or None
    when this system cannot tell without reading from disk."""
    if _NOWAIT is None or not hasattr(os, "preadv"):
        return None
    pages = max(1, -(-size // PAGE))
    step = max(1, pages // samples)
    probed = held = 0
    buf = bytearray(1)  # one byte is enough: the call fails unless the whole page is cached
    for page in range(0, pages, step):
        probed += 1
        try:
            os.preadv(fd, [buf], page * PAGE, _NOWAIT)
            held += 1
        except BlockingIOError:
            pass
        except OSError:  # not supported by this file system (or not a regular file): unknown
            return None
    return held / probed if probed else None


@dataclass
class Pass:
    """One queued read-ahead: `done` is set once every file was read through (or could not be)."""

    opened: list[tuple[int, int | None]]  # descriptors (closed by the reader) and the bytes to read (None: all)
    # leave out a file whose sampled pages are all cached (no copying at a warm start); not after a probe found the
    # files out: that probe had the kernel read around the pages it sampled, so they are in while the rest is not
    skip_cached: bool
    done: threading.Event = field(default_factory=threading.Event)
    bytes_read: int = 0  # of the files not already in the cache (those are left alone)


class _Reader:
    """The one thread that reads queued files, one after another (two passes at once would make the disk seek
    between them)."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Pass] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, opened: list[tuple[int, int | None]], skip_cached: bool) -> Pass:
        work = Pass(opened, skip_cached)
        self._queue.put(work)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="codememory-read-ahead", daemon=True)
                self._thread.start()
        return work

    def _run(self) -> None:
        buf = bytearray(_CHUNK)
        view = memoryview(buf)
        while True:
            try:
                work = self._queue.get(timeout=5.0)
            except queue.Empty:
                with self._lock:  # quit when idle; `submit` starts a new thread when needed
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            try:
                # the bytes to read: no more than the file holds (a length from an untrusted file may be absurd)
                sizes = [
                    (fd, os.fstat(fd).st_size if n is None else min(n, os.fstat(fd).st_size)) for fd, n in work.opened
                ]
                for fd, size in sizes:  # the kernel starts on every file, then each is waited for in turn
                    _advise_will_need(fd, size)  # (here, not in the caller: asking for much can block a while)
                for fd, size in sizes:
                    if not (work.skip_cached and resident_share(fd, size) == 1.0):
                        work.bytes_read += _read_through(fd, view, size)
            except Exception:  # the pass is only an optimisation: searches fault in what it could not read
                log.exception("read-ahead failed")
            finally:
                for fd, _length in work.opened:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                work.done.set()


def drop(path: str | os.PathLike[str]) -> bool:
    """Push a file out of the page cache, as memory pressure would: written pages are flushed first (only clean pages
    can be dropped). False where the system cannot (no `posix_fadvise`). For benchmarks and tests of a cold cache."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return True


def _advise_will_need(fd: int, size: int) -> None:
    advise = getattr(os, "posix_fadvise", None)
    if advise is not None and size:
        with contextlib.suppress(OSError):
            advise(fd, 0, size, os.POSIX_FADV_WILLNEED)


def _read_through(fd: int, view: memoryview, size: int) -> int:
    """Read the first `size` bytes (fewer if the file is shorter); returns how many were read."""
    offset = 0
    while offset < size:
        try:
            n = os.preadv(fd, [view[: min(len(view), size - offset)]], offset)
        except OSError:
            return offset
        if n <= 0:
            return offset
        offset += n
    return offset


_READER = _Reader()


def read_ahead(files: Sequence[tuple[Callable[[], int], int | None]], *, skip_cached: bool = False) -> Pass:
    """Read these files into the page cache in the background, in this order: (an opener returning a descriptor,
    the bytes of the file to read, None for all of it); an opener that fails is skipped. `skip_cached`: see
    `Pass`."""
    opened: list[tuple[int, int | None]] = []
    for opener, length in files:
        with contextlib.suppress(OSError, ValueError):
            opened.append((opener(), length))
    return _READER.submit(opened, skip_cached)
