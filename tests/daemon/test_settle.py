"""After its warm-up the daemon leaves what it holds for good to the permanent generation (daemon/warm_up.py)."""

from __future__ import annotations

import gc
import weakref

from codememory.daemon.warm_up import settle


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cycle collector frees it


def test_settle_frees_garbage_first_and_leaves_the_rest_out_of_full_collections() -> None:
    garbage = _Node()
    gone = weakref.ref(garbage)
    del garbage
    held = _Node()
    try:
        settle()
        assert gone() is None  # collected, not frozen with the rest
        assert gc.get_freeze_count() > 0
        assert all(o is not held for o in gc.get_objects())  # frozen: no collection walks it any more
    finally:
        gc.unfreeze()
