"""`codememory publish`: send this project's shareable memories to the organisation's Milvus, incrementally.

1. Every memory whose fingerprint changed since the last publish is rebuilt and hashed as it would be sent
   (records.scan); the cursor (cursor.py) holds the hash of what the remote has. New or changed memories are
   upserted (key "<project>/<id>", so a repeat is harmless), in batches of `[remote] batch_size`, with their
   stored vectors (embedded first where missing).
2. Tombstones: every id the cursor lists that is no longer shared (forgotten, archived, superseded, expired,
   made personal, or scrubbed to nothing) is deleted from the remote.
3. The cursor is saved after each batch: an interrupted run resumes; a repeated run with no change sends nothing
   and, with every fingerprint recorded, reads one SQL row per memory.
`delete_project` removes every row of the project from the remote and forgets the cursor."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from codememory.core.result import Result
from codememory.embedding.vector_rows import from_blob
from codememory.errors import RemoteUnavailable
from codememory.remote import cursor as cursors
from codememory.remote.milvus import connect, display_uri
from codememory.remote.records import Outgoing, Scan, project_name, scan

if TYPE_CHECKING:
    from codememory.service.project_store import Store

Progress = Callable[[int, int], None]  # (done, total) of the rows to send and delete


@dataclass
class PublishResult(Result):
    """`codememory publish --json`."""

    project: str  # the project's name in the collection
    remote: str  # the server (without credentials) or Milvus Lite file
    collection: str
    model: str  # the embedding model of the vectors sent
    sent: int  # memories upserted (new or changed)
    deleted: int  # memories deleted from the remote (tombstones)
    unchanged: int  # shared memories the remote already had as they are
    kept_local: int  # personal, or nothing left once scrubbed: never sent
    shared: int  # memories of this project the remote holds after the run
    seconds: float
    dry_run: bool


@dataclass
class DeleteProjectResult(Result):
    """`codememory publish --delete-project --json`."""

    project: str
    remote: str
    collection: str
    deleted: int


def _model(store: Store) -> tuple[str, int]:
    emb = store.semantic.embedder()
    if emb is None:
        raise RemoteUnavailable(
            f"publishing needs an embedding model (the remote searches by meaning too): {store.semantic.reason}"
        )
    probe = store.semantic.embed_documents(["dimension probe"])
    if probe is None:
        raise RemoteUnavailable(f"the embedding model does not answer: {store.semantic.reason}")
    return emb.name, int(probe.shape[1])


def _vectors(store: Store, model: str, rows: list[Outgoing]) -> dict[int, list[float]]:
    """The dense vector of each row: the stored one, else (missing, or the text was scrubbed anew) embedded now."""
    have = store.db.vectors_for(model, [r.pk for r in rows if not r.rescrubbed])
    out = {pk: from_blob(blob, dim).tolist() for pk, (dim, blob) in have.items()}
    todo = [r for r in rows if r.pk not in out]
    if todo:
        vectors = store.semantic.embed_documents([r.fields["text"] for r in todo])
        if vectors is None:
            raise RemoteUnavailable(f"the embedding model does not answer: {store.semantic.reason}")
        fresh = [(r.pk, r.fields["text"]) for r in todo if not r.rescrubbed]
        if fresh:  # keep them, as `codememory embed` would have
            store.semantic.store_vectors(fresh, vectors[[i for i, r in enumerate(todo) if not r.rescrubbed]])
        out.update({r.pk: vectors[i].astype(np.float32).tolist() for i, r in enumerate(todo)})
    return out


def _row(item: Outgoing, vector: list[float]) -> dict[str, Any]:
    return {
        "key": f"{item.fields['project']}/{item.memory_id}",
        **item.fields,
        "content_hash": item.content_hash,
        "dense": vector,
    }


def _delta(found: Scan, sent: dict[str, str]) -> tuple[list[Outgoing], list[str]]:
    """(memories to upsert, ids to delete remotely)."""
    shared = {o.memory_id for o in found.rebuilt} | (found.unchanged & set(sent))
    return [o for o in found.rebuilt if sent.get(o.memory_id) != o.content_hash], [m for m in sent if m not in shared]


def publish(store: Store, *, progress: Progress | None = None, dry_run: bool = False) -> PublishResult:
    started = time.perf_counter()
    cfg = store.config.remote
    project = project_name(cfg.project, store.root)
    model, dim = _model(store)
    where = display_uri(cfg.uri.strip())
    cursor = cursors.load(store.root, where, cfg.collection, project, model)
    found = scan(store, project, model, cursor.seen, cursor.sent)
    changed, gone = _delta(found, cursor.sent)

    def result(dry: bool) -> PublishResult:
        shared = len(found.rebuilt) + len(found.unchanged & set(cursor.sent) - set(gone))
        return PublishResult(
            project, where, cfg.collection, model, len(changed), len(gone), shared - len(changed),
            found.kept_local, shared, round(time.perf_counter() - started, 3), dry,
        )  # fmt: skip

    if dry_run:
        return result(True)
    with connect(cfg) as remote:
        remote.ensure(model, dim)
        if cursor.sent and remote.count(project) < len(cursor.sent):
            # Rows the cursor lists are missing (the collection was dropped or emptied by hand): send all again.
            cursor.sent, cursor.seen = {}, {}
            found = scan(store, project, model, cursor.seen, cursor.sent)
            changed, gone = _delta(found, cursor.sent)
        done, total = 0, len(changed) + len(gone)
        if progress:
            progress(0, total)
        size = max(1, cfg.batch_size)
        for start in range(0, len(changed), size):
            batch = changed[start : start + size]
            vectors = _vectors(store, model, batch)
            remote.upsert([_row(o, vectors[o.pk]) for o in batch])
            cursor.sent.update({o.memory_id: o.content_hash for o in batch})
            cursor.save()
            done += len(batch)
            if progress:
                progress(done, total)
        for start in range(0, len(gone), size):
            ids = gone[start : start + size]
            remote.delete_keys([f"{project}/{mid}" for mid in ids])
            for mid in ids:
                cursor.sent.pop(mid, None)
            cursor.save()
            done += len(ids)
            if progress:
                progress(done, total)
        if total or cursor.seen != found.fingerprints or cursor.updated_at is None:
            cursor.seen = found.fingerprints  # only now: the remote holds what every fingerprint describes
            cursor.save()
    return result(False)


def delete_project(store: Store, name: str | None = None) -> DeleteProjectResult:
    """Delete every row of a project (this one unless `name`) from the remote; this project's cursor is
    forgotten so that a later publish sends everything again."""
    cfg = store.config.remote
    own = project_name(cfg.project, store.root)
    project = project_name(name, store.root) if name else own
    where = display_uri(cfg.uri.strip())
    with connect(cfg) as remote:
        remote.open()
        deleted = remote.delete_project(project)
    if project == own:
        model = store.semantic.model or ""
        cursors.load(store.root, where, cfg.collection, project, model).forget()
    return DeleteProjectResult(project, where, cfg.collection, deleted)
