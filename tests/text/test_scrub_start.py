"""`scrub_start`: the start of a long text scrubbed, cut where no secret is kept in part (text/privacy.py)."""

from __future__ import annotations

import pytest

from codememory.text.privacy import scrub, scrub_start
from support.secrets_corpus import CORPUS

ONE_TOKEN = [(k, s, t) for k, s, t in CORPUS if not any(ch.isspace() for ch in s)]


@pytest.mark.parametrize(
    ("kind", "secret", "text"), ONE_TOKEN, ids=[f"{i}-{k}" for i, (k, _, _) in enumerate(ONE_TOKEN)]
)
def test_no_part_of_a_secret_the_bound_cuts_through_is_kept(kind: str, secret: str, text: str) -> None:
    """Cut inside the secret, its first characters would no longer have its shape: none of them are kept."""
    text = f"run step one then {text} and go on"
    start = text.index(secret)
    for end in range(start + 6, start + len(secret)):
        kept = scrub_start(text, end)
        assert text[start:end] not in kept, (end, kept)
        assert kept.startswith("run step one")


def test_a_bound_at_a_white_space_or_past_the_end_keeps_the_text_whole() -> None:
    text = "deploy --key AKIAIOSFODNN7EXAMPLE now"
    assert scrub_start(text, 1000) == scrub(text)
    assert scrub_start(text, text.index(" now")) == scrub(text[: text.index(" now")])
    assert scrub_start("x" * 50, 10) == ""  # one token longer than the bound: nothing of it
