"""What of a project's memory may leave the machine, and in what form: the rows `publish` sends.

A memory is shared when it is live (not archived, superseded or expired) and not personal. Personal means the
memory's `personal` flag (team sharing's: `store --personal` or the `[share]` personal settings) or a
`personal` / `private` tag. Everything sent is scrubbed again (text/privacy: `<private>` spans and secrets),
although the store scrubbed it on write: a rule added since then applies to old memories too. A memory whose
text is empty once scrubbed is not shared. `entered_by` is never sent.

A row's `content_hash` covers every field sent and the embedding model, so an unchanged memory is never sent
twice and a change of any field (or of the model) sends it again."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory.core.dates import now_iso
from codememory.core.model import Memory
from codememory.remote.milvus import MAX_ENTITIES, MAX_TAGS
from codememory.text.privacy import scrub

if TYPE_CHECKING:
    from codememory.service.project_store import Store

PERSONAL_TAGS = frozenset({"personal", "private"})
BATCH = 1000
_NAME_RE = re.compile(r"[^A-Za-z0-9_.@+-]+")


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


def outgoing(store: Store, project: str, model: str) -> Iterator[Outgoing | Memory]:
    """Every memory of the store: an `Outgoing` for each one to share, the `Memory` itself for each one that
    stays local (personal, or nothing left after scrubbing); archived, superseded and expired ones are
    left out (the caller's tombstones delete them remotely)."""
    now = now_iso()
    batch: list[Memory] = []
    for mem in store.db.iter_all(BATCH):
        batch.append(mem)
        if len(batch) >= BATCH:
            yield from _rows(store, batch, project, model, now)
            batch = []
    yield from _rows(store, batch, project, model, now)


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
        fields = {
            "project": project,
            "memory_id": mem.id,
            "text": text,
            "category": mem.category,
            "tags": [t for t in mem.tags if scrub(t) == t][:MAX_TAGS],
            "entities": [name for name, _type in entities.get(pk, []) if scrub(name) == name][:MAX_ENTITIES],
            "importance": float(mem.importance),
            "source": scrub(mem.source or "")[:1000],
            "created_at": mem.created_at,
            "updated_at": mem.updated_at,
        }
        yield Outgoing(pk, mem.id, fields, _hash(fields, model), text != mem.text)
