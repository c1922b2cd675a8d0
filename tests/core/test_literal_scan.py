"""The one-pass literal scanner the scrubber's and the instruction check's gates use: it must report exactly the
literals a text holds, as `in` would, whatever the text (unicode, overlapping literals, one literal inside another)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from codememory.core.literal_scan import LiteralScan

LITERALS = ["ai", "aider", "a.i.", "run", "rm -", "://", "http", "sk-", "sk-ant-", "é", "日本", "🎉x", '\\"', "A", "gh"]


def _texts() -> list[str]:
    rng = random.Random(30)
    pieces = [
        *LITERALS,
        "\udc80",
        "Aider",
        "RUN",
        "ht",
        "tp",
        " ",
        "\n",
        "x",
        "ß",
        "e\u0301",
        "\u200b",
        "🎉",
        "日",
        "本",
        "-",
    ]
    texts = ["", "a", "aider", "aidera.i.aide", "sk-ant-sk-", "https://x", "日本語の🎉x", "e\u0301é", "ai\ud800run"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(3_000)]
    return texts


def test_it_finds_exactly_the_literals_each_text_holds() -> None:
    scan = LiteralScan(LITERALS)
    texts = _texts()
    expected = [{i for i, lit in enumerate(LITERALS) if lit in text} for text in texts]
    assert [scan.found(text) for text in texts] == expected
    assert scan.found_in_each(texts) == expected
    assert sum(map(len, expected)) > 3_000  # most texts hold several, nested and overlapping ones among them


def test_a_long_text_is_read_in_windows_without_losing_an_occurrence_across_their_edges() -> None:
    from codememory.core.literal_scan import WINDOW

    scan = LiteralScan(LITERALS)
    for literal in LITERALS:
        for cut in range(1, len(literal)):  # the literal straddles the first or the second window's edge
            for edge in (WINDOW, 2 * WINDOW):
                text = "." * (edge - cut) + literal + "." * WINDOW
                assert scan.found(text) == {i for i, lit in enumerate(LITERALS) if lit in text}, (literal, cut)
    many = "A<" * (3 * WINDOW)  # every other character a literal: read window by window
    assert scan.found(many) == {LITERALS.index("A")}


def test_an_empty_literal_is_refused() -> None:
    with pytest.raises(ValueError):
        LiteralScan(["a", ""])
    with pytest.raises(ValueError):
        LiteralScan([])


def test_without_the_scanner_installed_the_answers_are_the_same_and_scrubbing_still_redacts(tmp_path: Path) -> None:
    """A checkout updated without reinstalling lacks ahocorasick_rs: the scrubber fails closed, so a scanner that
    raised would have blanked every text."""
    fake = tmp_path / "ahocorasick_rs"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('not installed')\n")
    code = (
        "from codememory.core.literal_scan import LiteralScan\n"
        "from codememory.text.privacy import scrub\n"
        "assert LiteralScan(['ai', 'aider', 'sk-']).found('the aider key sk-1') == {0, 1, 2}\n"
        "out = scrub('token ghp_abcdefghijklmnopqrstuvwxyz0123456789 then hello world')\n"
        "assert out == 'token [REDACTED:github] then hello world', out\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
