"""Regular expressions compiled on their first use instead of at import.

The text and extraction modules hold a few hundred patterns. Compiled at import they cost every command that
imports them tens of milliseconds (Python's regex compiler is pure Python), although one command uses only a few
of them: `codememory search` on a short query needs none of the secret-shape patterns past the literal each one
starts with. `lazy_pattern` returns an object that behaves as the compiled pattern: the first method call compiles
it and keeps the compiled pattern's bound methods on the object, so later calls cost what a compiled pattern's do.
"""

from __future__ import annotations

import re
from typing import Any, cast

# What callers use; each becomes an attribute of the object on first use (an instance attribute is found before
# `__getattr__` is consulted, so later calls skip it).
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")


class _LazyPattern:
    """Stands in for `re.compile(pattern, flags)` until first used. `pattern` and `flags` are readable without
    compiling (modules build patterns out of other patterns' source); `flags` are the ones given, without the
    `re.UNICODE` a compiled pattern adds."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self.flags = flags

    def _compiled(self) -> re.Pattern[str]:
        compiled: re.Pattern[str] | None = self.__dict__.get("_pattern")
        if compiled is None:
            compiled = re.compile(self.pattern, self.flags)
            for name in _METHODS:
                self.__dict__[name] = getattr(compiled, name)
            self.__dict__["_pattern"] = compiled
        return compiled

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and friends probe dunders: never compile for them
            raise AttributeError(name)
        return getattr(self._compiled(), name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self.pattern!r}, {self.flags!r})"


def lazy_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, compiled when first used. It is not an `re.Pattern` instance: pass it to
    nothing that checks (`re.sub(lazy, …)` would refuse it); call its methods instead."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))
