"""What a search of the organisation's memory returns: its hits and how it went. Apart from the search itself
(org_search.py) so that the result types of a local search, which name them, load without the Milvus client and the
fusion code (`codememory search` without a remote imports neither)."""

from __future__ import annotations

from dataclasses import dataclass

from codememory.core.provenance import Provenance, remote_provenance
from codememory.core.result import Result


@dataclass
class RemoteStatus(Result):
    """What the organisation's Milvus contributed to a search, or why it could not."""

    remote: str  # the server (without credentials) or Milvus Lite file
    collection: str
    ok: bool
    hits: int  # remote results in the merged answer
    mode: str  # "hybrid" (dense + BM25 fused in Milvus) or "bm25" (no usable query vector)
    error: str | None = None
    note: str | None = None  # why the query ran as "bm25"


@dataclass
class RemoteHit:
    """A memory of another project, from the remote (fields cleaned of whatever the row held)."""

    project: str
    id: str
    text: str
    category: str
    importance: float
    tags: list[str]
    created_at: str
    source: str | None
    score: float  # the ranker's (local fusion, RRF or weighted): comparable only within one answer
    rank: int

    @property
    def origin(self) -> str:
        return f"remote:{self.project}"

    @property
    def provenance(self) -> Provenance:
        """Another project's memory: never written here, so never ranked or trusted on its own claims."""
        return remote_provenance(self.project)
