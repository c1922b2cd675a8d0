"""`json_object`: other programs' JSON, where anything but an object means "no fields"."""

from __future__ import annotations

import pytest

from codememory.core.lenient_json import json_object


@pytest.mark.parametrize("text", ['{"a": 1}', b'{"a": 1}', '{"a": 1}'.encode("utf-16"), ' \n{"a": 1}\n'])
def test_an_object_in_text_or_bytes(text: str | bytes) -> None:
    assert json_object(text) == {"a": 1}


@pytest.mark.parametrize(
    "text",
    [None, 42, {"a": 1}, bytearray(b"{}"), "", "  ", "not json", "[1, 2]", '"text"', "null", b"\xff\x80", "{'a': 1}"],
)
def test_anything_else_is_no_fields(text: object) -> None:
    assert json_object(text) == {}


def test_nesting_too_deep_for_the_parser_is_no_fields_not_a_crash() -> None:
    assert json_object("[" * 5_000 + "]" * 5_000) == {}
    assert json_object('{"a": ' + "[" * 5_000 + "]" * 5_000 + "}") == {}
