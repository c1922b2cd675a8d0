"""Numbered schema migrations. Each runs once, inside the opening write transaction, and is recorded
in `schema_migrations`; `PRAGMA user_version` mirrors the latest so opening a store costs one read."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from codememory.core.model import session_position
from codememory.core.provenance import local_by_from_fields


def _backfill_session_positions(conn: sqlite3.Connection) -> None:
    rows = conn.execute("SELECT pk, source FROM memories WHERE source IS NOT NULL").fetchall()
    updates = [(*session_position(source), pk) for pk, source in rows]
    conn.executemany("UPDATE memories SET session_key = ?, seq = ? WHERE pk = ?", [u for u in updates if u[0]])


# (number, name, SQL script, optional Python step run after the script in the same transaction)
MIGRATIONS: list[tuple[int, str, str, Callable[[sqlite3.Connection], None] | None]] = [
    (
        1,
        "memories, tags, full-text indexes",
        """
CREATE TABLE memories (
    pk               INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    text             TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 10000),
    text_hash        TEXT NOT NULL,
    category         TEXT NOT NULL DEFAULT 'note',
    importance       REAL NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    entered_by       TEXT,
    source           TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    expires_at       TEXT,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    archived         INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1))
);
CREATE INDEX memories_created ON memories(created_at);
CREATE INDEX memories_expires ON memories(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memories_entered_by ON memories(entered_by);
CREATE INDEX memories_hash ON memories(text_hash);

CREATE TABLE tags (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE
);
CREATE TABLE memory_tags (
    memory_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
    tag_id    INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    PRIMARY KEY (memory_pk, tag_id)
) WITHOUT ROWID;
CREATE INDEX memory_tags_tag ON memory_tags(tag_id, memory_pk);

-- Ranked keyword search (BM25) with stemming.
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, content='memories', content_rowid='pk', tokenize='porter unicode61 remove_diacritics 2'
);
-- Literal substring search (paths, identifiers, C++), case-insensitive.
CREATE VIRTUAL TABLE memories_trigram USING fts5(
    text, content='memories', content_rowid='pk', tokenize='trigram'
);
-- Unstemmed words: its vocabulary feeds typo correction (porter stems are not valid query words).
CREATE VIRTUAL TABLE memories_words USING fts5(
    text, content='memories', content_rowid='pk', tokenize='unicode61 remove_diacritics 2', detail='none'
);
CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_words, row);

-- Bumped by the triggers whenever indexed text changes: caches derived from the text (the typo
-- vocabulary) key on it, so access-stat writes do not invalidate them.
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO counters VALUES ('text_version', 0);

CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    UPDATE counters SET value = value + 1 WHERE name = 'text_version';
    INSERT INTO memories_fts(rowid, text) VALUES (new.pk, new.text);
    INSERT INTO memories_trigram(rowid, text) VALUES (new.pk, new.text);
    INSERT INTO memories_words(rowid, text) VALUES (new.pk, new.text);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    UPDATE counters SET value = value + 1 WHERE name = 'text_version';
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.pk, old.text);
    INSERT INTO memories_trigram(memories_trigram, rowid, text) VALUES ('delete', old.pk, old.text);
    INSERT INTO memories_words(memories_words, rowid, text) VALUES ('delete', old.pk, old.text);
END;
-- Only a change of text touches the indexes: access-stat updates on every search stay cheap.
CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN
    UPDATE counters SET value = value + 1 WHERE name = 'text_version';
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.pk, old.text);
    INSERT INTO memories_trigram(memories_trigram, rowid, text) VALUES ('delete', old.pk, old.text);
    INSERT INTO memories_words(memories_words, rowid, text) VALUES ('delete', old.pk, old.text);
    INSERT INTO memories_fts(rowid, text) VALUES (new.pk, new.text);
    INSERT INTO memories_trigram(rowid, text) VALUES (new.pk, new.text);
    INSERT INTO memories_words(rowid, text) VALUES (new.pk, new.text);
END;
""",
        None,
    ),
]

MIGRATIONS.append(
    (
        2,
        "embeddings, links, entities, supersession",
        """
ALTER TABLE memories ADD COLUMN superseded_by TEXT;

-- One vector per memory and model. The vector index files under cache/ are rebuilt from this table.
CREATE TABLE embeddings (
    memory_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
    model     TEXT NOT NULL,
    dim       INTEGER NOT NULL,
    text_hash TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (memory_pk, model)
) WITHOUT ROWID;
CREATE INDEX embeddings_model_seq ON embeddings(model, seq);
INSERT INTO counters VALUES ('embedding_seq', 0);

