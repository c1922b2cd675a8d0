"""JSON Lines import/export: one memory per line, every field kept (id, timestamps, source, ...). An export also
says where each memory came from (`provenance`); an import never reads that: what it stores came from the file
(origin `import`, core/provenance.py)."""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Literal

from codememory.core.bounded_input import (
    IMPORT_LINE_MAX_BYTES,
    LineTooLong,
    capped_lines,
    valid_json_text,
)
from codememory.core.dates import canonical_iso, now_iso
from codememory.core.model import ID_RE, LINK_TYPES, Memory, new_memory_id, validate_category, validate_importance
from codememory.core.provenance import Provenance, import_by
from codememory.core.worker_pool import cores, in_order
from codememory.embedding.semantic import Semantic
from codememory.errors import InvalidInput
from codememory.service.entity_backfill import fill_pending_entities
from codememory.service.memory_entities import entities_in
from codememory.service.remap import Remapper
from codememory.service.results import ImportReport, LineError
from codememory.store.database import Database
from codememory.store.memories import memory_row, provenance_row
from codememory.text.instructions import is_instruction_like
from codememory.text.memory_fields import clean_label, clean_name, clean_tags, clean_text
from codememory.text.privacy import scrub_message


@dataclass
class ParsedImport:
    memories: list[Memory] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)
    id_given: set[str] = field(default_factory=set)
    links: list[tuple[str, str, str, float | None]] = field(default_factory=list)  # (from, to, type, score)


def write_jsonl(
    memories: Iterable[Memory],
    out: IO[str],
    links: Mapping[str, list[dict[str, Any]]] | None = None,
    remap: Remapper | None = None,
) -> int:
    """One JSON object a line; `links` (memory id -> its outgoing links) adds a "links" key where present; `remap`
    rewrites project paths."""
    count = 0
    for mem in memories:
        obj = remap.record(mem.to_dict()) if remap else mem.to_dict()
        if links and links.get(mem.id):
            obj["links"] = links[mem.id]
        out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        count += 1
    return count


def _links(obj: dict[str, Any], from_id: str) -> list[tuple[str, str, str, float | None]]:
    raw = obj.get("links") or []
    if not isinstance(raw, list):
        raise InvalidInput("links must be a list of {to, type, score}")
    out: list[tuple[str, str, str, float | None]] = []
    for link in raw:
        if not isinstance(link, dict):
            raise InvalidInput("links must be a list of {to, type, score}")
        to, kind, score = link.get("to"), link.get("type"), link.get("score")
        if not isinstance(to, str) or not ID_RE.match(to):
            raise InvalidInput(f"a link's 'to' must be a memory id, got {to!r}")
        if kind not in LINK_TYPES:
            raise InvalidInput(f"unknown link type {kind!r}; choose one of: {', '.join(LINK_TYPES)}")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise InvalidInput("a link's score must be a number or null")
        out.append((from_id, to, kind, None if score is None else float(score)))
    return out


def _timestamp(obj: dict[str, Any], key: str, required: bool, default: str | None = None) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            return default
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{key} must be an ISO 8601 string")
    try:
        return canonical_iso(value)
    except ValueError:
        raise InvalidInput(f"{key} is not an ISO 8601 timestamp: {value!r}") from None


