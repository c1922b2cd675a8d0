"""Editing a memory by hand (the viewer's edit form, `operations.edit`): the new text is what every index finds, its
entities and vector follow it, new tags replace the old ones, and bad input changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory.errors import InvalidInput, NotFound
from codememory.operations.edit import edit_memory
from codememory.service.project_store import Store

SECRET_KEY = "sk-proj-" + "Zq4rT6yU8iO0pA2sD4fG6hJ8kL0zX2cV4bN6mQ8w"  # split: not a real key for scanners


def ids(store: Store, query: str) -> list[str]:
    return [hit.memory.id for hit in store.search(query, touch=False, fuzzy=False).hits]


def test_new_text_is_indexed_and_the_old_text_is_gone(project: Path) -> None:
    with Store.open(project) as store:
        first = store.add("Use requests for outbound HTTP calls", tags=["http", "legacy"], category="decision").memory
        other = store.add("Deploys happen on Tuesdays", tags=["deploy"]).memory
        assert first is not None and other is not None
        before = store.get(first.id, touch=False)

        detail = edit_memory(store, first.id, text="Use httpx for outbound HTTP/2 calls", tags=["http", "deps"])

        assert detail.memory.text == "Use httpx for outbound HTTP/2 calls"
        assert detail.memory.tags == ["deps", "http"] and detail.memory.category == "decision"  # left as it was
        assert detail.memory.created_at == before.created_at and detail.memory.updated_at > before.updated_at
        assert ids(store, "httpx") == [first.id] and ids(store, "requests") == []
        assert [e.name for e in detail.relations.entities] == ["http/2", "httpx"]
        assert store.stats(tags=True).tags == {"deploy": 1, "deps": 1, "http": 1}  # "legacy" is nobody's now
        assert store.get(other.id, touch=False).text == "Deploys happen on Tuesdays"


def test_category_and_importance_change_alone_and_bad_input_changes_nothing(project: Path) -> None:
    with Store.open(project) as store:
        mem = store.add("The CI runners have two cores").memory
        assert mem is not None
        changed = edit_memory(store, mem.id, category="gotcha", importance=0.9).memory
        assert (changed.text, changed.category, changed.importance) == ("The CI runners have two cores", "gotcha", 0.9)
        with pytest.raises(InvalidInput, match="unknown category"):
            edit_memory(store, mem.id, text="changed", category="nonsense")
        with pytest.raises(InvalidInput):
            edit_memory(store, mem.id, text="   ")
        with pytest.raises(NotFound):
            edit_memory(store, "mem_00000000", text="x")
        assert store.get(mem.id, touch=False).text == "The CI runners have two cores"


def test_a_secret_in_new_text_is_scrubbed_like_a_new_memory(project: Path) -> None:
    with Store.open(project) as store:
        mem = store.add("The staging key lives in the vault").memory
        assert mem is not None
        edited = edit_memory(store, mem.id, text=f"The staging key is {SECRET_KEY}").memory
        assert SECRET_KEY not in edited.text and ids(store, "Zq4rT6yU8iO0pA2sD4fG6hJ8kL0zX2cV4bN6mQ8w") == []


@pytest.mark.default_model
def test_with_an_embedder_the_vector_follows_the_text(project: Path) -> None:
    with Store.open(project) as store:
        assert store.semantic.configured
        mem = store.add("Deploys happen on Tuesdays after the billing batch").memory
        assert mem is not None
        edit_memory(store, mem.id, text="Postgres connection pool size is 20 in production")
        coverage = store.embedding_coverage()
        assert coverage.with_vector == coverage.total == 1  # re-embedded at once, nothing left for `embed`
        assert store.db.count_needing_embedding(coverage.model or "") == 0
