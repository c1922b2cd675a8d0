"""The process pool behind large imports and the entity pass: workers leave Ctrl-C to the calling process, a worker
that dies is one error line, and workers are never forked beside other threads."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from codememory.core.worker_pool import in_order, worker_context
from codememory.errors import CodememoryError


def test_workers_ignore_ctrl_c() -> None:
    # a terminal's Ctrl-C reaches every process of its group: only the calling process may act on it
    assert list(in_order(signal.raise_signal, [(signal.SIGINT,), (signal.SIGINT,)], 2)) == [None, None]


def test_a_worker_that_dies_is_a_codememory_error() -> None:
    with pytest.raises(CodememoryError, match="a worker process died"):
        list(in_order(os._exit, [(3,)], 1))


def test_workers_are_not_forked_beside_another_thread() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert worker_context().get_start_method() != "fork"
        assert list(in_order(divmod, [(7, 2), (9, 4)], 2)) == [(3, 1), (2, 1)]
    finally:
        stop.set()
        other.join()