CREATE TABLE memory_links (
    memory_pk  INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
    linked_pk  INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
    link_type  TEXT NOT NULL
        CHECK (link_type IN ('corroborates', 'conflicts', 'supersedes', 'refines', 'contextualizes')),
    score      REAL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (memory_pk, linked_pk)
) WITHOUT ROWID;
CREATE INDEX memory_links_linked ON memory_links(linked_pk);

CREATE TABLE entities (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL
);
CREATE TABLE memory_entities (
    memory_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    PRIMARY KEY (memory_pk, entity_id)
) WITHOUT ROWID;
CREATE INDEX memory_entities_entity ON memory_entities(entity_id, memory_pk);
""",
        None,
    )
)
MIGRATIONS.append(
    (
        3,
        "session positions (neighbouring turns give each other context in ranking)",
        """
ALTER TABLE memories ADD COLUMN session_key TEXT;
ALTER TABLE memories ADD COLUMN seq INTEGER;
CREATE INDEX memories_session ON memories(session_key, seq) WHERE session_key IS NOT NULL;
""",
        _backfill_session_positions,
    )
)

MIGRATIONS.append(
    (
        4,
        "coding sessions: checkpoints, files touched, weighted session search",
        """
-- One row per coding session of one tool. The markdown file under .codememory/ is the source of
-- truth (`codememory sessions rebuild` recreates these rows from it); markdown_path is relative to
-- .codememory/. Timestamps are canonical UTC ISO text like the memories table.
CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    project       TEXT NOT NULL,
    tool          TEXT NOT NULL,
    slug          TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    ended_at      TEXT,
    trigger       TEXT,
    git_sha_start TEXT,
    git_sha_end   TEXT,
    status        TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'frozen', 'closed')),
    markdown_path TEXT NOT NULL,
    goal          TEXT
);
CREATE INDEX sessions_started ON sessions(started_at);
CREATE INDEX sessions_tool_slug ON sessions(tool, slug, status);

CREATE TABLE session_files (
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    file_path   TEXT NOT NULL,
    change_type TEXT NOT NULL CHECK (change_type IN ('created', 'modified', 'deleted')),
    PRIMARY KEY (session_id, file_path)
) WITHOUT ROWID;

