"""The query's content words as this store sees them: how many memories hold each, which ones no memory holds, and
for those the store's word they are likely a typo ("flgas": "flags") or another form ("formatter": "formatting",
which the keyword index stems apart) of, so that word coverage and the share of the query no memory knows
(retrieval/evidence.py) are not thrown off by a slip of the keyboard or a suffix."""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field

from codememory.retrieval.evidence import coverage_weights, word_weights
from codememory.store.database import Database
from codememory.text.privacy import REDACTION_RE, without_redactions
from codememory.text.query import ParsedQuery, parse_query, words

# A query word naming a kind of thing the entity vocabulary types (data/tech_vocabulary.txt): "which database do
# the tests use?" is answered by the memory that names Postgres, though "database" is in no memory. Such a word
# counts as held by every memory naming an entity of that type. ("tool" and "service" are left out: they are
# everyday words for things the vocabulary does not type.)
TYPE_WORDS = {
    **dict.fromkeys(("database", "databases", "db", "dbs"), "database"),
    **dict.fromkeys(("framework", "frameworks"), "framework"),
    **dict.fromkeys(("library", "libraries", "lib", "libs"), "library"),
    **dict.fromkeys(("language", "languages"), "language"),
    **dict.fromkeys(("protocol", "protocols"), "protocol"),
}
VARIANT_CREDIT = 0.85  # how much a store word sharing the unknown word's stem counts for it
_MIN_STEM = 5  # shorter unknown words are left alone: one edit makes another word of them
_MIN_VARIANT = 8


@dataclass
class QueryWords:
    content: list[str]  # the query's content words (all its words when it has only stopwords)
    total: int  # memories in the keyword index
    counts: dict[str, int]  # memories holding each content word and each correction
    corrections: dict[str, tuple[str, float]] = field(default_factory=dict)  # unknown word -> (store word, ratio)
    _weights: dict[str, float] | None = field(default=None, init=False, repr=False, compare=False)

    def fts_weights(self) -> dict[str, float]:
        """The content words' weights as FTS5's bm25() sees them (for keyword evidence)."""
        return word_weights(self.total, {w: self.counts.get(w, 0) for w in self.content})

    def weights(self) -> dict[str, float]:
        """Each content word's weight (evidence.coverage_weights); a typo weighs as the word it is a typo of.
        Computed once: coverage asks for them for every candidate memory and every phrase."""
        if self._weights is None:
            counts = {
                w: self.counts.get(self.corrections[w][0] if w in self.corrections else w, 0) for w in self.content
            }
            self._weights = coverage_weights(self.total, counts)
        return self._weights

    def unknown_share(self) -> float:
        """The share of the query's word weight carried by words no memory holds (typos of known words aside)."""
        weights = self.weights()
        total = sum(weights.values())
        unknown = sum(v for w, v in weights.items() if w not in self.corrections and not self.counts.get(w, 0))
        return unknown / total if total > 0 else 0.0

    def coverage(self, held: Iterable[str]) -> float:
        """The share of the query's word weight a memory holding the words `held` (content words or corrections)
        covers; a correction counts as much as it resembles the word typed."""
        weights = self.weights()
        total = sum(weights.values())
        if total <= 0:
            return 0.0
        found = set(held)
        covered = 0.0
        for w, v in weights.items():
            if w in found:
                covered += v
            elif w in self.corrections and self.corrections[w][0] in found:
                covered += v * self.corrections[w][1]
        return covered / total

    def searched(self) -> list[str]:
        """What to look up in memories: the content words and the corrections."""
        return list(dict.fromkeys([*self.content, *(c for c, _ in self.corrections.values())]))


_CACHE: weakref.WeakKeyDictionary[Database, dict[tuple[int, str], QueryWords]] = weakref.WeakKeyDictionary()
_CACHED = 32  # queries per store: one search asks for its query's words more than once (ranking, decision)


def query_words(db: Database, parsed: ParsedQuery) -> QueryWords:
    """The query's words as this store sees them, remembered until the store's text changes."""
    key = (db.text_version(), parsed.raw)
    per_store = _CACHE.setdefault(db, {})
    found = per_store.get(key)
    if found is None:
        if len(per_store) >= _CACHED:
            per_store.clear()
        found = per_store[key] = _query_words(db, parsed)
    return found


def _query_words(db: Database, parsed: ParsedQuery) -> QueryWords:
    if REDACTION_RE.search(parsed.raw):  # a secret said in a prompt tells nothing about what is relevant
        parsed = parse_query(without_redactions(parsed.raw))
    content = parsed.content_words() or list(dict.fromkeys(w for t in parsed.terms for w in words(t.text)))
    total, counts = db.document_counts(content)
    for w in content:
        if w in TYPE_WORDS:  # held by the memories naming such a thing, and by those holding the word itself
            counts[w] = max(counts.get(w, 0), db.count_with_entity_type(TYPE_WORDS[w]))
    corrections: dict[str, tuple[str, float]] = {}
    unknown = [w for w in content if not counts.get(w) and len(w) >= _MIN_STEM and w.isalpha()]
    if unknown:
        from rapidfuzz import fuzz, process  # imported on use: most queries have no unknown word
        from rapidfuzz.distance import DamerauLevenshtein

        vocab = db.vocabulary()
        for w in unknown:
            edits = 1 if len(w) <= 8 else 2  # a slip of the keyboard, not another word ("rotate" is not "rate")
            found = process.extractOne(w, vocab, scorer=DamerauLevenshtein.distance, score_cutoff=edits)
            if found is not None and found[0] != w:
                corrections[w] = (found[0], fuzz.ratio(w, found[0]) / 100)
            elif (variant := _variant(w, vocab)) is not None:
                corrections[w] = (variant, VARIANT_CREDIT)
        if corrections:
            _, more = db.document_counts([c for c, _ in corrections.values()])
            counts = {**counts, **more}
    return QueryWords(content, total, dict(counts), corrections)


def _variant(word: str, vocab: list[str]) -> str | None:
    """The store word closest in length sharing a long word's stem (its first len - 3 letters): "formatter" and
    "formatting", "migrating" and "migration"; never for short words ("tableau" is not "tables")."""
    if len(word) < _MIN_VARIANT:
        return None
    stem = word[: len(word) - 3]
    found = [v for v in vocab if v.startswith(stem) and v != word]
    return min(found, key=lambda v: (abs(len(v) - len(word)), v)) if found else None


def held_words(db: Database, searched: Iterable[str], pks: list[int]) -> dict[int, set[str]]:
    """Which of these words (`QueryWords.searched()`: content words and corrections) each of these memories holds,
    as the keyword index matches them (stemmed); a word naming a kind of thing (`TYPE_WORDS`) is held by the
    memories naming an entity of that type."""
    found: dict[int, set[str]] = {}
    if not pks:
        return found
    unique = list(dict.fromkeys(searched))
    for word, holding in zip(
        unique, db.fts_subsets(['"' + w.replace('"', '""') + '"' for w in unique], pks), strict=True
    ):
        for pk in holding:
            found.setdefault(pk, set()).add(word)
        if word in TYPE_WORDS:
            for pk in db.with_entity_type(TYPE_WORDS[word], pks):
                found.setdefault(pk, set()).add(word)
    return found
