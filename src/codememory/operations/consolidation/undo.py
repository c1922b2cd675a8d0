"""Undoing a recorded consolidation run: originals and decayed memories unarchived, supersessions lifted, the links
the run wrote removed (or given back the type they replaced), the consolidated memories archived (never deleted:
they may have been read meanwhile), entity spellings restored.

A run's stored changes are read as untrusted data (a store may come from a cloned repository): only memory ids
and short names of the expected shapes are acted on. A run whose memories a later applied run changed again is
refused until that later run is undone: undoing out of order would bring back copies of what it consolidated."""

from __future__ import annotations

from typing import Any

from codememory.core.dates import now_iso
from codememory.core.model import LINK_TYPES
from codememory.errors import InvalidInput, NotFound
from codememory.service.project_store import Store
from codememory.store.consolidation_runs import ConsolidationTables
from codememory.store.rows import is_label, is_memory_id


def _ids(value: Any) -> list[str]:
    return [v for v in value if is_memory_id(v)] if isinstance(value, list) else []


def _touched(changes: list[Any]) -> set[str]:
    out: set[str] = set()
    for change in changes:
        if not isinstance(change, dict):
            continue
        for key in ("memory", "from", "to"):
            if is_memory_id(change.get(key)):
                out.add(change[key])
        out.update(_ids(change.get("originals")))
    return out


def undo_run(store: Store, run_id: int) -> tuple[list[str], list[str], int, int]:
    """(restored ids, archived ids, links removed or retyped, entity merges undone)."""
    tables = ConsolidationTables(store.db)
    run = tables.run(run_id)
    if run is None:
        raise NotFound(f"no consolidation run {run_id} (`codememory consolidate --runs` lists them)")
    if run.status == "undone":
        raise InvalidInput(f"consolidation run {run_id} was already undone at {run.undone_at}")
    mine = _touched(run.changes)
    later = [r for r in tables.runs() if r.id > run_id and r.status == "applied" and _touched(r.changes) & mine]
    if later:
        raise InvalidInput(
            f"run {later[-1].id} changed memories of run {run_id} again: undo run "
            f"{', '.join(str(r.id) for r in sorted(later, key=lambda r: -r.id))} first"
        )
    unarchive: list[str] = []
    clear: list[tuple[str, str]] = []
    archive: list[str] = []
    unlink: list[tuple[str, str, str | None]] = []
    entities: list[dict[str, Any]] = []
    for change in run.changes:
        if not isinstance(change, dict):
            continue
        kind = change.get("kind")
        if kind == "squash" and is_memory_id(change.get("memory")):
            new = change["memory"]
            originals = _ids(change.get("originals"))
            unarchive += originals
            clear += [(o, new) for o in originals]
            archive.append(new)
            unlink += [(new, o, None) for o in originals]
        elif (
            kind in ("supersedes", "conflicts") and is_memory_id(change.get("from")) and is_memory_id(change.get("to"))
        ):
            previous = change.get("previous")
            unlink.append((change["from"], change["to"], previous if previous in LINK_TYPES else None))
            if kind == "supersedes" and change.get("retired") is True:
                clear.append((change["to"], change["from"]))
        elif kind == "decay" and is_memory_id(change.get("memory")):
            unarchive.append(change["memory"])
        elif kind == "entity" and all(is_label(change.get(k)) for k in ("from", "type", "into")):
            entities.append(
                {
                    "from": change["from"],
                    "type": change["type"],
                    "into": change["into"],
                    "renamed": change.get("renamed") is True,
                    "moved": _ids(change.get("moved")),
                    "shared": _ids(change.get("shared")),
                }
            )
    tables.undo(
        run_id,
        now_iso(),
        unarchive=unarchive,
        clear_superseded=clear,
        archive=archive,
        unlink=unlink,
        entities=entities,
    )
    restored = list(dict.fromkeys([*unarchive, *(m for m, _by in clear if m not in archive)]))
    return restored, archive, len(unlink), len(entities)
