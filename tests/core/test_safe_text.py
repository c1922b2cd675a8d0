"""`printable_line`: the one rule for text from outside in a log line, an error message or a terminal."""

from __future__ import annotations

import sqlite3
import sys

from codememory.core.safe_text import printable_line
from codememory.store.failures import translate
from codememory.store.rows import escape
from codememory.text.privacy import scrub_message

# A line break or a terminal control of each kind, a bidirectional override, a zero-width no-break space
# and a lone surrogate: what a hostile file name, table name or error text may hold.
HOSTILE = "a\nb\rc\td\x1b[2Je\x00f\x7fg\x85h\u2028i\u2029j\u202ek\ufeffl\ud800m\U000e0001n"


def test_every_non_printable_character_is_written_as_repr_writes_it() -> None:
    assert printable_line(HOSTILE) == (
        "a\\nb\\rc\\td\\x1b[2Je\\x00f\\x7fg\\x85h\\u2028i\\u2029j\\u202ek\\ufeffl\\ud800m\\U000e0001n"
    )


def test_the_result_is_always_one_printable_line_for_every_code_point() -> None:
    text = "".join(map(chr, range(sys.maxunicode + 1)))
    line = printable_line(text)
    assert line.isprintable() and line.splitlines() == [line]
    line.encode("utf-8")  # a lone surrogate would raise here
    assert printable_line(line) == line  # escaping twice changes nothing more


def test_printable_text_is_left_as_it_is() -> None:
    text = "naïve café — 東京 🚀 <tag> \\n 'quoted' \"double\""
    assert printable_line(text) is text


def test_a_limit_cuts_before_escaping_and_says_so() -> None:
    assert printable_line("abcdef", 4) == "abcd..."
    assert printable_line("abcd", 4) == "abcd"
    assert printable_line("\n\n\n\n\n", 2) == "\\n\\n..."


def test_the_store_and_the_privacy_filter_use_the_same_rule() -> None:
    """The store's messages (a stored value, a sqlite error) and scrubbed messages escape as printable_line."""
    assert escape(HOSTILE, 1000) == printable_line(HOSTILE)
    assert escape(b"\x1b") == "b'\\x1b'"  # a value of another type: its repr
    spaced = " ".join(HOSTILE)  # no run of 40 characters without a space: scrub_message would cut it
    assert scrub_message(spaced) == printable_line(spaced)
    error = translate(sqlite3.DatabaseError("file is not a database\x1b[2J\u202e"), "memory.db", 5.0)
    assert error is not None and "(file is not a database\\x1b[2J\\u202e)" in str(error)
