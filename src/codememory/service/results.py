"""The typed results of the project store's own methods (`Store.add`, `import_`, `relations`, `stats`, ...): what
the Python API returns and, through `to_dict()`, the JSON the entry points print (codememory.core.result)."""

from __future__ import annotations

from dataclasses import dataclass, field

from codememory.core.model import Memory
from codememory.core.result import OMIT_NONE, Result, json_key


@dataclass
class NewLink(Result):
    """A link `Store.add` made from the new memory to another one."""

    id: str
    type: str  # refines, contextualizes or supersedes
    score: float | None  # the cosine that made it; None for supersedes


@dataclass
class AddResult(Result):
    """`{created, duplicate_of, duplicate_reason, embedded, links, memory}`: `store --json`, MCP memory_store and
    the daemon's /memory/store."""

    created: bool  # False: a (near-)identical live memory already existed and is returned instead
    duplicate_of: str | None  # that memory's id
    duplicate_reason: str | None  # why it counts as a duplicate
    embedded: bool
    links: list[NewLink]
    memory: Memory

    @classmethod
    def stored(cls, memory: Memory, *, embedded: bool, links: list[NewLink]) -> AddResult:
        return cls(True, None, None, embedded, links, memory)

    @classmethod
    def existing(cls, memory: Memory, reason: str) -> AddResult:
        return cls(False, memory.id, reason, False, [], memory)


@dataclass
class LineError(Result):
    """A line of an import that could not be taken, and why."""

    line: int
    message: str = field(metadata=json_key("error"))

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class ImportReport(Result):
    """`{added, skipped_existing, invalid: [{line, error}]}`: `import --json`."""

    added: int = 0
    skipped_existing: int = 0
    invalid: list[LineError] = field(default_factory=list)


@dataclass
class MemoryLink(Result):
    """One link of a memory, seen from it: "out" when this memory links to `id`, "in" when `id` links to it."""

    direction: str
    id: str
    type: str
    score: float | None


@dataclass
class EntityName(Result):
    name: str
    type: str


@dataclass
class Relations(Result):
    """A memory's links (both directions) and the entities it mentions (`show`, MCP memory_get)."""

    links: list[MemoryLink]
    entities: list[EntityName]


@dataclass
class EmbeddingCoverage(Result):
    """How much of the store meaning-based search sees."""

    model: str | None
    total: int
    with_vector: int
    coverage: float  # 0..1, 1.0 only when complete
    reason: str | None  # why there is no model


@dataclass
class StoreStats(Result):
    """Counts, categories and store size (`Store.stats`; `stats --json` adds the model spend)."""

    total: int
    live: int
    archived: int
    expired: int
    oldest: str | None
    newest: str | None
    categories: dict[str, int]
    tag_count: int
    entity_count: int
    link_count: int
    superseded: int
    stale: int  # live memories a staleness check marked (`codememory stale`)
    stale_checks: int  # staleness checks recorded
    embeddings: EmbeddingCoverage
    schema_version: int
    store: str
    size_bytes: int
    tags: dict[str, int] | None = field(default=None, metadata=OMIT_NONE)  # with tags=True
    agents: dict[str, int] | None = field(default=None, metadata=OMIT_NONE)  # with agents=True
