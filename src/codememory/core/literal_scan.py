"""Which of many fixed strings occur in each of many texts, in one pass over each text.

The checks an import runs on every memory (is there anything secret-shaped to scrub? does it read like instructions
to an agent?) first ask which of a few dozen literals a text holds, because none of their patterns can match
without one. Asked one literal at a time (`in`, or a regex alternation of them, which Python's engine tries
literal by literal at every position), that question cost more than the patterns it saves. An Aho-Corasick
automaton answers it for every literal in one pass over the text: `ahocorasick_rs` (PyPI `ahocorasick-rs`), the
Python binding of the `aho-corasick` Rust crate that ripgrep and the `regex` crate are built on: released wheels for
every platform CPython runs on, no build step, and a small API (a list of literals in, the (literal, start, end)
of every occurrence out). Imported on first use: hooks and the CLI load the modules that use it without scanning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

WINDOW = 1 << 16  # characters scanned at a time


class LiteralScan:
    """The literals (non-empty strings) found in a text, every occurrence counted, overlapping ones too ("ai"
    inside "aider"): `found(text)` is exactly `{i for i, lit in enumerate(literals) if lit in text}`."""

    def __init__(self, literals: Sequence[str]) -> None:
        if not literals or not all(literals):
            raise ValueError("literals must be non-empty strings, at least one")
        self.literals = list(literals)
        self._automaton: Any = None

    def _compiled(self) -> Any:
        if self._automaton is None:
            import ahocorasick_rs

            self._automaton = ahocorasick_rs.AhoCorasick(self.literals)
        return self._automaton

    def found(self, text: str) -> set[int]:
        """The indexes (in `literals`) of the literals that occur in `text`."""
        if len(text) <= WINDOW:
            return self._found(text)
        # The scanner returns every occurrence as a list: a long text full of a short literal ("A", "<") is read in
        # windows, each overlapping the next by a literal's length, so that no occurrence is cut and memory stays flat.
        overlap = max(map(len, self.literals)) - 1
        found: set[int] = set()
        for start in range(0, len(text), WINDOW):
            found |= self._found(text[start : start + WINDOW + overlap])
        return found

    def _found(self, text: str) -> set[int]:
        try:
            return {index for index, _, _ in self._compiled().find_matches_as_indexes(text, overlapping=True)}
        # a lone surrogate (a transcript's "\ud800" escape): the scanner reads UTF-8; or the scanner is not installed
        # (a checkout updated by `git pull` without reinstalling): the scrubber that asks fails closed, so a missing
        # speed-up would blank every text it scrubs
        except (UnicodeEncodeError, ImportError):
            return {index for index, literal in enumerate(self.literals) if literal in text}

    def found_in_each(self, texts: Sequence[str]) -> list[set[int]]:
        return [self.found(text) for text in texts]
