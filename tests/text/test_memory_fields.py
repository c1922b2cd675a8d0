"""A memory's tags as stored: the same cleaning whether a list is seen once or on thousands of memories."""

from __future__ import annotations

from codememory.text.memory_fields import clean_tags


def test_repeated_tag_lists_are_cleaned_alike_and_handed_out_as_copies() -> None:
    raw = [" Docker Compose ", "#CI", "Pw07x7Kq2Lm", "ci"]  # the third reads like a secret: dropped
    first = clean_tags(raw)
    assert first == ["docker-compose", "ci"]
    first.append("changed by the caller")
    assert clean_tags(list(raw)) == ["docker-compose", "ci"]
    assert clean_tags("Docker Compose,#CI") == ["docker-compose", "ci"]


def test_a_long_tag_list_is_cleaned_the_same_way() -> None:
    raw = [f"Area {i}" for i in range(200)]
    assert clean_tags(raw) == [f"area-{i}" for i in range(200)]
