"""What the page cache holds of a file, asked of the kernel with mincore(2) on a fresh mapping (Linux: for a file the
caller owns it reports the page cache itself), and pushing a file out of it (flushed, then dropped). For tests that
need a cold file: they skip where neither can be done. Independent of codememory's own probe (core/page_cache.py),
which is what those tests check."""

from __future__ import annotations

import ctypes
import mmap
import os
from pathlib import Path

import numpy as np
import pytest

from codememory.core.page_cache import drop

PAGE = mmap.PAGESIZE


def cached_share(path: Path) -> float:
    """The share of the file's pages in the page cache (skips the test where mincore is not there)."""
    size = path.stat().st_size
    if size == 0:
        return 1.0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        mincore = libc.mincore
    except (OSError, AttributeError):
        pytest.skip("no mincore here: what the page cache holds cannot be checked")
    with path.open("rb") as f:
        mapped = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
    try:
        view = np.frombuffer(mapped, dtype=np.uint8)
        pages = -(-size // PAGE)
        flags = (ctypes.c_ubyte * pages)()
        if mincore(ctypes.c_void_p(view.ctypes.data), ctypes.c_size_t(size), flags) != 0:
            pytest.skip(f"mincore failed: {os.strerror(ctypes.get_errno())}")
        share = sum(b & 1 for b in flags) / pages
        del view
    finally:
        mapped.close()
    return share


def evict(paths: list[Path]) -> None:
    """Flush and drop the files' pages, as memory pressure would (skips where they stay cached)."""
    for path in paths:
        if not drop(path):
            pytest.skip("no posix_fadvise here: files cannot be pushed out of the page cache")
        if cached_share(path) > 0.1:
            pytest.skip("this file system kept the pages after POSIX_FADV_DONTNEED (or another process maps them)")
