"""Result shapes shared by the recall tools: the MCP server's memory_get and the daemon's `/memory/get`
(the search shape is `codememory.retrieval.search.recall_results`). Free of the MCP SDK and FastAPI, so either entry
point may import it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from codememory.errors import NotFound

if TYPE_CHECKING:
    from codememory.service.project_store import Store


def get_records(store: Store, ids: Iterable[str]) -> dict[str, Any]:
    """Full records of `ids` (duplicates asked once), each with its links and entities:
    `{memories: [record + links + entities], missing: [ids that do not exist]}`."""
    found: list[dict[str, Any]] = []
    missing: list[str] = []
    for memory_id in dict.fromkeys(ids):
        try:
            record = store.get(memory_id)
        except NotFound:
            missing.append(memory_id)
            continue
        found.append({**record.to_dict(), **store.relations(memory_id).to_dict()})
    return {"memories": found, "missing": missing}
