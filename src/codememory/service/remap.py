"""Project-path remapping for export and import (codemem seed: "restore memories with optional project path
remapping for team sharing"): `--remap OLD=NEW` rewrites the project paths a memory names — in its text and its
source — so a teammate's (or another machine's) export lands in this checkout."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from codememory.errors import InvalidInput

Remap = tuple[str, str]

# A path ends where a path character does not follow: `/home/a/shop` must not match inside `/home/a/shopping`.
_END = r"(?![\w.~+-])"
_START = r"(?<![\w.~+/-])"


def parse_remaps(values: Sequence[str]) -> list[Remap]:
    """`OLD=NEW` pairs, checked: both non-empty, OLD an absolute path other than the file system root."""
    out: list[Remap] = []
    for value in values:
        old, sep, new = value.partition("=")
        old, new = old.strip(), new.strip()
        if not sep or not old or not new:
            raise InvalidInput(f"--remap takes OLD=NEW (two paths), got {value!r}")
        old = old.rstrip("/\\") or old
        new = new.rstrip("/\\") or new
        if old in ("/", "\\") or not (old.startswith(("/", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", old)):
            raise InvalidInput(f"--remap: {old!r} is not an absolute project path")
        out.append((old, new))
    return out


class Remapper:
    """Rewrites every OLD path (the longest first, each place once) to its NEW."""

    def __init__(self, pairs: Sequence[Remap]) -> None:
        self.pairs = dict(sorted(pairs, key=lambda p: -len(p[0])))
        alternatives = "|".join(re.escape(old) for old in self.pairs)
        self._re = re.compile(f"{_START}(?:{alternatives}){_END}") if self.pairs else None

    def __bool__(self) -> bool:
        return self._re is not None

    def text(self, value: str) -> str:
        if self._re is None:
            return value
        return self._re.sub(lambda m: self.pairs[m.group(0)], value)

    def record(self, obj: dict[str, Any]) -> dict[str, Any]:
        """An export record with its text and source remapped (other fields are not paths)."""
        out = dict(obj)
        for key in ("text", "source"):
            if isinstance(out.get(key), str):
                out[key] = self.text(out[key])
        return out
