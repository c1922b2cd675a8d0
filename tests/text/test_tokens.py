"""The one token estimate: ⌈characters / 4⌉, with what surrounds a text counted as characters, and the figures
every budget used before the estimators were folded into one (retrieval, the ledger, the hooks, extraction)."""

from __future__ import annotations

import pytest

from codememory.text.tokens import CHARS_PER_TOKEN, MEMORY_FRAMING_CHARS, estimate_tokens, memory_tokens


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 400, 100)])
def test_a_partial_token_counts_whole(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


def test_framing_is_counted_in_characters_before_rounding() -> None:
    assert estimate_tokens("abc", framing_chars=1) == 1  # 4 characters: one token, not 1 + 1
    assert estimate_tokens("abcd", framing_chars=1) == 2
    assert estimate_tokens("", framing_chars=MEMORY_FRAMING_CHARS) == memory_tokens("")


@pytest.mark.parametrize("length", range(0, 3 * CHARS_PER_TOKEN + 1))
def test_the_figures_budgets_have_always_used_are_unchanged(length: int) -> None:
    text = "é" * length  # characters, not bytes
    assert memory_tokens(text) == length // 4 + 6  # proactive retrieval, the cold start and the ledger
    assert estimate_tokens(text + "\n") == length // 4 + 1  # a context line and its line break (the hooks)
    assert estimate_tokens(text) == -(-length // 4)  # extraction windows, prompts and spend


def test_a_memory_costs_more_than_its_bare_text() -> None:
    text = "Staging deploys use the canary cluster"
    assert memory_tokens(text) > estimate_tokens(text)
    assert memory_tokens(text + "x" * 4) == memory_tokens(text) + 1
