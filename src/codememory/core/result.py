"""Typed results: the dataclasses that operations (and the store they run on) return, whose JSON form is what the
CLI prints with --json, the MCP tools return and the daemon answers.

A result's fields are the keys of its JSON form, in order, so the type says what a caller gets and a contract test
(tests/operations/test_json_contract.py) can hold every entry point to it. Four field options cover the shapes
that were there before the types, each a `dataclasses.field` metadata:
- `json_key("results")`: the JSON key differs from the attribute (`SearchResult.hits`: the Python name stays);
- `FLATTEN`: the field's own keys are merged in at its place (a memory's fields beside its links and entities);
- `OMIT_NONE`: the key is left out when the value is None (`stats --tags` adds "tags" only when asked);
- `SKIP`: not in the JSON at all, for Python callers only (the project object behind a global hit's name).
A result whose JSON has a key that is no field (a count of a list, a constant) writes its own `to_dict` and names
those keys in `COMPUTED` (key -> type), so the contract still knows every key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, get_type_hints

FLATTEN: Mapping[str, Any] = {"json_flatten": True}
OMIT_NONE: Mapping[str, Any] = {"json_omit_none": True}
SKIP: Mapping[str, Any] = {"json_skip": True}


def json_key(name: str) -> Mapping[str, Any]:
    """Field metadata: the field's JSON key is `name`."""
    return {"json_key": name}


def plain(value: Any) -> Any:
    """A value as JSON-ready data: results and memories through their `to_dict`, lists and dicts item by item."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class Result:
    """Base of a typed result, a dataclass: `to_dict()` is its fields in order (see the module docstring for the
    options). Not a dataclass itself, so that frozen and mutable dataclasses alike can be results."""

    COMPUTED: ClassVar[Mapping[str, Any]] = {}
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]  # what each subclass's @dataclass sets

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("json_skip"):
                continue
            if f.metadata.get("json_flatten"):
                out.update(plain(value))
            elif value is not None or not f.metadata.get("json_omit_none"):
                out[f.metadata.get("json_key") or f.name] = plain(value)
        return out


@dataclass(frozen=True)
class JsonKey:
    """One key of a result's JSON form: the type of its value and whether it may be left out."""

    type: Any
    optional: bool = False


def json_keys(cls: type) -> dict[str, JsonKey]:
    """The keys of a result class's JSON form, from its fields (and `COMPUTED`): what the contract test checks
    every entry point's output against. A plain dataclass (e.g. `Memory`) counts as one whose fields are its keys."""
    hints = get_type_hints(cls)
    keys: dict[str, JsonKey] = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("json_skip"):
            continue
        if f.metadata.get("json_flatten"):
            keys.update(json_keys(hints[f.name]))
        else:
            keys[f.metadata.get("json_key") or f.name] = JsonKey(hints[f.name], bool(f.metadata.get("json_omit_none")))
    for name, kind in getattr(cls, "COMPUTED", {}).items():
        keys[name] = JsonKey(kind)
    return keys
