"""A bounded, deterministic fuzz over search and store inputs: random mixes of FTS syntax characters,
operators, lone surrogates, NULs, control characters, very long tokens, non-UTF-8 bytes and other
unicode, through the in-process CLI and the Python API. Every input either works or ends in one clean
error line (a CodememoryError from the API); never a traceback, and the store stays usable and holds only
valid UTF-8."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from click.testing import Result

from codememory import Store
from codememory.errors import CodememoryError
from conftest import Invoke

SEED = 20261123
CLI_CASES = 100
API_CASES = 240

FTS_CHARS = '"*():^-+'
OPERATORS = ("AND", "OR", "NOT", "NEAR", "NEAR/2", "NEAR(", "and", "or", "not")
WORDS = ("docker", "pool", "retry", "mem_1a2b3c4d", "C++", "a:b", "src/app.py", "@x", "#tag", "x.y", "ü")
UNICODE = ("é", "日本語", "\U0001f600", "ß", "İ", "\u200b", "\ufeff", "Ω", "\u0301", "\U0010ffff", "\ufffd")
SEPARATORS = (" ", " ", " ", "", "\n", "\t", "  ")


def piece(rng: random.Random) -> str:
    kind = rng.randrange(9)
    if kind == 0:
        return "".join(rng.choice(FTS_CHARS) for _ in range(rng.randint(1, 3)))
    if kind == 1:
        return rng.choice(OPERATORS)
    if kind == 2:
        return chr(rng.randint(0xD800, 0xDFFF))  # a lone surrogate
    if kind == 3:
        return "\x00"
    if kind == 4:
        return chr(rng.choice([*range(1, 32), 0x7F, 0x85, 0x2028]))
    if kind == 5:
        return rng.choice("abcxyz") * rng.randint(100, 1500)  # a very long token
    if kind == 6:
        return rng.choice(UNICODE)
    if kind == 7:
        return chr(0xDC80 + rng.randrange(128))  # how Python's argv decoding carries a byte that is not UTF-8
    return rng.choice(WORDS)


def fuzz_text(rng: random.Random) -> str:
    return "".join(piece(rng) + rng.choice(SEPARATORS) for _ in range(rng.randint(1, 8)))


def fuzz_bytes(rng: random.Random) -> bytes:
    """Standard input for `store`: UTF-8 text with stray bytes that are not UTF-8 in it."""
    text = fuzz_text(rng).encode("utf-8", "surrogatepass")
    cut = rng.randint(0, len(text))
    return text[:cut] + bytes(rng.choice([0xFF, 0xFE, 0xC3, 0xED, 0x80]) for _ in range(rng.randint(1, 3))) + text[cut:]


def clean_or_one_line_error(result: Result, what: str) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), f"{what}: {result.exception!r}"
    assert "Traceback" not in result.output, what
    result.stdout.encode("utf-8")  # printable: no lone surrogate got as far as the output
    if result.exit_code != 0:
        lines = result.stderr.splitlines()
        assert result.exit_code in (1, 2), f"{what}: exit {result.exit_code}"
        assert len(lines) == 1 and lines[0].startswith("codememory: error: "), f"{what}: {result.stderr!r}"


def assert_store_valid_utf8(root: Path) -> None:
    conn = sqlite3.connect(root / ".codememory" / "memory.db")
    conn.text_factory = bytes
    try:
        for (text,) in conn.execute("SELECT text FROM memories"):
            text.decode("utf-8")
    finally:
        conn.close()


@pytest.mark.slow
def test_fuzz_search_and_store_through_the_cli(cm: Invoke, project: Path) -> None:
    rng = random.Random(SEED)
    assert cm("store", "the connection pool holds 20 connections").exit_code == 0
    for case in range(CLI_CASES):
        text = fuzz_text(rng)
        what = f"case {case}: {text[:80]!r}"
        fuzzy = "--fuzzy" if case % 3 == 0 else "--no-fuzzy"
        clean_or_one_line_error(cm("search", fuzzy, "--", text), "search " + what)  # "--": text, not options
        if case % 2 == 0:
            clean_or_one_line_error(cm("store", "--", text), "store " + what)
        else:
            clean_or_one_line_error(cm("store", "--json", input=fuzz_bytes(rng)), "store stdin " + what)
    found = cm("search", "connection pool")
    assert found.exit_code == 0 and "20 connections" in found.stdout  # the index still works
    assert_store_valid_utf8(project)


@pytest.mark.slow
def test_fuzz_search_and_store_through_the_python_api(project: Path) -> None:
    rng = random.Random(SEED + 1)
    with Store.open(project) as store:
        pool = store.add("the connection pool holds 20 connections").memory.id
        for case in range(API_CASES):
            text = fuzz_text(rng)
            try:
                if case % 3 == 0:
                    store.add(text, tags=[fuzz_text(rng)[:50]], source=fuzz_text(rng)[:200])
                elif case % 3 == 1:
                    store.search(text, fuzzy=case % 2 == 0, tags=fuzz_text(rng)[:30] if case % 5 == 0 else None)
                else:
                    store.retrieve([text], entities=[fuzz_text(rng)[:50]])
            except CodememoryError as exc:  # a clean error the entry points print on one line
                assert "\n" not in str(exc), f"case {case}: {exc}"
        assert [hit.memory.id for hit in store.search("connection pool").hits][:1] == [pool]
    assert_store_valid_utf8(project)
