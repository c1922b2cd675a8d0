"""Which of a few memories a keyword expression matches (`fts_subset`, asked once per query word by every search):
answered from those memories' own texts, it must say exactly what the store's keyword index says."""

from __future__ import annotations

from pathlib import Path

from codememory import Store

TEXTS = [
    "Retries with exponential backoff for the billing webhook",
    "The retry loop in src/billing/worker.py swallowed ECONNRESET",
    "Use pgbouncer in transaction mode; prepared statements break otherwise",
    "Café menus are rendered server-side (naïve caching was wrong)",
    "We migrated the connection pool from psycopg2 to asyncpg",
    "Connection pooling: never share a pool across forked workers",
    "Feature flags live in LaunchDarkly, not in environment variables",
    "flag names are kebab-case; the feature-flag client caches for 30 s",
]
EXPRESSIONS = [
    '"retry"',  # stemmed: retries, retry
    '"billing"',
    '"connection" AND "pool"',
    '"connection pool"',
    '"pool" NOT "forked"',
    '"cafe"',  # diacritics folded as the index folds them
    '"feature" OR "flags"',
    "flag*",
    '"absent"',
]


def _from_index(store: Store, match: str, pks: list[int]) -> set[int]:
    rows = store.db.conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (match,))
    return {r[0] for r in rows} & set(pks)


def test_a_few_memories_match_exactly_as_the_index_says(tmp_path: Path) -> None:
    store, _ = Store.init(tmp_path)
    for text in TEXTS + [f"filler note {i} about nothing in particular" for i in range(40)]:
        store.add(text)
    pks = sorted(pk for (pk,) in store.db.conn.execute("SELECT pk FROM memories"))
    for chosen in (pks[:8], pks[::3], pks[1:6], pks[:8]):  # a subset of what is loaded, then other memories
        for match in EXPRESSIONS:
            assert store.db.fts_subset(match, chosen) == _from_index(store, match, chosen), (match, chosen)
    store.close()


def test_a_changed_text_is_seen_by_the_next_question(tmp_path: Path) -> None:
    store, _ = Store.init(tmp_path)
    first = store.add("The cache warms on start").memory
    store.add("Nothing to see")
    pks = sorted(pk for (pk,) in store.db.conn.execute("SELECT pk FROM memories"))
    assert len(store.db.fts_subset('"cache"', pks)) == 1
    store.edit(first.id, text="The queue drains on shutdown")
    assert store.db.fts_subset('"cache"', pks) == set()
    assert len(store.db.fts_subset('"queue"', pks)) == 1
    store.close()


def test_rows_loaded_inside_a_rolled_back_transaction_are_not_trusted(tmp_path: Path) -> None:
    store, _ = Store.init(tmp_path)
    for text in ("The cache warms on start", "The queue drains on shutdown"):
        store.add(text)
    pks = sorted(pk for (pk,) in store.db.conn.execute("SELECT pk FROM memories"))
    store.db.conn.execute("BEGIN")
    assert len(store.db.fts_subset('"cache"', pks)) == 1
    store.db.conn.execute("ROLLBACK")  # the temp index's rows are gone again
    assert len(store.db.fts_subset('"cache"', pks)) == 1
    store.close()


def test_several_expressions_at_once_say_what_each_says_alone(tmp_path: Path) -> None:
    store, _ = Store.init(tmp_path)
    for text in TEXTS:
        store.add(text)
    pks = sorted(pk for (pk,) in store.db.conn.execute("SELECT pk FROM memories"))[:6]
    together = store.db.fts_subsets(EXPRESSIONS, pks)
    assert together == [store.db.fts_subset(m, pks) for m in EXPRESSIONS]
    assert together == [_from_index(store, m, pks) for m in EXPRESSIONS]
    refused = store.db.fts_subsets(['"retry"', "AND AND"], pks)  # FTS5 refuses the second: each is asked alone
    assert refused == [_from_index(store, '"retry"', pks), set()]
    store.close()
