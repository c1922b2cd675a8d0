"""Bulk work spread over one process per core, its results taken in order (an import's batches, the entity pass
after it): the calling process writes result k to the store while the workers compute k+1.. beside it."""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

R = TypeVar("R")


def cores() -> int:
    return os.cpu_count() or 1


def in_order(work: Callable[..., R], calls: Iterable[tuple[Any, ...]], workers: int) -> Iterator[R]:
    """`work(*args)` for each of `calls`, run by `workers` processes, yielded in the order of `calls`. At most
    `workers + 1` calls are in flight, so memory stays flat whatever the number of calls."""
    from concurrent.futures import ProcessPoolExecutor

    pending: collections.deque[Future[R]] = collections.deque()
    with ProcessPoolExecutor(workers, mp_context=fork_context()) as pool:
        for args in calls:
            pending.append(pool.submit(work, *args))
            while len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def fork_context() -> Any:
    """Workers forked from this process where the platform allows and nothing else runs in it (they start in
    milliseconds with what is imported already; forking beside other threads could copy a lock they hold); the
    platform's default elsewhere."""
    import multiprocessing
    import threading

    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return None
