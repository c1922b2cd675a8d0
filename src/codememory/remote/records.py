"""What of a project's memory may leave the machine, and in what form: the rows `publish` sends.

A memory is shared when it is live (not archived, superseded or expired) and not personal. Personal means the
memory's `personal` flag (team sharing's: `store --personal` or the `[share]` personal settings) or a
`personal` / `private` tag. Everything sent is scrubbed again (text/privacy: `<private>` spans and secrets),
although the store scrubbed it on write: a rule added since then applies to old memories too. A memory whose
text is empty once scrubbed is not shared. `entered_by` is never sent.

A row's `content_hash` covers every field sent and the embedding model, so an unchanged memory is never sent
twice and a change of any field (or of the model) sends it again.

Reading, scrubbing and hashing every memory made a publish with nothing changed cost 26 s at 100k memories, so
`scan` first reads one cheap fingerprint per memory from SQL (its stored columns that decide what is sent, its
tags and entities, and the codememory version, whose scrubbing rules may differ) and rebuilds only the memories
whose fingerprint differs from the one the cursor recorded at the last successful publish."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory import __version__
from codememory.core.dates import now_iso
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.model import Memory, session_position
from codememory.remote.milvus import MAX_ENTITIES, MAX_TAGS, is_literal
from codememory.text.privacy import scrub, scrub_label

if TYPE_CHECKING:
    from codememory.service.project_store import Store

PERSONAL_TAGS = frozenset({"personal", "private"})
BATCH = 1000
_NAME_RE = lazy_pattern(r"[^A-Za-z0-9_.@+-]+")


def project_name(configured: str, root: Path) -> str:
    """This project's name in the collection: `[remote] project`, else its folder's name, reduced to the
    characters a filter accepts (others become `-`)."""
    name = _NAME_RE.sub("-", (configured or root.name).strip()).strip("-.")[:200]
    return name or "project"


def is_personal(mem: Memory, flagged: set[str]) -> bool:
    """Kept on this machine whatever is published (see the module docstring); `flagged`: the ids the store
    marks personal."""
    return mem.id in flagged or any(t in PERSONAL_TAGS for t in mem.tags)


def is_live(mem: Memory, now: str) -> bool:
    return not mem.archived and not mem.superseded_by and not (mem.expires_at and mem.expires_at <= now)


@dataclass
class Outgoing:
    """One memory as it would be sent (without its vector, read only for the rows that change)."""

    pk: int
    memory_id: str
    fields: dict[str, Any]
    content_hash: str
    rescrubbed: bool  # scrubbing changed the text: its stored vector is of other text, embed it anew


def _hash(fields: dict[str, Any], model: str) -> str:
    blob = json.dumps([model, fields], sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:32]


# Everything of a memory row that decides whether and what is sent (access counts and times are left out: a
# search touching a memory changes nothing remote). Tags and entities live in other tables: their ids joined.
_FINGERPRINT_SQL = """
SELECT m.pk, m.id, m.archived, m.superseded_by, m.expires_at, m.text_hash, m.category, m.importance, m.source,
       m.created_at, m.updated_at, m.personal,
       (SELECT group_concat(tag_id) FROM (SELECT tag_id FROM memory_tags WHERE memory_pk = m.pk ORDER BY tag_id)),
       (SELECT group_concat(entity_id)
          FROM (SELECT entity_id FROM memory_entities WHERE memory_pk = m.pk ORDER BY entity_id))
FROM memories m"""


@dataclass
class Scan:
    """A pass over the store against the cursor's fingerprints (`scan`)."""

    rebuilt: list[Outgoing]  # shared memories whose fingerprint changed (or is new): compare their content hash
    unchanged: set[str]  # ids whose fingerprint matched: as sent last time (if they were sent)
    kept_local: int  # personal, or nothing left after scrubbing (rebuilt ones and unchanged ones not sent)
    fingerprints: dict[str, str]  # every live memory's fingerprint, for the cursor once the publish succeeded


def scan(store: Store, project: str, model: str, seen: dict[str, str], sent: dict[str, str]) -> Scan:
    """The memories to share, rebuilding only those whose fingerprint is not the one in `seen`."""
    now = now_iso()
    out = Scan([], set(), 0, {})
    todo: list[int] = []
    for row in store.db.conn.execute(_FINGERPRINT_SQL):
        pk, mid, archived, superseded_by, expires_at = row[:5]
        if archived or superseded_by or (expires_at and expires_at <= now):
            continue  # not live: a tombstone if it was sent
        blob = json.dumps([__version__, project, model, *row[5:]], ensure_ascii=False).encode("utf-8")
        fingerprint = hashlib.sha256(blob).hexdigest()[:24]
        out.fingerprints[mid] = fingerprint
        if seen.get(mid) == fingerprint:
            out.unchanged.add(mid)
            out.kept_local += mid not in sent
        else:
            todo.append(pk)
    for start in range(0, len(todo), BATCH):
        found = store.db.get_by_pks(todo[start : start + BATCH])
        for item in _rows(store, list(found.values()), project, model, now):
            if isinstance(item, Outgoing):
                out.rebuilt.append(item)
            else:
                out.kept_local += 1
    return out


def _rows(store: Store, batch: list[Memory], project: str, model: str, now: str) -> Iterator[Outgoing | Memory]:
    live = [m for m in batch if is_live(m, now)]
    if not live:
        return
    pks = dict(store.db.get_pk_map([m.id for m in live]))
    entities = store.db.entities_of(list(pks.values()))
    flagged = store.db.personal_ids(list(pks))
    for mem in live:
        pk = pks.get(mem.id)
        text = scrub(mem.text)
        if pk is None or is_personal(mem, flagged) or not text.strip():
            yield mem
            continue
        source = scrub(mem.source or "")[:1000]
        session, seq = session_position(source)
        if session is None or not is_literal(session):  # a filter can only name it in that alphabet
            session, seq = None, None
        fields = {
            "project": project,
            "memory_id": mem.id,
            "text": text,
            "category": mem.category,
            "tags": [t for t in mem.tags if scrub_label(t) == t][:MAX_TAGS],
            "entities": [name for name, _type in entities.get(pk, []) if scrub(name) == name][:MAX_ENTITIES],
            "importance": float(mem.importance),
            "source": source,
            "created_at": mem.created_at,
            "updated_at": mem.updated_at,
            "session": session or "",
            "seq": -1 if seq is None else seq,
        }
        yield Outgoing(pk, mem.id, fields, _hash(fields, model), text != mem.text)
