"""One BLAS thread for a query's vector products, whoever loaded numpy first.

numpy's OpenBLAS splits any matrix-vector product over about 9,000 values across its threads: a search's scan of
the rows, the re-scoring of a hundred candidates, the background cosines. Each such product takes well under a
millisecond on one core, but its second thread sleeps between calls and must be woken, and on a busy machine
(an agent, its tests and a build beside it) waiting for a core to wake it on cost several milliseconds per product
(benchmarks/README.md, "Hybrid search at 10k: one BLAS thread"). Each output value is computed by one thread
either way, so the results are the same to the bit.

`codememory/__init__.py` asks for one thread through OPENBLAS_NUM_THREADS, which OpenBLAS reads once, when numpy
loads it: the CLI, the daemon and the MCP server import codememory first and get it. A program that imported numpy
before codememory (a notebook, an embedding application, the benchmarks' workers) kept OpenBLAS's default of a
thread per core; here the search sets one thread around its products. An OPENBLAS_NUM_THREADS other than 1 is the
user's own choice and is kept.

Scoped to the search: outside one, bulk work (consolidation's block products) gets the threads it was given. But
OpenBLAS's thread count is one setting for the whole process, so while a search runs, products in the program's
other threads run on one thread too; and it is counted, so overlapping searches restore it only when the last one
leaves.

The OpenBLAS that numpy's wheels ship is found where they put it and driven through ctypes, as e5_small.py does
with the engine's OpenMP runtime: threadpoolctl does the same for every BLAS build, but importing it and scanning
the loaded libraries took 15 ms or more per process, more than a one-shot `codememory search` saves. Any other
BLAS (a system or conda numpy, Accelerate) is left as it is.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_depth = 0
_saved = 0
_calls: tuple[Callable[[], int], Callable[[int], None]] | None = None
_looked = False
# numpy ≥ 2 wheels prefix OpenBLAS's symbols with "scipy_" and suffix the 64-bit-integer build's with "64_"
_AFFIXES = (("scipy_", "64_"), ("scipy_", ""), ("", "64_"), ("", ""))


def _openblas() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """OpenBLAS's get/set thread count functions of numpy's wheel (looked up once), or None."""
    global _calls, _looked
    if _looked:
        return _calls
    with _LOCK:
        if not _looked:
            _calls = _lookup()
            # published only once _calls is set: a search entering meanwhile waits on the lock instead of reading
            # a None that only means "not looked up yet" and running on every thread
            _looked = True
        return _calls


def _lookup() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """Find the functions (`_openblas`'s, under its lock)."""
    wanted = (os.environ.get("OPENBLAS_NUM_THREADS") or "1").strip()
    if wanted != "1":  # the user's own choice (codememory/__init__.py sets 1 when nobody chose)
        return None
    import ctypes
    import glob

    try:
        import numpy

        here = os.path.dirname(numpy.__file__)
        found = sorted(
            glob.glob(os.path.join(here, os.pardir, "numpy.libs", "*openblas*"))
            + glob.glob(os.path.join(here, ".dylibs", "*openblas*"))
        )
        lib = ctypes.CDLL(found[0]) if found else None
    except (ImportError, OSError):
        return None
    if lib is None:
        return None
    for prefix, suffix in _AFFIXES:
        get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
        put = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
        if get is not None and put is not None:
            get.restype, get.argtypes = ctypes.c_int, []
            put.restype, put.argtypes = None, [ctypes.c_int]
            return get, put
    return None


def blas_threads() -> int | None:
    """numpy's OpenBLAS thread count now, or None when it is not one this module drives."""
    calls = _openblas()
    return calls[0]() if calls is not None else None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with numpy's BLAS on one thread (see the module's docstring); nests and overlaps across
    threads."""
    global _depth, _saved
    calls = _openblas()
    if calls is None:
        yield
        return
    get, put = calls
    with _LOCK:
        if _depth == 0:
            _saved = get()
            if _saved != 1:
                put(1)
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0 and _saved != 1:
                put(_saved)
