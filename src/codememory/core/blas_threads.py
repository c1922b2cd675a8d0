"""One BLAS thread for a query's vector products.

numpy's OpenBLAS splits any matrix-vector product over about 9,000 values across its threads: a search's scan of
the rows, the re-scoring of a hundred candidates, the background cosines. Each such product takes well under a
millisecond on one core, but its second thread sleeps between calls and must be woken, and on a busy machine
(an agent, its tests and a build beside it) waiting for a core to wake it on cost several milliseconds per product:
a hybrid search at 10k memories took 20% less wall time on one BLAS thread at load 13 (benchmarks/README.md,
"Hybrid search at 10k: one BLAS thread"). Each output value is computed by one thread either way, so the results
are the same to the bit.

Scoped, not process-wide: bulk work (consolidation's block products) still gets every thread. Counted, so that
overlapping searches in the daemon's threads restore the pool only when the last one leaves. A user's own
OPENBLAS_NUM_THREADS or MKL_NUM_THREADS is kept.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_LOCK = threading.Lock()
_depth = 0
_limiter: Any = None
_controller: Any = None
_looked = False


def _blas() -> Any:
    """threadpoolctl's controller of the loaded BLAS libraries (looked up once), or None when the user chose the
    thread count or threadpoolctl is missing."""
    global _controller, _looked
    if not _looked:
        _looked = True
        if os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("MKL_NUM_THREADS"):
            return None
        try:
            # threadpoolctl: finds and sets the thread pools of whichever BLAS numpy loaded (OpenBLAS under
            # versioned names, MKL, BLIS), which a hand-written ctypes lookup would have to track per build
            from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]  # ships no type information
        except ImportError:
            return None
        _controller = ThreadpoolController().select(user_api="blas")
    return _controller


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with numpy's BLAS on one thread (see the module's docstring); nests and overlaps across
    threads."""
    global _depth, _limiter
    controller = _blas()
    if controller is None:
        yield
        return
    with _LOCK:
        if _depth == 0:
            _limiter = controller.limit(limits=1)
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None
