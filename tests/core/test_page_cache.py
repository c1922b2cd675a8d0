"""What the page cache holds is told without reading from disk, and a read-ahead pass brings whole files into it: a
file pushed out of the cache (written pages flushed, then dropped, as the kernel does under memory pressure) is
seen as out, is read through in the background, and is then seen as in.

Where the system cannot say what the cache holds (no RWF_NOWAIT) or will not drop a file's pages, the tests that
need it are skipped with the reason. The kernel's own answer (mincore, tests/support/page_cache.py) checks ours.

The probe asks for a page without waiting: the kernel may then start reading around it, so a file is probed once
after it was pushed out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codememory.core.page_cache import read_ahead, resident_share
from support.page_cache import cached_share, evict

SIZE = 4 << 20


def share_of(path: Path) -> float | None:
    fd = os.open(path, os.O_RDONLY)
    try:
        return resident_share(fd, SIZE)
    finally:
        os.close(fd)


def test_a_file_pushed_out_is_seen_out_and_a_pass_reads_it_back(tmp_path: Path) -> None:
    path = tmp_path / "rows.bin"
    path.write_bytes(os.urandom(SIZE))
    evict([path])
    fd = os.open(path, os.O_RDONLY)
    try:
        share = resident_share(fd, SIZE)
    finally:
        os.close(fd)
    if share is None:
        pytest.skip("this system cannot tell what the page cache holds (no RWF_NOWAIT)")
    assert share < 0.1
    work = read_ahead([(lambda: os.open(path, os.O_RDONLY), None)])
    assert work.done.wait(60)
    assert cached_share(path) == 1.0


def test_a_file_that_cannot_be_opened_is_skipped_and_the_pass_ends(tmp_path: Path) -> None:
    present = tmp_path / "present.bin"
    present.write_bytes(b"x" * SIZE)
    evict([present])
    missing = tmp_path / "missing.bin"
    work = read_ahead([(lambda: os.open(missing, os.O_RDONLY), None), (lambda: os.open(present, os.O_RDONLY), None)])
    assert work.done.wait(60)
    assert cached_share(present) == 1.0


def test_a_file_in_the_cache_is_seen_in_and_not_read_again(tmp_path: Path) -> None:
    path = tmp_path / "fresh.bin"
    path.write_bytes(b"y" * SIZE)
    share = share_of(path)
    if share is None:
        pytest.skip("this system cannot tell what the page cache holds (no RWF_NOWAIT)")
    assert share == 1.0
    work = read_ahead([(lambda: os.open(path, os.O_RDONLY), None)], skip_cached=True)
    assert work.done.wait(60)
    assert work.bytes_read == 0
