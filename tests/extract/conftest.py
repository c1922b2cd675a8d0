"""The extraction tests' store: a real SQLite store in a fresh project folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codememory import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    root = tmp_path / "project"
    root.mkdir()
    Store.init(root)[0].close()
    with Store.open(root) as s:
        yield s
