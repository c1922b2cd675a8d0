"""Binary data is not a memory: `store` and `import` refuse it with one clear line (a user trial stored a random
file and a slice of an ELF binary as "memories" that `list` then showed as garbage), while a stray undecodable
byte in otherwise ordinary text is still kept as U+FFFD."""

from __future__ import annotations

import json
import random
from pathlib import Path

from support.cli import Invoke, assert_error, ok, ok_json


def _random_bytes(size: int) -> bytes:
    return random.Random(7).randbytes(size)


def _elf_like(size: int) -> bytes:
    """The shape of an executable's first bytes: a header, NUL padding, a few strings, more NULs."""
    chunk = b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x03\x00>\x00\x01\x00\x00\x00" + b"\x00" * 40 + b"libc.so.6\x00"
    return (chunk * (size // len(chunk) + 1))[:size]


def _memory_count(cm: Invoke) -> int:
    return int(ok_json(cm("list", "--json"))["total"])


def test_store_refuses_a_random_file_an_executable_and_binary_standard_input(cm: Invoke, tmp_path: Path) -> None:
    binaries = {"random.bin": _random_bytes(1500), "a.out": _elf_like(3000), "big.bin": _elf_like(200_000)}
    for name, data in binaries.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert_error(cm("store", "--file", path), f"{path} is binary data, not text", code=2)
    assert_error(cm("store", input=_elf_like(3000)), "standard input is binary data, not text", code=2)
    assert _memory_count(cm) == 0


def test_store_refuses_a_file_that_is_not_utf8_and_says_which_byte(cm: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("the café closes at six".encode("latin-1"))
    assert_error(cm("store", "--file", path), "is not UTF-8 text (byte 0xe9 at offset 7)", code=2)


def test_mostly_control_characters_are_refused_on_every_path_but_a_stray_one_is_kept(
    cm: Invoke, tmp_path: Path
) -> None:
    assert_error(cm("store", "--", "".join(chr(c) for c in range(1, 31))), "looks like binary data", code=2)
    ok(cm("store", "--", "the pool \x1b size is 20"))
    assert _memory_count(cm) == 1


def test_import_of_a_json_line_holding_binary_text_is_an_invalid_line(cm: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "binary-text.jsonl"
    garbage = _random_bytes(600).decode("latin-1")
    path.write_text(json.dumps({"text": garbage}) + "\n" + json.dumps({"text": "pools hold 20"}) + "\n")
    assert_error(cm("import", path), "line 1: memory text looks like binary data", code=2)
    assert "Imported 1 memories" in ok(cm("import", path, "--skip-invalid")).stdout


def test_import_skip_invalid_names_a_few_lines_and_counts_the_rest(cm: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "mostly-bad.jsonl"
    path.write_text(json.dumps({"text": "pools hold 20"}) + "\n" + "{bad\n" * 800)
    result = ok(cm("import", path, "--skip-invalid"))
    assert "Imported 1 memories (0 already present, 800 invalid lines skipped)" in result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 6 and lines[0].startswith("skipped line 2: ")
    assert lines[-1] == "skipped 795 more invalid lines (--json lists them all)"
    assert len(ok_json(cm("import", path, "--skip-invalid", "--json"))["invalid"]) == 800


def test_import_skip_invalid_fails_when_no_line_is_a_memory(cm: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "program"
    path.write_bytes(_elf_like(200_000).replace(b"libc", b"\nlibc"))
    assert_error(cm("import", path, "--skip-invalid"), "nothing imported: none of its", code=2)
    assert _memory_count(cm) == 0


def test_text_coloured_by_a_terminal_is_text(cm: Invoke) -> None:
    """`pytest --color=yes | codememory store`: each dot of the progress line in its escape sequences. The escape
    character that starts a terminal sequence is no sign of binary data, however many of them the text holds."""
    progress = "tests/test_pool.py " + "\x1b[1m\x1b[32m.\x1b[m" * 40 + " [100%]\nthe pool test passes again"
    ok(cm("store", input=progress.encode()))
    assert _memory_count(cm) == 1


def test_a_windows_1252_file_is_refused_with_the_conversion_that_keeps_its_quotes(cm: Invoke, tmp_path: Path) -> None:
    """Curly quotes are bytes 0x93/0x94 in Windows-1252, C1 control characters in Latin-1: the conversion the
    message names must be from Windows-1252 (a superset of Latin-1's printable characters)."""
    path = tmp_path / "notes.txt"
    path.write_bytes("the \u201cpool\u201d holds 20".encode("cp1252"))
    assert_error(cm("store", "--file", path), "byte 0x93 at offset 4); convert it first, e.g. iconv -f cp1252", code=2)


def test_a_utf8_byte_order_mark_is_no_part_of_a_memory_or_an_import(cm: Invoke, tmp_path: Path) -> None:
    """Windows editors and PowerShell 5 (`Out-File -Encoding utf8`) start a UTF-8 file with EF BB BF: it marks the
    encoding, it is not text. A stored note kept an invisible U+FEFF ahead of its first word, and an import of such
    a file was aborted on its first line ("Unexpected UTF-8 BOM")."""
    note = tmp_path / "note.txt"
    note.write_bytes(b"\xef\xbb\xbfthe pool holds 20 connections")
    ok(cm("store", "--file", note))
    ok(cm("store", input=b"\xef\xbb\xbfretries back off to 30 s\n"))
    lines = tmp_path / "notes.jsonl"
    lines.write_bytes(b"\xef\xbb\xbf" + json.dumps({"text": "the cache holds 500 entries"}).encode() + b"\n")
    assert "Imported 1 memories" in ok(cm("import", lines)).stdout
    texts = sorted(m["text"] for m in ok_json(cm("list", "--json"))["memories"])
    assert texts == ["retries back off to 30 s", "the cache holds 500 entries", "the pool holds 20 connections"]


def test_a_utf16_file_is_named_as_such_not_as_binary_data(cm: Invoke, tmp_path: Path) -> None:
    """Windows PowerShell 5 writes `echo note > note.txt` as UTF-16 with its byte order mark: text, with a NUL byte
    in every other place, which the refusal called binary data."""
    path = tmp_path / "note.txt"
    path.write_bytes("the pool holds 20\r\n".encode("utf-16"))
    assert_error(cm("store", "--file", path), "is UTF-16 text, not UTF-8; convert it first", code=2)
    assert _memory_count(cm) == 0