def memory_from_dict(obj: Any) -> tuple[Memory, bool]:
    """Validate one exported record. Returns the memory and whether its id came from the record."""
    if not isinstance(obj, dict):
        raise InvalidInput("expected a JSON object")
    text = obj.get("text")
    if not isinstance(text, str):
        raise InvalidInput("missing or non-string 'text'")
    text = clean_text(text)  # the same rules as `store` for every free-form field (memory_fields.py)
    raw_id = obj.get("id")
    if raw_id is not None and (not isinstance(raw_id, str) or not ID_RE.match(raw_id)):
        raise InvalidInput(f"id must look like mem_ and 8 hex digits, got {raw_id!r}")
    tags = obj.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidInput("tags must be a list of strings")
    for key in ("entered_by", "source"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise InvalidInput(f"{key} must be a string")
    access_count = obj.get("access_count", 0) or 0
    if not isinstance(access_count, int) or isinstance(access_count, bool) or access_count < 0:
        raise InvalidInput("access_count must be a non-negative integer")
    superseded_by = obj.get("superseded_by")
    if superseded_by is not None and (not isinstance(superseded_by, str) or not ID_RE.match(superseded_by)):
        raise InvalidInput(f"superseded_by must be a memory id, got {superseded_by!r}")
    archived = obj.get("archived", False)
    if not isinstance(archived, bool):
        raise InvalidInput("archived must be true or false")
    # most records carry their dates: the clock is read only for one that does not (once per record showed in
    # an import's profile)
    created = _timestamp(obj, "created_at", False) or now_iso()
    mem = Memory(
        id=raw_id or new_memory_id(),
        text=text,
        category=validate_category(obj.get("category")),
        importance=validate_importance(obj.get("importance")),
        tags=clean_tags(tags),
        entered_by=clean_name(obj.get("entered_by")),
        source=clean_label(obj.get("source")),
        created_at=created,
        updated_at=_timestamp(obj, "updated_at", True, created) or created,
        expires_at=_timestamp(obj, "expires_at", False),
        access_count=access_count,
        last_accessed_at=_timestamp(obj, "last_accessed_at", False),
        archived=archived,
        superseded_by=superseded_by,
    )
    return mem, raw_id is not None


def parse_jsonl(lines: Iterable[str | LineTooLong], remap: Remapper | None = None, first: int = 1) -> ParsedImport:
    """Parse and check lines (numbered from `first`)."""
    result = ParsedImport()
    for number, line in enumerate(lines, start=first):
        if isinstance(line, LineTooLong):
            result.errors.append(LineError(number, str(line)))
            continue
        if not line.strip():
            continue
        try:
            obj = json.loads(valid_json_text(line))  # a lone surrogate escape would reach SQLite otherwise
        except json.JSONDecodeError as exc:
            result.errors.append(LineError(number, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if remap and isinstance(obj, dict):
            obj = remap.record(obj)
        try:
            mem, given = memory_from_dict(obj)
            links = _links(obj, mem.id)
        except InvalidInput as exc:  # its message may quote a field of the line, which may hold a secret
            result.errors.append(LineError(number, scrub_message(exc, limit=300)))
            continue
        result.memories.append(mem)
        result.links += links
        if given:
            result.id_given.add(mem.id)
    return result


def iter_lines(stream: IO[str]) -> Iterator[str]:
    yield from stream


# ------------------------------------------------------------------------------- the store's files
def export_memories(db: Database, dest: str | os.PathLike[str] | IO[str], remap: Remapper | None = None) -> int:
    """Write every memory as JSON Lines to a path ('-' for stdout) or an open text file (`Store.export`)."""
    links = db.outgoing_links()
    if isinstance(dest, str) and dest == "-":
        return write_jsonl(db.iter_all(), sys.stdout, links, remap)
    if not isinstance(dest, (str, os.PathLike)):
        return write_jsonl(db.iter_all(), dest, links, remap)
    path = Path(dest)
    if path.is_dir():
        raise InvalidInput(f"{path} is a directory; give a file name")
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as out:
            count = write_jsonl(db.iter_all(), out, links, remap)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InvalidInput(f"cannot write {path}: {exc.strerror}") from None
    return count


IMPORT_BATCH = 5_000  # lines parsed, checked and inserted at a time: a file of any size is streamed
ImportProgress = Callable[[str, int, int | None], None]  # (phase: "read" | "entities" | "embed", done, total)
EntityTiming = Literal["auto", "now", "later"]  # when an import extracts its memories' entities


def import_memories(
    db: Database,
    semantic: Semantic,
    src: str | os.PathLike[str] | IO[str],
    *,
    skip_invalid: bool = False,
    remap: Remapper | None = None,
    progress: ImportProgress | None = None,
    own: bool = False,
    entities: EntityTiming = "now",
) -> ImportReport:
    """Import JSON Lines (`Store.import_`, whose docstring says the rules). The lines are read, checked and
    inserted in batches inside one transaction (a file with invalid lines imports nothing unless skip_invalid:
    the transaction is rolled back), then the new memories are embedded in batches, after the commit. Their
    entities are marked pending in that transaction. With `entities="now"` every memory still pending is then
    extracted, this import's and any an earlier, interrupted pass left (so re-running any import repairs the
    store); with "auto" only an import of up to one batch is, a larger one is left to the daemon's pass
    (entity_backfill.py); with "later" nothing is."""

    def lines(stream: IO[Any], what: str) -> Iterator[str | LineTooLong]:
        return capped_lines(stream, IMPORT_LINE_MAX_BYTES, sys.maxsize, what)

    # Whatever the lines say of where they came from: they came from this file (or, with `own`, from the user).
    name = Path(src).name if isinstance(src, (str, os.PathLike)) else None
    origin = Provenance(by="user") if own else Provenance("import", import_by(name), now_iso())
    # Read now, each text's entities are read where it is parsed and scrubbed, in the same visit (the workers' for a
    # large import): no second pass reading every text back from the store and sending it to workers again.
    read = _Reading(remap, not origin.trusted, entities == "now")
    if isinstance(src, str) and src == "-":
        report, new_pks = _import_stream(db, lines(sys.stdin, "standard input"), skip_invalid, read, progress, origin)
    elif isinstance(src, (str, os.PathLike)):
        try:
            with open(src, "rb") as fh:
                report, new_pks = _import_stream(db, lines(fh, str(src)), skip_invalid, read, progress, origin)
        except FileNotFoundError:
            raise InvalidInput(f"no such file: {src}") from None
        except OSError as exc:
            raise InvalidInput(f"cannot read {src}: {exc.strerror}") from None
    else:
        report, new_pks = _import_stream(db, lines(src, "the input"), skip_invalid, read, progress, origin)
    if entities == "now":  # anything still pending (an earlier pass cut short); this import's are read already
        if db.has_entities_pending():
            read_pending_entities(db, progress)
    elif entities == "auto" and report.added <= IMPORT_BATCH:  # a small one at once
        read_pending_entities(db, progress, report.added)
    _embed_new(semantic, new_pks, progress)
    return report


def read_pending_entities(db: Database, progress: ImportProgress | None, limit: int | None = None) -> int:
    """The entity pass as part of an import: up to `limit` (None: every) memory still pending, on every core when
    there are more than a batch, reported as the import's "entities" phase."""
    total = db.count_entities_pending() if limit is None else limit

    def filled(done: int) -> None:
        if progress is not None and total > IMPORT_BATCH:
            progress("entities", done, total)

    return fill_pending_entities(db, limit, filled, workers=cores() if total > IMPORT_BATCH else 1)


class _Aborted(Exception):
    """Invalid lines without skip_invalid: the import's transaction is rolled back."""


# One memory as a worker sends it: (id, whether the line gave the id, its row but the provenance columns
# (store/memories.memory_row), its tags, whether it reads like instructions, its entities when they are read with
# the import (else None: marked pending)). Plain tuples: the writing process unpickled Memory objects at a fifth of
# its time per memory.
_Row = tuple[str, bool, tuple[Any, ...], list[str], bool, list[tuple[str, str]] | None]


@dataclass(frozen=True)
class _Reading:
    """What is done to each line where it is read: `remap`, the instruction check (`check`: the file is not the
    user's own) and the entities (`entities`: read with the import)."""

    remap: Remapper | None
    check: bool
    entities: bool


@dataclass
class _Prepared:
    """One batch with all the work that needs no store, done once per text (in a worker process for a large
    import): parsed and scrubbed, its rows built, whether each memory reads like instructions (only asked for
    when the file is not the user's own) and, for an import that reads them now, its entities (else they are the
    pass after the import's commit)."""

    rows: list[_Row]
    errors: list[LineError]
    links: list[tuple[str, str, str, float | None]]
    last_line: int  # the number of the batch's last line


def _prepare(lines: list[str | LineTooLong], read: _Reading, first: int) -> _Prepared:
    parsed = parse_jsonl(lines, read.remap, first)
    rows: list[_Row] = [
        (
            m.id,
            m.id in parsed.id_given,
            memory_row(m),
            m.tags,
            read.check and is_instruction_like(m.text),
            entities_in(m.text) if read.entities else None,
        )
        for m in parsed.memories
    ]
    return _Prepared(rows, parsed.errors, parsed.links, first + len(lines) - 1)


def _prepared(lines: Iterator[str | LineTooLong], read: _Reading) -> Iterator[tuple[int, _Prepared]]:
    """(lines read so far, prepared batch), in file order. A file of more than one batch is prepared by a pool of
    processes, one per core, while this one writes the batches before them to the store."""
    first = 1
    batch = list(itertools.islice(lines, IMPORT_BATCH))
    following = list(itertools.islice(lines, IMPORT_BATCH)) if batch else []
    workers = cores()
    if not following or workers < 2:
        while batch:
            prepared = _prepare(batch, read, first)
            first += len(batch)
            yield prepared.last_line, prepared
            batch, following = following, list(itertools.islice(lines, IMPORT_BATCH))
        return

    def calls() -> Iterator[tuple[Any, ...]]:
        start = first
        for chunk in itertools.chain((batch, following), iter(lambda: list(itertools.islice(lines, IMPORT_BATCH)), [])):
            yield chunk, read, start
            start += len(chunk)

    for prepared in in_order(_prepare, calls(), workers):
        yield prepared.last_line, prepared


def _first_errors(report: ImportReport, shown: int = 5) -> str:
    """The first `shown` invalid lines, and how many more."""
    first = "; ".join(str(e) for e in report.invalid[:shown])
    return first + (f" (and {len(report.invalid) - shown:,} more)" if len(report.invalid) > shown else "")


def _import_stream(
    db: Database,
    lines: Iterator[str | LineTooLong],
    skip_invalid: bool,
    read: _Reading,
    progress: ImportProgress | None,
    origin: Provenance,
) -> tuple[ImportReport, list[int]]:
    report = ImportReport()
    new_pks: list[int] = []
    seen: set[str] = set()
    seen_texts: set[str] = set()
    links: list[tuple[str, str, str, float | None]] = []
    valid = 0  # lines that held a memory (new or already present)
    now = now_iso()
    provenance = provenance_row(origin)
    waiting = provenance_row(replace(origin, review="pending"))  # from elsewhere and reading like instructions
    try:
        with db.bulk_load():
            for done, prepared in _prepared(lines, read):
                report.invalid += prepared.errors
                valid += len(prepared.rows)
                if report.invalid and not skip_invalid:
                    continue  # nothing will be imported: read on only to report every invalid line
                fresh = _fresh(db, prepared.rows, seen, seen_texts, now, report)
                added = db.insert_rows(
                    [((*row, *(waiting if waits else provenance)), tags) for row, tags, waits, _ in fresh]
                )
                report.added += len(added)
                if read.entities:  # with the rows, in the import's transaction
                    db.add_entities(
                        [(pk, found or []) for pk, (*_, found) in zip(added, fresh, strict=True)], unmark=False
                    )
                else:
                    db.mark_entities_pending(added)  # with the rows: a crash after the commit leaves them marked
                new_pks += added
                links += prepared.links
                if progress is not None:
                    progress("read", done, None)
            if report.invalid and not skip_invalid:
                raise _Aborted
            if report.invalid and not valid:
                # --skip-invalid on a file with no memory in it (a binary, the wrong file): not a success
                raise InvalidInput(
                    f"nothing imported: none of its {len(report.invalid):,} lines is a memory "
                    f"({_first_errors(report)}); is it an export of `codememory export`?"
                )
            _import_links(db, links)
    except _Aborted:
        raise InvalidInput(
            f"import aborted, nothing imported: {_first_errors(report)}; fix them or use --skip-invalid"
        ) from None
    return report, new_pks


def _fresh(
    db: Database, rows: list[_Row], seen: set[str], seen_texts: set[str], now: str, report: ImportReport
) -> list[tuple[tuple[Any, ...], list[str], bool, list[tuple[str, str]] | None]]:
    """(row, tags, reads like instructions, entities) of the batch's memories that are new: not in the store, not
    earlier in the file (by id, or by text for a record without an id)."""
    existing = db.existing_ids([r[0] for r in rows])
    fresh: list[tuple[tuple[Any, ...], list[str], bool, list[tuple[str, str]] | None]] = []
    for memory_id, given, row, tags, waits, found in rows:
        if memory_id in existing or memory_id in seen:
            report.skipped_existing += 1
            continue
        if not given:
            key = row[1].strip()  # the text
            if key in seen_texts or db.find_live_duplicate(row[1], now):
                report.skipped_existing += 1
                continue
            seen_texts.add(key)
        seen.add(memory_id)
        fresh.append((row, tags, waits, found))
    return fresh


def _import_links(db: Database, links: Sequence[tuple[str, str, str, float | None]]) -> None:
    """The exported links whose two memories are both in the store now (re-importing changes nothing)."""
    pks = dict(db.get_pk_map([i for a, b, _, _ in links for i in (a, b)]))
    rows = [(pks[a], pks[b], kind, score) for a, b, kind, score in links if a in pks and b in pks]
    db.add_links(rows, now_iso())


def _embed_new(semantic: Semantic, pks: Sequence[int], progress: ImportProgress | None) -> None:
    """Vectors for freshly imported memories (when an embedder works), a batch at a time, then the vector index
    brought up to date (its graph is extended here, not in a later search)."""
    if not semantic.configured or not pks:
        return
    done = 0
    for i in range(0, len(pks), 256):
        n = semantic.backfill(256, pks[i : i + 256])
        if not n and semantic.reason:
            return  # stored without vectors: `codememory embed` fills them in later
        done += n
        if progress is not None:
            progress("embed", done, len(pks))
    semantic.maintain()
