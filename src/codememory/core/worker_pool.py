"""Bulk work spread over one process per core, its results taken in order (an import's batches, the entity pass
after it): the calling process writes result k to the store while the workers compute k+1.. beside it."""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

from codememory.errors import CodememoryError

R = TypeVar("R")


def cores() -> int:
    return os.cpu_count() or 1


def in_order(work: Callable[..., R], calls: Iterable[tuple[Any, ...]], workers: int) -> Iterator[R]:
    """`work(*args)` for each of `calls`, run by `workers` processes, yielded in the order of `calls`. At most
    `workers + 1` calls are in flight, so memory stays flat whatever the number of calls. The workers ignore
    Ctrl-C (the calling process handles it, once); a worker that dies is a CodememoryError."""
    import signal
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pending: collections.deque[Future[R]] = collections.deque()
    try:
        with ProcessPoolExecutor(
            workers, mp_context=worker_context(), initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN)
        ) as pool:
            for args in calls:
                pending.append(pool.submit(work, *args))
                while len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
    except BrokenProcessPool as exc:
        raise CodememoryError(f"a worker process died: {exc}") from None


def worker_context() -> Any:
    """Workers forked from this process on Linux when nothing else runs in it (they start in milliseconds with what
    is imported already); forking beside other threads could copy a lock one of them holds, so then (and on other
    platforms, where fork is unsafe or missing) they come from a fork server, or are spawned where there is none."""
    import multiprocessing
    import sys
    import threading

    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")
