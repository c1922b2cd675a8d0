"""The Python API (`codememory.open_store`): a project's store, on which every operation (codememory.operations)
runs."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from codememory.core import safe_files
from codememory.core.bounded_input import text_arguments
from codememory.core.config import load_config
from codememory.core.dates import now_iso
from codememory.core.model import (
    ID_RE,
    LINK_TYPES,
    Memory,
    new_memory_id,
    validate_category,
    validate_importance,
)
from codememory.core.project import db_path, find_project_root, store_dir
from codememory.core.provenance import Provenance, local_by_from_fields
from codememory.embedding.semantic import Semantic
from codememory.errors import AlreadyExists, CodememoryError, InvalidInput, NotFound
from codememory.retrieval.proactive import (
    DEFAULT_MAX_MEMORIES,
    DEFAULT_MAX_NEW,
    RetrieveRequest,
    RetrieveResult,
    retrieve,
)
from codememory.retrieval.search import DEFAULT_THRESHOLD, SearchResult, check_search_args
from codememory.retrieval.search import search as run_search
from codememory.retrieval.step import Step
from codememory.service.auto_links import LINK_POOL, links_to_make
from codememory.service.duplicates import meaning_duplicate, text_duplicate
from codememory.service.filters import DateLike, memory_filters, when
from codememory.service.memory_entities import entities_in, entity_names
from codememory.service.provenance_check import check_store_origin
from codememory.service.results import (
    AddResult,
    EntityName,
    ImportReport,
    MemoryLink,
    NewLink,
    Relations,
    StoreStats,
)
from codememory.service.share_files import is_shared_project, write_share_gitignore, write_store_gitignore
from codememory.service.sharing import Sharing, SyncReport
from codememory.service.store_embedding import EmbeddingAccess
from codememory.service.store_sessions import SessionAccess
from codememory.store.database import Database
from codememory.store.filters import SORT_COLUMNS, Filters
from codememory.text.memory_fields import clean_label, clean_name, clean_tags, clean_text
from codememory.text.privacy import scrub

# Import and export (with the entity pass and the path remapping) load when they run: every command opens a store.
if TYPE_CHECKING:
    from codememory.service.transfer import EntityTiming, ImportProgress

__all__ = ["AddResult", "DateLike", "ImportReport", "Store", "open_store"]


def _check_ids(ids: Sequence[str]) -> list[str]:
    if not ids:
        raise InvalidInput("give at least one memory id")
    bad = [i for i in ids if not ID_RE.match(i)]
    if bad:
        raise InvalidInput(f"not a memory id (expected mem_ and 8 hex digits): {', '.join(bad)}")
    return list(dict.fromkeys(ids))


class Store(EmbeddingAccess, SessionAccess):
    """A project's memory. `Store.open()` finds the project as the CLI does; use as a context manager."""

    def __init__(self, root: Path, db: Database) -> None:
        self.root = root
        self.db = db
        try:
            self.config = load_config(store_dir(root))
        except BaseException:
            db.close()
            raise
        db.stale_factor = min(1.0, max(0.0, self.config.staleness.demote))
        db.usage_half_life_days = max(0.0, self.config.usefulness.half_life_days)
        db.usage_weight = min(1.0, max(0.0, self.config.usefulness.weight))
        self.semantic = Semantic(db, self.config, store_dir(root) / "cache")
        self.sharing = Sharing(root, db, self.config)
        self.follow_error: str | None = None  # why the text form could not be followed on open (the store works on)
        self.followed: SyncReport | None = None  # what following the text form applied since the store was opened

    # ----------------------------------------------------------------- opening
    @classmethod
    def open(cls, project: str | os.PathLike[str] | None = None) -> Store:
        root = find_project_root(project)
        # A fresh clone of a project that shares its memory has the text form but no database (it is not
        # committed): create it, so the team's memories reach this clone's agents without a step.
        create = not os.path.lexists(db_path(root)) and is_shared_project(root)
        store = cls(root, Database.open(db_path(root), create=create))
        try:
            check_store_origin(root, store.db)  # a memory.db that came with the repository is not ours
            store.follow()
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def init(cls, project: str | os.PathLike[str] | None = None) -> tuple[Store, bool]:
        """Create the store (idempotent). Returns the store and whether it was newly created."""
        root = find_project_root(project)
        folder = store_dir(root)
        safe_files.make_dirs(folder)  # refuses a .codememory that is a link (see safe_files)
        created = not os.path.lexists(db_path(root))
        write_store_gitignore(root)  # the binary store stays out of git until sharing commits its text form
        store = cls(root, Database.open(db_path(root), create=True))
        try:
            check_store_origin(root, store.db)
            if store.sharing.on:
                write_share_gitignore(root)
            store.follow()
        except BaseException:
            store.close()
            raise
        return store, created

    def follow(self) -> SyncReport | None:
        """Apply the memory files of the text form that changed since the last look (cheap when none did; see
        service/sharing.py). Never fails the caller: a store that cannot follow its files still works, and says
        why in `follow_error` (and `codememory sync` reports it)."""
        try:
            report = self.sharing.follow()
        except (CodememoryError, OSError) as exc:
            self.follow_error = scrub(str(exc))[:300]
            return None
        if report is not None:
            self.followed = report if self.followed is None else self.followed.merged(report)
        return report

    def sync(self) -> SyncReport:
        """`codememory sync`: follow every memory file now, embed what changed, and (sharing on) write the files of
        the memories changed here that are not written yet."""
        report = self.sharing.sync(embed=self.embed_ids)
        if self.followed is not None:  # what opening this store applied already counts too
            report = self.followed.merged(report)
            report.embedded += self.embed_ids([i for i in self.followed.changed if i not in report.changed])
            self.followed = None
        return report

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def store_path(self) -> Path:
        return self.db.path

    # ------------------------------------------------------------------ writes
    @text_arguments
    def add(
        self,
        text: str,
        *,
        category: str | None = None,
        importance: float | str | None = None,
        tags: str | Sequence[str] | None = None,
        expires: DateLike = None,
        entered_by: str | None = None,
        source: str | None = None,
        supersedes: Sequence[str] | None = None,
        entities: Sequence[str] | None = None,
        check_duplicates: bool = True,
        personal: bool | None = None,
        provenance: Provenance | None = None,
    ) -> AddResult:
        """Store a memory. A (near-)identical live memory is returned instead of a copy (`created` is
        False). `entities` adds names the caller knows are involved (an extraction model's) to those
        found in the text. With an embedder, the memory is embedded and linked to close neighbours; the memories
        in `supersedes` are marked superseded by it and drop out of search. `check_duplicates` False stores it even
        when a live memory is (nearly) the same (a correction of one word, e.g. a renamed path). `personal` True
        keeps it out of the team's shared text form (None: the [share] settings decide, by category and
        entered_by). `provenance`: where it comes from (core/provenance.py); None: written here, by whom read from
        `entered_by` and `source` (a person, an agent, an extraction)."""
        text = clean_text(text)
        now = now_iso()
        expires_at = when(expires, "expires")
        if expires_at is not None and expires_at <= now:
            raise InvalidInput(f"expiry {expires_at} is in the past")
        mem = Memory(
            id=new_memory_id(),
            text=text,
            category=validate_category(category),
            importance=validate_importance(importance),
            tags=clean_tags(tags),
            entered_by=clean_name(entered_by),
            source=clean_label(source),
            created_at=now,
            updated_at=now,
            expires_at=expires_at,
            provenance=provenance or Provenance(by=local_by_from_fields(entered_by, source)),
        )
        live = Filters(now=now)
        duplicate = text_duplicate(self.db, text, live, self.config.dedup.text_ratio) if check_duplicates else None
        if duplicate:
            return self._existing(duplicate[0], now, duplicate[1])
        vector = None
        neighbours: list[tuple[int, float]] = []
        from codememory.embedding.relevance import scale_for

        scale = scale_for(
            self.semantic.model if self.semantic.configured else None,
            dedup=self.config.dedup.cosine,
            links=self.config.links.cosine,
            cluster=self.config.consolidation.similarity_threshold,
        )
        if self.semantic.configured:
            vectors = self.semantic.embed_documents([text])
            if vectors is not None:
                vector = vectors[0]
                neighbours = self.semantic.neighbours(vector, max(self.config.links.max_links + 1, LINK_POOL), live)
                close = [(pk, c) for pk, c in neighbours[:3] if c >= scale.dedup]
                same = None if supersedes or not check_duplicates else meaning_duplicate(self.db, text, close)
                if same:
                    return self._existing(same[0], now, same[1])
        old_pks = self._resolve(supersedes or [])
        self._insert_fresh(mem, self.sharing.personal(mem.category, mem.entered_by, personal))
        pk = self.db.pk_of(mem.id)
        assert pk is not None
        if vector is not None:
            self.semantic.store_vectors([(pk, text)], vector[None, :])
        own_entities = entities_in(text, entities or ())
        self.db.set_entities([(pk, own_entities)])
        candidates = [(other, score) for other, score in neighbours if other not in old_pks]
        names_of = {k: [n for n, _t in v] for k, v in self.db.entities_of([o for o, _ in candidates]).items()}
        close = links_to_make(candidates, [n for n, _t in own_entities], names_of, scale, self.config.links.max_links)
        category_of = self.db.categories_of([other for other, _ in close])
        # Without an LLM a neighbour is refined (same kind of memory) or given context (another kind);
        # supersedes, conflicts and corroborates need a caller (or a model) that knows.
        links: list[tuple[int, int, str, float | None]] = []
        for other, score in close:
            kind = "refines" if category_of.get(other) == mem.category else "contextualizes"
            links.append((pk, other, kind, round(score, 4)))
        links += [(pk, old, "supersedes", None) for old in old_pks]
        self.db.add_links(links, now)
        if old_pks:
            self.db.supersede(old_pks, mem.id, now)
        ids = self.db.ids_of([b for _, b, _, _ in links])
        made = [NewLink(ids[b], t, sc) for _, b, t, sc in links]
        self.sharing.publish([mem.id, *self.db.ids_of(old_pks).values()])
        return AddResult.stored(mem, embedded=vector is not None, links=made)

    def _insert_fresh(self, mem: Memory, personal: bool) -> None:
        from codememory.core.git_head import head_commit  # two small file reads, no git process

        commit = head_commit(self.root)
        for _attempt in range(5):
            try:
                self.db.insert(mem, git_commit=commit, personal=personal)
                return
            except AlreadyExists as exc:  # an id collision (1 in 4 billion) gets a fresh id
                if exc.constraint != "memories.id":
                    raise
                mem.id = new_memory_id()
        raise RuntimeError("could not allocate a unique memory id")

    def _existing(self, pk: int, now: str, reason: str) -> AddResult:
        self.db.touch([pk], now)
        return AddResult.existing(self.db.get_by_pks([pk])[pk], reason)

    def _resolve(self, ids: Sequence[str]) -> list[int]:
        if not ids:
            return []
        ids = _check_ids(ids)
        found = dict(self.db.get_pk_map(ids))
        unknown = [i for i in ids if i not in found]
        if unknown:
            raise NotFound(f"no memory with id {', '.join(unknown)}")
        return [found[i] for i in ids]

    @text_arguments
    def forget(self, ids: Sequence[str], *, purge: bool = True) -> tuple[list[str], list[str]]:
        """Delete memories. Returns (forgotten, unknown). With purge, the text is also scrubbed from
        the full-text index segments and the WAL so it cannot be recovered from the file."""
        ids = _check_ids(ids)
        gone = self.db.delete(ids)
        if gone and purge:
            self.db.purge_deleted_text()
        self.sharing.publish(gone)  # tombstones: the id and when, never the text
        return gone, [i for i in ids if i not in gone]

    @text_arguments
    def archive(self, ids: Sequence[str], *, archived: bool = True) -> tuple[list[str], list[str]]:
        ids = _check_ids(ids)
        done = self.db.set_archived(ids, archived, now_iso())
        self.sharing.publish(done)
        return done, [i for i in ids if i not in done]

    def prune(self, *, before: DateLike = None, dry_run: bool = False) -> list[Memory]:
        """Delete expired memories (and, with `before`, everything created before that date)."""
        victims = self.db.expired_or_before(now_iso(), when(before, "before"))
        if victims and not dry_run:
            self.db.delete([m.id for m in victims])
            self.db.purge_deleted_text()
            self.sharing.publish([m.id for m in victims])
        return victims

    @text_arguments
    def edit(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        category: str | None = None,
        importance: float | str | None = None,
        tags: str | Sequence[str] | None = None,
    ) -> Memory:
        """Change a memory's text, category, importance or tags (None: unchanged), cleaned as `add` cleans them.
        New text is the user's: the memory is then written here, by the user (core/provenance.py). New text gets its
        entities again and, with an embedder, a fresh vector (else `embed` renews it); with
        sharing on, its file is rewritten."""
        _check_ids([memory_id])
        pk = self.db.pk_of(memory_id)
        if pk is None:
            raise NotFound(f"no memory with id {memory_id}")
        new_text = clean_text(text) if text is not None else None
        self.db.update_fields(
            pk,
            now_iso(),
            provenance=Provenance(by="user") if new_text is not None else None,  # new text typed here is the user's
            text=new_text,
            category=validate_category(category) if category is not None else None,
            importance=validate_importance(importance) if importance is not None else None,
            tags=clean_tags(tags) if tags is not None else None,
        )
        if new_text is not None:
            self.db.set_entities([(pk, entities_in(new_text, ()))])
            if self.semantic.configured:
                vectors = self.semantic.embed_documents([new_text])
                if vectors is not None:
                    self.semantic.store_vectors([(pk, new_text)], vectors)
        self.sharing.publish([memory_id])
        return self.get(memory_id, touch=False)

    @text_arguments
    def remember_scan(
        self,
        text: str,
        *,
        entered_by: str | None = None,
        source: str | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> list[AddResult]:
        """Store every `*Remember*: ...` note in `text` (private spans and secrets removed first; a note
        left empty is skipped). Bounded: only the first REMEMBER_SCAN_MAX_BYTES characters (to their last
        whole line) and REMEMBER_SCAN_MAX_NOTES notes are taken; a note too long for a memory, or one
        `add` refuses, is skipped. Each of these is told to `on_warning` in one line; the other notes
        are stored all the same."""
        from codememory.service.remember_notes import remember_notes

        return remember_notes(self.add, text, entered_by=entered_by, source=source, on_warning=on_warning)

    # ------------------------------------------------------------------- reads
    @text_arguments
    def get(self, memory_id: str, *, touch: bool = True) -> Memory:
        _check_ids([memory_id])
        found = self.db.get_by_ids([memory_id])
        if not found:
            raise NotFound(f"no memory with id {memory_id}")
        pk, mem = found[0]
        if touch:
            now = now_iso()
            self.db.touch([pk], now)
            mem.access_count += 1
            mem.last_accessed_at = now
        return mem

    @text_arguments
    def filters(self, **filter_args: Any) -> Filters:
        """The store's filters from the callers' (see `codememory.service.filters.memory_filters`)."""
        return memory_filters(**filter_args)

    @text_arguments
    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        offset: int = 0,
        fuzzy: bool | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        touch: bool = True,
        mode: str = "hybrid",
        show_held_back: bool = False,
        **filter_args: Any,
    ) -> SearchResult:
        """Search with the grep-like syntax. `fuzzy=None` adds typo-tolerant hits only when exact
        matches are fewer than `limit`; True always adds them; False never does. `mode`: "hybrid"
        (keywords + meaning when an embedder is configured), "lexical" or "semantic". Results
        the relevance decision holds back are counted in `held_back`; `show_held_back` lists them after the
        others, marked (retrieval/search.py)."""
        check_search_args(query, limit, offset, mode, threshold)
        result, pks = run_search(
            self.db,
            scrub(query),  # the query may reach an embedding model
            self.filters(**filter_args),
            limit=limit,
            offset=offset,
            fuzzy=fuzzy,
            threshold=threshold,
            semantic=self.semantic,
            mode=mode,
            show_held_back=show_held_back,
        )
        if touch and pks:
            now = now_iso()
            self.db.touch(pks, now)
            for hit in result.hits:
                hit.memory.access_count += 1
                hit.memory.last_accessed_at = now
        return result

    @text_arguments
    def list(
        self,
        *,
        sort: str = "created",
        order: str = "desc",
        limit: int = 20,
        offset: int = 0,
        **filter_args: Any,
    ) -> list[Memory]:
        if sort not in SORT_COLUMNS:
            raise InvalidInput(f"unknown sort {sort!r}; choose one of: {', '.join(SORT_COLUMNS)}")
        if order not in ("asc", "desc"):
            raise InvalidInput(f"order must be asc or desc, got {order!r}")
        if limit < 1 or offset < 0:
            raise InvalidInput("limit must be at least 1 and offset not negative")
        return self.db.list_memories(
            self.filters(**filter_args), sort=sort, descending=order == "desc", limit=limit, offset=offset
        )

    @text_arguments
    def count(self, **filter_args: Any) -> int:
        return self.db.count(self.filters(**filter_args))

    @text_arguments
    def relations(self, memory_id: str) -> Relations:
        """A memory's links (both directions) and entities, for `show`."""
        pk = self.db.pk_of(memory_id)
        if pk is None:
            raise NotFound(f"no memory with id {memory_id}")
        return Relations(
            [MemoryLink(d, other, t, sc) for d, other, t, sc in self.db.links_of(pk)],
            [EntityName(n, t) for n, t in self.db.entities_of([pk]).get(pk, [])],
        )

    @text_arguments
    def link(self, from_id: str, to_id: str, link_type: str) -> None:
        """Record a relation the caller knows (e.g. "conflicts"); "supersedes" also retires `to_id`."""
        if link_type not in LINK_TYPES:
            raise InvalidInput(f"unknown link type {link_type!r}; choose one of: {', '.join(LINK_TYPES)}")
        a, b = self._resolve([from_id, to_id]) if from_id != to_id else (None, None)
        if a is None or b is None:
            raise InvalidInput("a memory cannot link to itself")
        now = now_iso()
        self.db.add_links([(a, b, link_type, None)], now)
        if link_type == "supersedes":
            self.db.supersede([b], from_id, now)
        self.sharing.publish([from_id, to_id])

    @text_arguments
    def retrieve(
        self,
        query_expansion: Sequence[str],
        *,
        entities: Sequence[str] = (),
        pinned: Sequence[str] = (),
        max_memories: int = DEFAULT_MAX_MEMORIES,
        max_new: int = DEFAULT_MAX_NEW,
        token_budget: int = 1500,
        touch: bool = True,
        exclude: Sequence[str] = (),
        session_id: str | None = None,
        step: Step | None = None,
        request_phrases: int = 1,
        request_carried: bool = False,
    ) -> RetrieveResult:
        """Proactive retrieval for an agent's current step (see codememory.retrieval.proactive); `exclude`: ids
        the agent's context already carries; `session_id`: the agent's session (what it was shown and has not used
        yet is still in play there, so it does not count against a memory in it); `step`: the agent's latest tool
        call (codememory.retrieval.step), when the caller knows it; `request_phrases`: how many leading phrases are the
        user's request (0: none, the phrases are all the tool calls'); `request_carried`: the turn's first answer stays
        in the agent's context, so a later call gets only what its step brings."""
        request = RetrieveRequest(
            query_expansion=[scrub(q) for q in query_expansion],  # these may reach an embedding model
            entities=list(entities),
            pinned_memory_ids=[i for i in pinned if ID_RE.match(i)],
            max_memories=max_memories,
            max_new=max_new,
            token_budget=token_budget,
            exclude_memory_ids=[i for i in exclude if ID_RE.match(i)],
            pinned_min_score=self.config.context.pinned_min_score,
            session_id=session_id,
            step=step,
            request_phrases=request_phrases,
            request_carried=request_carried,
        )
        result, pks = retrieve(self.db, self.semantic, request, entity_names(list(entities)))
        if touch and pks:
            self.db.touch(pks, now_iso())
        return result

    def stats(self, *, tags: bool = False, agents: bool = False) -> StoreStats:
        counts = self.db.stats(now_iso())
        del counts["embeddings"]  # the vectors per model: the coverage of the configured model says more
        size = sum(  # lstat: a committed link must not report the size of what it points to
            st.st_size
            for st in (p.lstat() for p in self.store_path.parent.glob(self.store_path.name + "*"))
            if stat.S_ISREG(st.st_mode)
        )
        return StoreStats(
            **counts,
            embeddings=self.embedding_coverage(),
            store=str(self.store_path),
            size_bytes=size,
            tags=self.db.tag_frequencies() if tags else None,
            agents=self.db.agent_frequencies() if agents else None,
        )

    # ---------------------------------------------------------- import/export
    def export(self, dest: str | os.PathLike[str] | IO[str], *, remap: Sequence[str] = ()) -> int:
        """Write every memory as JSON Lines to a path ('-' for stdout) or an open text file. `remap`: "OLD=NEW"
        project paths rewritten in each memory's text and source."""
        from codememory.service.remap import Remapper, parse_remaps
        from codememory.service.transfer import export_memories

        return export_memories(self.db, dest, Remapper(parse_remaps(remap)))

    def import_(
        self,
        src: str | os.PathLike[str] | IO[str],
        *,
        skip_invalid: bool = False,
        remap: Sequence[str] = (),
        progress: ImportProgress | None = None,
        own: bool = False,
        entities: EntityTiming = "now",
    ) -> ImportReport:
        """Import JSON Lines. Idempotent: records whose id exists (or, without an id, whose exact text
        exists) are skipped. A file with invalid lines imports nothing unless skip_invalid. Every free-form
        field (text, tags, entered_by, source) is scrubbed as `add` does (memory_fields.py); a record keeps
        its id even when its text changes, and a record left with no text is an invalid line. `remap`: "OLD=NEW"
        project paths rewritten in each record's text and source before it is checked. A file of any size is
        streamed; `progress(phase, done, total)` hears of each batch read ("read") and embedded ("embed"). The
        memories are `import` ones (ranked on their content; core/provenance.py) unless `own` says the file is the
        user's own export. `entities`: "now" (the default) reads the entities of every memory still without them
        right after the import (this import's and any an interrupted earlier pass left); "auto" does so only for
        an import of up to one batch (5,000) and leaves a larger one to a serving daemon; "later" leaves them all.
        Memories left are marked for `fill_pending_entities` (the daemon runs it; until then entity filters and
        counts miss those memories, and `entities_of` reads theirs from the text)."""
        from codememory.service.remap import Remapper, parse_remaps
        from codememory.service.transfer import import_memories, read_pending_entities

        report = import_memories(
            self.db,
            self.semantic,
            src,
            skip_invalid=skip_invalid,
            remap=Remapper(parse_remaps(remap)),
            progress=progress,
            own=own,
            entities=entities,
        )
        if report.added and self.sharing.on:
            read_pending_entities(self.db, progress)  # the shared text form carries each memory's entities
            self.sharing.publish_all()
        return report

    def fill_pending_entities(
        self, limit: int | None = None, progress: Callable[[int], None] | None = None, *, workers: int = 1
    ) -> int:
        """Read the entities of up to `limit` (None: all) memories an import left without them, in `workers`
        processes; returns how many."""
        from codememory.service.entity_backfill import fill_pending_entities

        return fill_pending_entities(self.db, limit, progress, workers=workers)


def open_store(project: str | os.PathLike[str] | None = None) -> Store:
    """Open an existing project store (see Store.open)."""
    return Store.open(project)
