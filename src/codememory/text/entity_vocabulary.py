"""The data entity extraction decides with: the technical vocabulary (`data/tech_vocabulary.txt`) and the word
lists (`data/entity_words.txt`: ambiguous words, errno and signal names, file extensions, path roots), each read
and checked once, on first use, so importing the extractor stays cheap for the CLI's start-up."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources

__all__ = [
    "ENTITY_TYPES",
    "EntityWords",
    "LazyPattern",
    "Term",
    "Vocabulary",
    "entity_words",
    "parse_entity_words",
    "parse_vocabulary",
    "vocabulary",
    "words",
]

ENTITY_TYPES = frozenset(
    {"library", "framework", "tool", "language", "database", "service", "protocol", "file", "error", "identifier"}
)
_VOCABULARY_TYPES = ENTITY_TYPES - {"file", "error", "identifier"}


class LazyPattern:
    """A regex compiled on first use, so importing the extractor stays cheap for the CLI's start-up."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def search(self, string: str) -> re.Match[str] | None:
        return self.compiled.search(string)

    def match(self, string: str) -> re.Match[str] | None:
        return self.compiled.match(string)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string)

    def sub(self, replacement: str, string: str) -> str:
        return self.compiled.sub(replacement, string)

    def split(self, string: str) -> list[str]:
        return self.compiled.split(string)


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- Vocabulary --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    canonical: str
    type: str


@dataclass(frozen=True)
class Vocabulary:
    aliases: dict[str, Term]  # lower-case surface form (canonical, alias, or compact form) -> term
    compact: dict[str, Term]  # surface form without spaces, dots, hyphens, underscores -> term
    first_words: frozenset[str]  # first word of every multi-word surface form
    max_words: int

    def lookup(self, key: str) -> Term | None:
        """Exact lower-case key first, then its compact form ("Node JS" -> "nodejs")."""
        term = self.aliases.get(key)
        if term is None and len(key) >= 4:
            term = self.compact.get(_compact(key))
        return term


def _compact(key: str) -> str:
    return _COMPACT_RE.sub("", key)


_COMPACT_RE = LazyPattern(r"[\s._-]+")


def parse_vocabulary(text: str) -> Vocabulary:
    """Parse `canonical<TAB>type<TAB>alias,alias`; blank lines and `#` comments are skipped."""
    aliases: dict[str, Term] = {}
    canonicals: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [field.strip() for field in raw.split("\t")]
        if len(fields) not in (2, 3):
            raise ValueError(f"vocabulary line {number}: expected 2 or 3 tab-separated fields: {raw!r}")
        canonical, kind = fields[0], fields[1]
        if kind not in _VOCABULARY_TYPES:
            raise ValueError(f"vocabulary line {number}: unknown type {kind!r}")
        if canonical in canonicals:
            raise ValueError(f"vocabulary line {number}: duplicate canonical name {canonical!r}")
        canonicals.add(canonical)
        term = Term(canonical, kind)
        names = [canonical] + [alias.strip() for alias in (fields[2] if len(fields) == 3 else "").split(",")]
        for name in names:
            if not name:
                continue
            if name != " ".join(name.lower().split()):
                raise ValueError(f"vocabulary line {number}: {name!r} must be lower-case with single spaces")
            if name in aliases and aliases[name] != term:
                raise ValueError(f"vocabulary line {number}: {name!r} already names {aliases[name].canonical!r}")
            aliases[name] = term
    compact: dict[str, Term] = {}
    for name, term in aliases.items():
        key = _compact(name)
        if len(key) >= 4:
            compact.setdefault(key, term)
    # Compact spellings of multi-part names are matched in text too ("nodejs", "springboot", "githubactions").
    # Not for leading-dot names: ".net" must never make the English word "net" a match.
    for key, term in compact.items():
        if key not in aliases and not term.canonical.startswith("."):
            aliases[key] = term
    multi = [name.split(" ") for name in aliases if " " in name]
    return Vocabulary(
        aliases=aliases,
        compact=compact,
        first_words=frozenset(parts[0] for parts in multi),
        max_words=max((len(parts) for parts in multi), default=1),
    )


@cache
def vocabulary() -> Vocabulary:
    resource = resources.files("codememory") / "data" / "tech_vocabulary.txt"
    return parse_vocabulary(resource.read_text(encoding="utf-8"))


# --- Word lists --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntityWords:
    """The sections of `data/entity_words.txt` (what each one means is said in the file)."""

    strict: frozenset[str]
    name_case: frozenset[str]
    upper_only: frozenset[str]
    single_letter: frozenset[str]
    adjectives: frozenset[str]
    errno: frozenset[str]
    signals: frozenset[str]
    known_extensions: frozenset[str]
    known_filenames: frozenset[str]
    special_files: frozenset[str]
    path_roots: frozenset[str]
    not_identifiers: frozenset[str]

    @cached_property
    def ambiguous(self) -> frozenset[str]:
        """Every surface form the ambiguity rule restricts."""
        return self.strict | self.name_case | self.upper_only | self.single_letter


_SECTIONS = tuple(EntityWords.__dataclass_fields__)
_SECTION_RE = LazyPattern(r"\[([a-z_]+)\]")


def parse_entity_words(text: str) -> EntityWords:
    """Parse `[section]` headers followed by one entry per line; blank lines and `#` comments are skipped."""
    sections: dict[str, set[str]] = {}
    current: set[str] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        header = _SECTION_RE.fullmatch(line)
        if header is not None:
            name = header.group(1)
            if name not in _SECTIONS or name in sections:
                raise ValueError(f"entity words line {number}: unknown or repeated section {name!r}")
            current = sections[name] = set()
        elif current is None:
            raise ValueError(f"entity words line {number}: an entry before any [section]: {raw!r}")
        else:
            current.add(" ".join(line.split()))
    missing = [name for name in _SECTIONS if name not in sections]
    if missing:
        raise ValueError(f"entity words: missing sections {missing}")
    return EntityWords(**{name: frozenset(entries) for name, entries in sections.items()})


@cache
def entity_words() -> EntityWords:
    resource = resources.files("codememory") / "data" / "entity_words.txt"
    return parse_entity_words(resource.read_text(encoding="utf-8"))
