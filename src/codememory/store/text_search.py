"""Keyword search over the memories' full-text indexes: ranked (FTS5 bm25), literal substrings (trigram),
and the vocabulary of stored words that typo correction draws from."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence

from codememory.core.lazy_pattern import lazy_pattern
from codememory.store.connection import StoreConnection, chunks
from codememory.store.filters import Filters
from codememory.store.keyword_prefetch import BM25_PASS, KeywordPrefetch
from codememory.text.query import words

SUBSTRING_SCAN = 5_000
VOCABULARY_MAX_AGE = 600.0  # seconds before a changed store's vocabulary is read whole again
_VOCABULARY_WORD = lazy_pattern(r"(?=.*[a-z])[^\x00-\x20\x7f]{3,100}")
_SUBSET_SCAN = 2_000
# A BM25 pass over a smaller index takes about a millisecond: not worth a thread and a second connection.
_PREFETCH_FROM = 5_000
_SUBSET_BY_TEXT = 500  # at most this many memories: their texts indexed apart (fts_subset)
_TOKENIZE_RE = lazy_pattern(r"tokenize\s*=\s*'([^']*)'")


class TextSearch(StoreConnection):
    """FTS5 queries. A query the compiler let through but FTS5 refuses finds nothing, never fails."""

    _vocab_key: int | None = None  # the text_version the cached vocabulary was read at
    _vocab: list[str]
    _vocab_set: frozenset[str] = frozenset()
    _vocab_top = 0  # the newest memory whose words it holds
    _vocab_read_at = 0.0  # when it was last read whole from the index (time.monotonic)
    _df_key: int | None = None  # the text_version the cached document frequencies were counted at
    _df: dict[str, int]
    _subset_key: tuple[int, frozenset[int]] | None = None  # (text_version, memories) in temp.subset_fts
    _subset_lock = threading.Lock()
    _prefetch: KeywordPrefetch | None = None  # BM25 passes started ahead (prefetch_fts)

    def fts_search(self, match: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
        """BM25 candidates (smaller score is better, as FTS5 reports it). The index ranks on its own and only its
        best rows are checked against the filters (joining every match to its memory first cost 2-4x at 100k
        memories); when the filters drop too many of them, the index is asked for more."""
        inner = _bm25_inner(limit)
        ranked = self._prefetch.take(match, inner, self.text_version()) if self._prefetch is not None else None
        try:
            while True:
                if ranked is None:
                    ranked = self.conn.execute(BM25_PASS, (match, inner)).fetchall()
                rows: list[tuple[int, float]] = []
                checked = 0
                while len(rows) < limit and checked < len(ranked):  # most pass: check a few more than needed
                    batch = ranked[checked : checked + limit - len(rows) + 10]
                    checked += len(batch)
                    passing = self.passing([pk for pk, _ in batch], filters)
                    rows += [(pk, score) for pk, score in batch if pk in passing]
                if len(rows) >= limit or len(ranked) < inner:
                    return rows[:limit]
                inner *= 4
                ranked = None
        except sqlite3.OperationalError as exc:
            if _is_query_error(exc):
                return []  # the query compiler should prevent this; an odd query finds nothing, never crashes
            raise

    def prefetch_fts(self, match: str | None, limit: int) -> None:
        """Start the BM25 pass of `fts_search(match, _, limit)` in the background (keyword_prefetch.py), to be
        picked up by that call; for a caller about to do something else first (embed the query). Only for an
        index of _PREFETCH_FROM memories or more."""
        if not match or self.conn.in_transaction or self.document_counts(())[0] < _PREFETCH_FROM:
            return
        if self._prefetch is None:
            self._prefetch = KeywordPrefetch(self.path)
        self._prefetch.start(match, _bm25_inner(limit), self.text_version())

    def close(self) -> None:
        if self._prefetch is not None:
            self._prefetch.close()
        super().close()

    def fts_subset(self, match: str, pks: Sequence[int]) -> set[int]:
        """Which of these memories the keyword expression matches. A few hundred of them are answered from their
        own texts, indexed apart (`_subsets_by_text`); more, by one pass over the expression's matches within the
        keys' range, and when that range holds too many matches (a common word), by probing the keys."""
        wanted = set(pks)
        if not wanted:
            return set()
        try:
            if len(wanted) <= _SUBSET_BY_TEXT:
                return self._subsets_by_text([match], frozenset(wanted))[0]
            rows = self.conn.execute(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT ?",
                (match, min(wanted), max(wanted), _SUBSET_SCAN),
            ).fetchall()
            if len(rows) < _SUBSET_SCAN:
                return {r[0] for r in rows if r[0] in wanted}
            out: set[int] = set()
            for chunk in chunks(sorted(wanted)):
                out.update(
                    r[0]
                    for r in self.conn.execute(
                        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? "
                        f"AND rowid IN ({','.join('?' * len(chunk))})",
                        (match, *chunk),
                    )
                )
            return out
        except sqlite3.OperationalError as exc:
            if not _is_query_error(exc):
                raise
        return set()

    def fts_subsets(self, matches: Sequence[str], pks: Sequence[int]) -> list[set[int]]:
        """`fts_subset` of each expression over the same memories (one statement for all of them when they are few)."""
        wanted = frozenset(pks)
        if not wanted or len(wanted) > _SUBSET_BY_TEXT or not 2 <= len(matches) <= 64:  # 64: far from SQLite's 500
            return [self.fts_subset(m, list(wanted)) for m in matches]
        try:
            return self._subsets_by_text(matches, wanted)
        except sqlite3.OperationalError as exc:
            if not _is_query_error(exc):
                raise
        return [self.fts_subset(m, list(wanted)) for m in matches]  # one expression FTS5 refuses: each alone

    def _subsets_by_text(self, matches: Sequence[str], wanted: frozenset[int]) -> list[set[int]]:
        """Each expression matched against these memories' texts in a small index of its own (a TEMP table with the
        keyword index's tokenizer, so a word matches there exactly as it does in the index). Against the store's
        index, every word's whole list of documents is read or sought for a few keys: ~10 ms for a common word at
        100k memories, several words per search. The texts stay indexed while the same memories are asked about
        or some of them (one search asks once per query word, then about the page it shows) and the store's text is
        unchanged."""
        version = self.text_version()
        with self._subset_lock:  # one temp index per connection; a daemon's threads share the connection
            loaded = self._subset_key
            if loaded is None or loaded[0] != version or not wanted <= loaded[1]:
                with self.scratch_writes():  # not a write to the store: what is kept while it is unchanged stays
                    self._load_subset(loaded is None, wanted)
                if not self.conn.in_transaction:  # a rollback would take the rows back and leave the key
                    self._subset_key = (version, wanted)
            union = " UNION ALL ".join(
                f"SELECT {i}, rowid FROM temp.subset_fts WHERE subset_fts MATCH ?" for i in range(len(matches))
            )
            out: list[set[int]] = [set() for _ in matches]
            for i, pk in self.conn.execute(union, list(matches)):
                if pk in wanted:
                    out[i].add(pk)
            return out

    def _load_subset(self, first: bool, wanted: frozenset[int]) -> None:
        """Index these memories' texts apart (in temp.subset_fts, emptied first)."""
        if first:  # first use on this connection (or a load that failed half-way)
            # contentless: only rowids are asked for, and 'delete-all' empties it at once, where a DELETE
            # took FTS5 six statements a row (most of a search's statements at 10k memories)
            tokenize = self._fts_tokenize().replace("'", "''")
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.subset_fts USING fts5(text, content='', "
                f"columnsize=0, tokenize='{tokenize}')"
            )
        self._subset_key = None
        self.conn.execute("INSERT INTO temp.subset_fts(subset_fts) VALUES ('delete-all')")
        for chunk in chunks(sorted(wanted)):
            self.conn.execute(
                "INSERT INTO temp.subset_fts(rowid, text) SELECT pk, text FROM memories "
                f"WHERE pk IN ({','.join('?' * len(chunk))})",
                chunk,
            )

    def _fts_tokenize(self) -> str:
        """The keyword index's tokenizer, as its schema declares it."""
        row = self.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_fts'").fetchone()
        found = _TOKENIZE_RE.search(row[0] if row else "")
        return found.group(1) if found else "porter unicode61 remove_diacritics 2"

    def text_version(self) -> int:
        return int(self.conn.execute("SELECT value FROM counters WHERE name = 'text_version'").fetchone()[0])

    def document_counts(self, words: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(memories in the keyword index, how many of them hold each word as the index matches it: stemmed), the
        statistics of FTS5's own BM25 weights; counts are cached until the text of the store changes."""
        key = self.text_version()
        if key != self._df_key:
            self._df, self._df_key = {}, key
        total = self._df.get("\x00total")
        if total is None:
            total = int(self.conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0])
            self._df["\x00total"] = total
        out: dict[str, int] = {}
        for word in words:
            count = self._df.get(word)
            if count is None:
                try:
                    count = int(
                        self.conn.execute(
                            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                            ('"' + word.replace('"', '""') + '"',),
                        ).fetchone()[0]
                    )
                except sqlite3.OperationalError as exc:
                    if not _is_query_error(exc):
                        raise
                    count = 0
                if len(self._df) > 4096:
                    self._df = {"\x00total": total}
                self._df[word] = count
            out[word] = count
        return total, out

    def substring_search(self, match: str, filters: Filters, limit: int) -> list[int]:
        """Memories holding a literal substring, the most important first among the first SUBSTRING_SCAN the index
        yields (a common substring matches a large share of a big store; ordering all of them cost time that grew
        with the store)."""
        where, params = filters.where()
        try:
            return [
                r[0]
                for r in self.conn.execute(
                    "SELECT m.pk FROM (SELECT rowid FROM memories_trigram WHERE memories_trigram MATCH ? LIMIT ?) t "
                    f"JOIN memories m ON m.pk = t.rowid WHERE {where} ORDER BY m.importance DESC LIMIT ?",
                    (match, SUBSTRING_SCAN, *params, limit),
                )
            ]
        except sqlite3.OperationalError as exc:
            if _is_query_error(exc):
                return []
            raise

    def vocabulary(self) -> list[str]:
        """Distinct unstemmed words of all memories (for typo correction). Read whole from the index once (its
        cost grows with the store: about a second at 100k memories on a busy machine), then kept up to date with
        the words of the memories added since; words of forgotten or edited memories may linger until the next
        whole read (VOCABULARY_MAX_AGE later): a correction to such a word finds nothing, it misleads no one."""
        key = self.text_version()
        if key == self._vocab_key:
            return self._vocab
        if self._vocab_key is None or time.monotonic() - self._vocab_read_at > VOCABULARY_MAX_AGE:
            top = self.conn.execute("SELECT COALESCE(MAX(pk), 0) FROM memories").fetchone()[0]
            self._vocab = [
                r[0]
                for r in self.conn.execute(
                    "SELECT term FROM memories_vocab WHERE length(term) BETWEEN 3 AND 100 AND term GLOB '*[a-z]*' "
                    "AND term NOT GLOB ?",  # a tampered index could hold any "word": never one with a line break
                    ("*[\x01-\x20\x7f]*",),
                )
            ]
            self._vocab_set = frozenset(self._vocab)
            self._vocab_read_at = time.monotonic()
        else:
            rows = self.conn.execute(
                "SELECT pk, text FROM memories WHERE pk > ? ORDER BY pk", (self._vocab_top,)
            ).fetchall()
            top = rows[-1][0] if rows else self._vocab_top
            new = {w for _, text in rows if isinstance(text, str) for w in words(text) if _VOCABULARY_WORD.fullmatch(w)}
            new -= self._vocab_set
            if new:
                self._vocab = self._vocab + sorted(new)
                self._vocab_set = self._vocab_set | new
        self._vocab_top = int(top)
        self._vocab_key = key
        return self._vocab

    def known_words(self, candidates: Sequence[str]) -> set[str]:
        """Which of these words some memory holds: from the cached vocabulary while it is current, else looked up
        in the index one by one (a fresh process need not read the whole vocabulary to know that)."""
        wanted = set(candidates)
        if not wanted:
            return set()
        key = int(self.conn.execute("SELECT value FROM counters WHERE name = 'text_version'").fetchone()[0])
        if key == self._vocab_key:
            return wanted & self._vocab_set
        marks = ",".join("?" * len(wanted))
        return {
            r[0] for r in self.conn.execute(f"SELECT term FROM memories_vocab WHERE term IN ({marks})", list(wanted))
        }


def _bm25_inner(limit: int) -> int:
    """How many of the index's best rows a BM25 pass reads for `limit` results: most pass the filters."""
    return 2 * limit + 50


def _is_query_error(exc: sqlite3.OperationalError) -> bool:
    return "fts5: syntax error" in str(exc) or "unterminated string" in str(exc)
