"""What `codememory repair` copies from a damaged or foreign store into a fresh one: per table, in an order
the new store's foreign keys accept (parents before children), the columns read, the check each value
must pass, and the fix that may adjust a row (recompute derived columns, default a bad optional value)
or say why it is refused. Every check is the one the store applies as it reads (rows.py)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codememory.core.model import DEFAULT_IMPORTANCE, LINK_TYPES, MAX_TEXT, session_position
from codememory.core.provenance import local_by_from_fields, stored_provenance
from codememory.store.capture import TURN_COLUMNS, cursor_problems, turn_problems
from codememory.store.extraction import STATUSES as EXTRACTION_STATUSES
from codememory.store.memories import text_hash
from codememory.store.rows import (
    MAX_LABEL,
    is_int,
    is_label,
    is_memory_id,
    is_name,
    is_stamp,
    is_tag,
    is_text,
    json_object,
    memory_problem,
)
from codememory.store.sessions import CHUNK_TYPES, ROW_COLUMNS, session_problems

Check = Callable[[Any], bool]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _optional(check: Check) -> Check:
    return lambda value: value is None or check(value)


def _one_of(*allowed: Any) -> Check:
    return lambda value: value in allowed


def _anything(_value: Any) -> bool:
    return True


def _json_text(kind: type) -> Check:
    def check(value: Any) -> bool:
        if not is_text(value):
            return False
        try:
            return isinstance(json.loads(value), kind)
        except ValueError:
            return False

    return check


# ------------------------------------------------------------------------------------ row fixes
def _fix_memory(row: dict[str, Any]) -> str | None:
    text = row["text"]
    if isinstance(text, str):
        text = text.replace("\x00", "")  # as the store's own validation does; SQLite's length() stops at NUL
    problem = memory_problem(row["id"], text, row["category"])
    if problem:
        return problem
    assert isinstance(text, str)
    if not text.strip() or len(text) > MAX_TEXT:
        return f"memory {row['id']} has text of {len(text)} characters (1 to {MAX_TEXT:,} allowed)"
    for stamp in ("created_at", "updated_at"):
        if not is_stamp(row[stamp]) or not row[stamp][:1].isdigit():
            return f"memory {row['id']} has an invalid {stamp}"
    row["text"] = text
    row["text_hash"] = text_hash(text)
    if not _number(row["importance"]) or not 0 <= row["importance"] <= 1:
        row["importance"] = DEFAULT_IMPORTANCE
    row["entered_by"] = row["entered_by"] if is_label(row["entered_by"]) else None
    row["source"] = row["source"] if is_text(row["source"], MAX_LABEL) else None
    for stamp in ("expires_at", "last_accessed_at"):
        row[stamp] = row[stamp] if is_stamp(row[stamp]) else None
    row["access_count"] = row["access_count"] if is_int(row["access_count"]) and row["access_count"] >= 0 else 0
    row["archived"] = 1 if row["archived"] == 1 else 0
    row["superseded_by"] = row["superseded_by"] if is_memory_id(row["superseded_by"]) else None
    row["personal"] = 1 if row["personal"] == 1 else 0  # a personal memory must not become shared
    row["session_key"], row["seq"] = session_position(row["source"])
    _fix_provenance(row)
    return None


def _fix_provenance(row: dict[str, Any]) -> None:
    """The origin columns as the store reads them (core/provenance.stored_provenance); a store from before they
    existed has none, and its rows get what migration 11 gives them (repair.py makes them all `committed` when the
    old file was not this machine's)."""
    if row["origin"] is None:
        row["origin"], row["origin_by"] = "local", local_by_from_fields(row["entered_by"], row["source"])
        row["origin_at"] = row["review"] = None
        return
    kept = stored_provenance(row["origin"], row["origin_by"], row["origin_at"], row["review"])
    row["origin"], row["origin_by"], row["origin_at"], row["review"] = kept.origin, kept.by, kept.at, kept.review


def _fix_embedding(row: dict[str, Any]) -> str | None:
    """A store before vectors had their own table holds the vector in the row (float32): it must fit the
    dimension; a newer store's rows have none here (`embedding_vectors` is copied next)."""
    vector = row["vector"]
    if not 0 < row["dim"] <= 65536 or (vector is not None and not _fits(vector, row["dim"])):
        return f"the vector of memory row {row['memory_pk']} does not have {row['dim']} values"
    return None


def _fits(vector: Any, dim: int) -> bool:
    return isinstance(vector, bytes) and len(vector) in (2 * dim, 4 * dim)


def _write_embedding(dst: sqlite3.Connection, row: dict[str, Any]) -> None:
    dst.execute(
        "INSERT INTO embeddings(memory_pk, model, dim, text_hash, seq) VALUES (?, ?, ?, ?, ?)",
        (row["memory_pk"], row["model"], row["dim"], row["text_hash"], row["seq"]),
    )
    if row["vector"] is not None:
        dst.execute("INSERT INTO embedding_vectors(seq, vector) VALUES (?, ?)", (row["seq"], row["vector"]))


def _is_vector(value: Any) -> bool:
    return isinstance(value, bytes) and 0 < len(value) <= 4 * 65536 and len(value) % 2 == 0


def _fix_chunk(row: dict[str, Any]) -> str | None:
    kind = row["chunk_type"]
    if kind == "plan_file" and json_object(row["content"], "path", "header") is None:
        return "a plan_file entry is not the JSON the store writes"
    if kind == "reference" and json_object(row["content"], "url", "title") is None:
        return "a reference entry is not the JSON the store writes"
    return None


def _problems(names: tuple[str, ...], problems: Callable[[tuple[Any, ...]], list[str]]) -> Callable[..., str | None]:
    def fix(row: dict[str, Any]) -> str | None:
        bad = problems(tuple(row[n] for n in names))
        return f"invalid {', '.join(bad)}" if bad else None

    return fix


@dataclass(frozen=True)
class TableSpec:
    table: str
    checks: dict[str, Check]  # the columns copied, each with the check its value must pass
    fix: Callable[[dict[str, Any]], str | None] | None = None  # may adjust the row; returns a problem
    computed: tuple[str, ...] = ()  # columns written from the fix, not read
    writer: Callable[[sqlite3.Connection, dict[str, Any]], None] | None = None  # instead of one INSERT of the columns


_MEMORY_COLUMNS = (
    "pk, id, text, category, importance, entered_by, source, created_at, updated_at, expires_at, access_count, "
    "last_accessed_at, archived, superseded_by, personal, origin, origin_by, origin_at, review"
).split(", ")

# Parents before children: the new store enforces foreign keys, so an orphan is refused there.
SPECS: tuple[TableSpec, ...] = (
    TableSpec("memories", dict.fromkeys(_MEMORY_COLUMNS, _anything), _fix_memory, ("text_hash", "session_key", "seq")),
    TableSpec("tags", {"id": is_int, "name": is_tag}),
    TableSpec("memory_tags", {"memory_pk": is_int, "tag_id": is_int}),
    TableSpec(
        "embeddings",
        {
            "memory_pk": is_int,
            "model": is_label,
            "dim": is_int,
            "text_hash": is_label,
            "seq": is_int,
            "vector": _anything,
        },
        _fix_embedding,
        writer=_write_embedding,
    ),
    TableSpec("embedding_vectors", {"seq": is_int, "vector": _is_vector}),
    TableSpec(
        "memory_links",
        {
            "memory_pk": is_int,
            "linked_pk": is_int,
            "link_type": _one_of(*LINK_TYPES),
            "score": _optional(_number),
            "created_at": is_stamp,
        },
    ),
    TableSpec("entities", {"id": is_int, "name": is_label, "type": is_label}),
    TableSpec("memory_entities", {"memory_pk": is_int, "entity_id": is_int}),
    TableSpec("entities_pending", {"memory_pk": is_int}),
    TableSpec(
        "sessions",
        dict.fromkeys(ROW_COLUMNS.split(", "), _anything),
        _problems(tuple(ROW_COLUMNS.split(", ")), session_problems),
    ),
    TableSpec(
        "session_files",
        {"session_id": is_name, "file_path": is_label, "change_type": _one_of("created", "modified", "deleted")},
    ),
    TableSpec(
        "session_chunks",
        {
            "id": is_int,
            "session_id": is_name,
            "chunk_type": _one_of(*CHUNK_TYPES),
            "content": is_text,
            "created_at": is_stamp,
        },
        _fix_chunk,
    ),
    TableSpec(
        "captured_turns",
        dict.fromkeys(TURN_COLUMNS.split(", "), _anything),
        _problems(tuple(TURN_COLUMNS.split(", ")), turn_problems),
    ),
    TableSpec(
        "capture_cursors",
        dict.fromkeys(("source", "key", "position", "updated_at"), _anything),
        _problems(("source", "key", "position", "updated_at"), cursor_problems),
    ),
    TableSpec(
        "extractions",
        {
            "id": is_int,
            "source": is_label,
            "session_id": is_label,
            "first_seq": is_int,
            "last_seq": is_int,
            "method": is_label,
            "status": _one_of(*EXTRACTION_STATUSES),
            "memory_count": is_int,
            "detail": _optional(is_text),
            "started_at": is_stamp,
            "finished_at": is_stamp,
        },
    ),
    TableSpec(
        "llm_spend",
        {
            "id": is_int,
            "at": is_stamp,
            "day": is_stamp,
            "provider": is_label,
            "model": is_label,
            "purpose": is_label,
            "session_id": _optional(is_label),
            "prompt_tokens": is_int,
            "completion_tokens": is_int,
        },
    ),
    TableSpec(
        "raw_events",
        {
            "id": is_int,
            "source": is_label,
            "session_id": is_label,
            "event_id": is_label,
            "kind": is_label,
            "at": is_stamp,
            "payload": _json_text(dict),
            "batch_id": _optional(is_label),
            "received_at": is_stamp,
            "processed_at": _optional(is_stamp),
            "attempts": is_int,
            "error": _optional(is_text),
        },
    ),
    TableSpec(
        "injections",
        {
            "id": is_int,
            "at": is_stamp,
            "source": is_label,
            "session_id": _optional(is_label),
            "kind": is_label,
            "query": is_text,
            "memories": _json_text(list),
            "tokens": is_int,
            "degraded": _one_of(0, 1),
        },
    ),
    TableSpec(
        "consolidation_runs",
        {
            "id": is_int,
            "started_at": is_stamp,
            "finished_at": is_stamp,
            "trigger": _one_of("command", "schedule"),
            "method": is_label,
            "status": _one_of("applied", "undone"),
            "changes": _json_text(list),
            "summary": _json_text(dict),
            "undone_at": _optional(is_stamp),
        },
    ),
)