-- The write buffer a session's markdown is rendered from: appended on each checkpoint, except
-- work_pending and diff_summary, which each checkpoint replaces.
CREATE TABLE session_chunks (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    chunk_type TEXT NOT NULL CHECK (chunk_type IN (
        'work_completed', 'work_pending', 'work_summary', 'decision', 'plan_file', 'reference', 'diff_summary'
    )),
    content    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX session_chunks_session ON session_chunks(session_id, id);

-- Rewritten for a session by the store on every checkpoint (and by rebuild); ranked with
-- bm25 weights goal 10, todos 5, file_paths 5, decisions 8, work_summary 3.
CREATE VIRTUAL TABLE sessions_fts USING fts5(
    session_id UNINDEXED, goal, todos, file_paths, decisions, work_summary,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
""",
        None,
    )
)

MIGRATIONS.append(
    (
        5,
        "capture: captured turns, per-source cursors, extraction log, LLM spend",
        """
-- One row per captured turn of any source ('opencode', 'claude', 'codex', ...). The primary key makes
-- a replayed turn a no-op; the daily-log anchor <!-- session:ID turn:ID --> repairs a crash between
-- the log append and this insert. seq is the 1-based turn number within the session.
CREATE TABLE captured_turns (
    source      TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    turn_id     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    started_at  TEXT NOT NULL,
    ended_at    TEXT,
    log_path    TEXT NOT NULL,
    summary     TEXT NOT NULL,
    captured_at TEXT NOT NULL,
    PRIMARY KEY (source, session_id, turn_id)
) WITHOUT ROWID;
CREATE INDEX captured_turns_seq ON captured_turns(source, session_id, seq);

-- Where reading stopped, per source and key (a session id, or a transcript file path). position is
-- opaque to the store: a turn id, a byte offset, a timestamp.
CREATE TABLE capture_cursors (
    source     TEXT NOT NULL,
    key        TEXT NOT NULL,
    position   TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (source, key)
) WITHOUT ROWID;

-- Each extraction run over a span of one session's turns [first_seq, last_seq]; a resumed session
-- extracts only turns after the last successful span.
CREATE TABLE extractions (
    id           INTEGER PRIMARY KEY,
    source       TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    first_seq    INTEGER NOT NULL,
    last_seq     INTEGER NOT NULL,
    method       TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('ok', 'empty', 'failed', 'over_budget')),
    memory_count INTEGER NOT NULL DEFAULT 0,
    detail       TEXT,
    started_at   TEXT NOT NULL,
    finished_at  TEXT NOT NULL
);
CREATE INDEX extractions_session ON extractions(source, session_id, last_seq);

-- Every model call's token spend, for the per-session and per-day budgets and `codememory stats`.
CREATE TABLE llm_spend (
    id                INTEGER PRIMARY KEY,
    at                TEXT NOT NULL,
    day               TEXT NOT NULL,
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    purpose           TEXT NOT NULL,
    session_id        TEXT,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX llm_spend_day ON llm_spend(day);
CREATE INDEX llm_spend_session ON llm_spend(session_id) WHERE session_id IS NOT NULL;
""",
        None,
    )
)

MIGRATIONS.append(
    (
        6,
        "live capture and visibility: the raw-event queue, the injection ledger",
        """
-- Raw events streamed by an assistant plugin (POST /api/raw-events), accepted durably before they are
-- processed. (source, event_id) is unique: a replayed batch, or an event also seen by the database
-- poller under the same id, is stored once. payload is scrubbed JSON. processed_at is set when the
-- flush worker has turned the event into captured turns; attempts/error record failed tries.
CREATE TABLE raw_events (
    id           INTEGER PRIMARY KEY,
    source       TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    kind         TEXT NOT NULL,
    at           TEXT NOT NULL,
    payload      TEXT NOT NULL,
    batch_id     TEXT,
    received_at  TEXT NOT NULL,
    processed_at TEXT,
    attempts     INTEGER NOT NULL DEFAULT 0,
    error        TEXT,
    UNIQUE (source, event_id)
);
CREATE INDEX raw_events_pending ON raw_events(source, session_id, id) WHERE processed_at IS NULL;

-- What proactive retrieval put in front of a model: one row per injection (a /retrieve call that
-- returned memories, or a cold-start block), for `codememory explain`. memories is JSON
-- [{id, why, tokens}]; query is the scrubbed query expansion.
CREATE TABLE injections (
    id         INTEGER PRIMARY KEY,
    at         TEXT NOT NULL,
    source     TEXT NOT NULL,
    session_id TEXT,
    kind       TEXT NOT NULL,
    query      TEXT NOT NULL DEFAULT '',
    memories   TEXT NOT NULL,
    tokens     INTEGER NOT NULL DEFAULT 0,
    degraded   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX injections_session ON injections(session_id, id);
""",
        None,
    )
)

MIGRATIONS.append(
    (
        7,
        "no triggers: the store keeps its full-text indexes itself",
        """
-- database.py indexes and unindexes memory text in the same transaction as the write. With no trigger
-- left, every connection runs with PRAGMA trusted_schema = OFF (FTS5 may not be written from a trigger
-- then), and any trigger found in a store is foreign: the store is refused (see schema.py).
DROP TRIGGER memories_ai;
DROP TRIGGER memories_ad;
DROP TRIGGER memories_au;
""",
        None,
    )
)

MIGRATIONS.append(
    (
        8,
        "staleness: the commit a memory was written at, the code it names that is gone, the checks run",
        """
-- HEAD when the memory was written (NULL outside a git repository, or for memories written before this).
ALTER TABLE memories ADD COLUMN git_commit TEXT;

-- Why a memory may be stale: a path it names was deleted or renamed, or a symbol it names is gone from the
-- code. One row per memory and subject; the check deletes a row once its subject exists again. Untrusted
-- like every row: subject and new_path are rendered through context_render, commit_sha shown only as hex.
CREATE TABLE memory_staleness (
    memory_pk  INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
    subject    TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('deleted', 'renamed', 'symbol_removed')),
    commit_sha TEXT,
    new_path   TEXT,
    marked_at  TEXT NOT NULL,
    PRIMARY KEY (memory_pk, subject)
) WITHOUT ROWID;

-- Each staleness check: when, at which HEAD, how many memories it looked at, and what it changed
-- (changes: JSON {marked: [{id, subject, kind}], cleared: [{id, subject}]}).
CREATE TABLE staleness_runs (
    id          INTEGER PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    head        TEXT,
    checked     INTEGER NOT NULL DEFAULT 0,
    marked      INTEGER NOT NULL DEFAULT 0,
    cleared     INTEGER NOT NULL DEFAULT 0,
    changes     TEXT NOT NULL DEFAULT '{}'
);
""",
        None,
    )
)

MIGRATIONS.append(
    (
        9,
        "team sharing: personal memories, the text form's bookkeeping",
        """
-- A personal memory never reaches the shared text form (.codememory/memories/); set by `store --personal`
-- or by the [share] personal_* settings when the memory is stored.
ALTER TABLE memories ADD COLUMN personal INTEGER NOT NULL DEFAULT 0 CHECK (personal IN (0, 1));

-- One row per memory file of the text form this store has written or applied: the sha256 of the file's
-- bytes and its stat then (an unchanged stat is not read again), and the sha256 of the memory's shared form
-- as the store held it then (a different one now: changed here since). status: 'ok', or 'skipped' for a
-- file that did not parse (looked at again on every open until it changes).
CREATE TABLE shared_files (
    memory_id   TEXT PRIMARY KEY,
    file_sha256 TEXT,
    form_sha256 TEXT,
    mtime_ns    INTEGER,
    size        INTEGER,
    status      TEXT NOT NULL DEFAULT 'ok'
) WITHOUT ROWID;

-- Small facts about the text form: the stat of its folders when they were last walked ('folders', JSON).
CREATE TABLE shared_state (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
""",
        None,
    )
)

MIGRATIONS.append(
    (
        10,
        "consolidation runs: what each squash, supersession, conflict, decay and entity merge changed",
        """
-- One row per consolidation run that wrote something or was asked to (a dry run is not recorded).
-- changes is JSON [{kind, ...}] (operations/consolidate.py writes it): enough to undo the run; summary is
-- JSON counts by kind. trigger: 'command' (codememory consolidate) or 'schedule' (the daemon).
CREATE TABLE consolidation_runs (
    id          INTEGER PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    trigger     TEXT NOT NULL CHECK (trigger IN ('command', 'schedule')),
    method      TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('applied', 'undone')),
    changes     TEXT NOT NULL,
    summary     TEXT NOT NULL,
    undone_at   TEXT
);
CREATE INDEX consolidation_runs_started ON consolidation_runs(started_at);
""",
        None,
    )
)


def _vectors_in_their_own_table(conn: sqlite3.Connection) -> None:
    """Move every vector into `embedding_vectors` as float16, keyed by its sequence number (a vector a consolidation
    copied shared its source's number: the copy gets a new one)."""
    conn.execute(
        "CREATE TABLE embeddings_moved ("
        "memory_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE, model TEXT NOT NULL, "
        "dim INTEGER NOT NULL, text_hash TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (memory_pk, model)"
        ") WITHOUT ROWID"
    )
    if conn.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is not None:
        import numpy as np  # only a store with vectors gets here, and numpy came with them

        counter = int(conn.execute("SELECT value FROM counters WHERE name = 'embedding_seq'").fetchone()[0])
        seen: set[int] = set()
        last: tuple[str, int, int] = ("", -1, -1)
        while True:  # in the (model, seq) index's order, so the new table is written in order
            rows = conn.execute(
                "SELECT model, seq, memory_pk, dim, text_hash, vector FROM embeddings WHERE (model, seq, memory_pk) > "
                "(?, ?, ?) ORDER BY model, seq, memory_pk LIMIT 5000",
                last,
            ).fetchall()
            if not rows:
                break
            last = rows[-1][:3]
            meta, vectors = [], []
            for model, seq, pk, dim, text_hash, blob in rows:
                if seq in seen or seq < 1:
                    counter += 1
                    seq = counter
                seen.add(seq)
                if isinstance(blob, bytes) and len(blob) == 4 * dim:
                    blob = np.frombuffer(blob, dtype="<f4").astype("<f2").tobytes()
                meta.append((pk, model, dim, text_hash, seq))
                vectors.append((seq, blob))
            conn.executemany("INSERT INTO embeddings_moved VALUES (?, ?, ?, ?, ?)", meta)
            conn.executemany("INSERT INTO embedding_vectors(seq, vector) VALUES (?, ?)", vectors)
        counter = max(counter, max(seen, default=0))
        conn.execute("UPDATE counters SET value = ? WHERE name = 'embedding_seq'", (counter,))
    conn.execute("DROP TABLE embeddings")
    conn.execute("ALTER TABLE embeddings_moved RENAME TO embeddings")
    for statement in split_sql(_EMBEDDINGS_AFTER_MOVE):
        conn.execute(statement)


_EMBEDDINGS_AFTER_MOVE = """
CREATE INDEX embeddings_model_seq ON embeddings(model, seq);
-- A vector leaves with its row: a forgotten memory (cascade), a memory embedded again (a new seq).
CREATE TRIGGER embeddings_ad AFTER DELETE ON embeddings BEGIN
    DELETE FROM embedding_vectors WHERE seq = old.seq;
END;
CREATE TRIGGER embeddings_au AFTER UPDATE OF seq ON embeddings BEGIN
    DELETE FROM embedding_vectors WHERE seq = old.seq;
END;
"""


def _backfill_provenance(conn: sqlite3.Connection) -> None:
    """Rows written before provenance was recorded were written on this machine, or applied from the text form that
    git brought: each gets `local` with how it was most likely written (from its own entered_by and source), and the
    ones the text form holds are sorted out once on the next open, from git's log (service/provenance_check.py)."""
    rows = conn.execute("SELECT pk, entered_by, source FROM memories").fetchall()
    conn.executemany(
        "UPDATE memories SET origin_by = ? WHERE pk = ?",
        [
            (local_by_from_fields(e if isinstance(e, str) else None, s if isinstance(s, str) else None), pk)
            for pk, e, s in rows
        ],
    )
    if conn.execute("SELECT 1 FROM shared_files LIMIT 1").fetchone():
        conn.execute("INSERT OR REPLACE INTO store_meta(name, value) VALUES ('shared_origins', 'unchecked')")


MIGRATIONS.append(
    (
        11,
        "vectors in their own table, float16, pages filled",
        """
-- Each vector keyed by its sequence number (the embeddings row's seq) in a table of its own: rows of one size,
-- appended in order, fill whole pages. Inside the WITHOUT ROWID embeddings table a 1,536-byte vector overflowed
-- into pages two-thirds empty (4.7 KB per vector). float16 halves it again: cosines move by about 1e-4, far
-- below what ranking or any threshold distinguishes (the default model's own weights are 4-bit).
CREATE TABLE embedding_vectors (
    seq    INTEGER PRIMARY KEY,
    vector BLOB NOT NULL
);
""",
        _vectors_in_their_own_table,
    )
)

MIGRATIONS.append(
    (
        12,
        "team sharing: why a memory file was refused",
        """
-- A file of the text form that did not parse has status 'invalid' and the reason here: it is not read again while
-- its size and mtime (or, when they change, its sha256) stay the same, and the reason is reported each time.
ALTER TABLE shared_files ADD COLUMN reason TEXT;
""",
        None,
    )
)

MIGRATIONS.append(
    (
        13,
        "usefulness: what each agent session was shown and what it did with it, and each memory's record",
        """
-- One row per memory shown to one agent session (an injection, a search result the agent read, a fetch): when it
-- was first and last shown, how often, the tokens it cost, the query it was first shown for (its words were the
-- agent's already, so they are no evidence of use), and what the session did with it next: used (signal: cited,
-- fetched or entity; evidence: what matched) or contradicted (the rule and the action); cues: the memory's
-- distinctive terms and rules as it was shown (JSON, capture/usage.py), read back for each turn. Filled by
-- operations/explain.py (shown) and capture/usage.py (what followed); bounded like the injection ledger.
CREATE TABLE memory_exposures (
    id              INTEGER PRIMARY KEY,
    memory_id       TEXT NOT NULL,
    source          TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    kind            TEXT NOT NULL,
    first_shown_at  TEXT NOT NULL,
    last_shown_at   TEXT NOT NULL,
    shows           INTEGER NOT NULL DEFAULT 1,
    tokens          INTEGER NOT NULL DEFAULT 0,
    context         TEXT NOT NULL DEFAULT '',
    used_at         TEXT,
    used_by         TEXT,
    evidence        TEXT,
    contradicted_at TEXT,
    contradiction   TEXT,
    cues            TEXT,
    UNIQUE (session_id, memory_id)
);
CREATE INDEX memory_exposures_memory ON memory_exposures(memory_id);
CREATE INDEX memory_exposures_shown ON memory_exposures(first_shown_at);

-- Each memory's usefulness: the sessions it was shown in, used in and contradicted in, as counts that halve every
-- [usefulness] half_life_days (as of decayed_at), with the plain totals and the last times. Ranking and the HUD
-- read it (retrieval/usefulness.py); keyed by memory id so it survives a repair or a re-import.
CREATE TABLE memory_usefulness (
    memory_id            TEXT PRIMARY KEY,
    shown                REAL NOT NULL DEFAULT 0,
    used                 REAL NOT NULL DEFAULT 0,
    contradicted         REAL NOT NULL DEFAULT 0,
    decayed_at           TEXT NOT NULL,
    shown_total          INTEGER NOT NULL DEFAULT 0,
    used_total           INTEGER NOT NULL DEFAULT 0,
    contradicted_total   INTEGER NOT NULL DEFAULT 0,
    last_shown_at        TEXT,
    last_used_at         TEXT,
    last_contradicted_at TEXT
) WITHOUT ROWID;
""",
        None,
    )
)


MIGRATIONS.append(
    (
        14,
        "provenance: where each memory came from, the user's review of untrusted ones, the store's own origin",
        """
-- Where the memory came from (core/provenance.py): 'local' (written here), 'git' (applied from the text form git
-- brought), 'committed' (found in a memory.db that arrived with the repository), 'import'. Set by the code path
-- that stored it, never from the memory's own fields. origin_by: who or how within the origin (user, agent:<name>,
-- session:<speaker>; a git author; an import file's name); origin_at: when it arrived (not for local ones).
ALTER TABLE memories ADD COLUMN origin TEXT NOT NULL DEFAULT 'local'
    CHECK (origin IN ('local', 'git', 'committed', 'import'));
ALTER TABLE memories ADD COLUMN origin_by TEXT;
ALTER TABLE memories ADD COLUMN origin_at TEXT;
-- An untrusted memory whose text reads like instructions waits for the user's answer ('pending'), then is
-- 'accepted' or 'rejected'; NULL: no review needed. Only accepted or unreviewed-and-plain ones enter the blocks
-- put in an agent's context unasked.
ALTER TABLE memories ADD COLUMN review TEXT CHECK (review IN ('pending', 'accepted', 'rejected'));
CREATE INDEX memories_review ON memories(review) WHERE review IS NOT NULL;

-- Facts about the store file itself: 'home' (JSON {file, machines}: the file it is, device and inode, and the
-- machines that opened it since; another file means it arrived from elsewhere, e.g. with a pull), 'shared_origins'
-- (rows from before provenance that the text form holds, still to be sorted out from git's log).
CREATE TABLE store_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
""",
        _backfill_provenance,
    )
)

MIGRATIONS.append(
    (
        15,
        "entities still to extract: memories an import stored before their entities were read",
        """
-- A large import stores and indexes the text first and leaves each memory's entities to a pass after it (the
-- daemon's, or the next reader of entities): one row per memory whose entities are not known yet, written in the
-- same transaction as the memory, deleted in the same transaction as its entities.
CREATE TABLE entities_pending (memory_pk INTEGER PRIMARY KEY REFERENCES memories(pk) ON DELETE CASCADE);
""",
        None,
    )
)

MIGRATIONS.append(
    (
        16,
        "what a session's tool calls held, per captured turn",
        """
-- Use detection's memory of a session: per captured turn, what its tool calls held (their arguments as scrubbed,
-- lower-cased, bounded text; the words their outputs showed as keyed digests only). A memory's term the session
-- already held before the memory was shown to it is no evidence that the memory was used. The newest rows are kept
-- (store/session_seen.py).
CREATE TABLE session_seen (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    ended_at   TEXT NOT NULL,
    said       TEXT NOT NULL
);
CREATE UNIQUE INDEX session_seen_turn ON session_seen(session_id, seq);
""",
        None,
    )
)

LATEST = MIGRATIONS[-1][0]

_BOOKKEEPING = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)


def apply(conn: sqlite3.Connection, from_version: int, to_version: int, now: str) -> None:
    """Run migrations from_version+1 .. to_version on `conn`, inside the caller's transaction. The one
    way a schema is built: opening a store uses it, and so does schema.py to know what a store of each
    version must contain."""
    if from_version == 0 < to_version:
        conn.execute(_BOOKKEEPING)
    for number, name, sql, step in MIGRATIONS:
        if number <= from_version or number > to_version:
            continue
        for statement in split_sql(sql):
            conn.execute(statement)
        if step is not None:
            step(conn)
        conn.execute("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)", (number, name, now))
        conn.execute(f"PRAGMA user_version = {number}")


def split_sql(script: str) -> list[str]:
    """Split a migration into statements; sqlite3.complete_statement keeps trigger bodies whole."""
    statements: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--") and not buf.strip():
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            statements.append(buf.strip())
            buf = ""
    if buf.strip():
        statements.append(buf.strip())
    return statements
