"""Keyword ranking: BM25 over the FTS5 index nudged by importance and recency, the any-word ("partial") pass of
a plain-words query that finds too few, and the typo-tolerant fuzzy pass (literal substrings through the trigram
index, corrections from the store's vocabulary with rapidfuzz). See `search` for how the passes combine."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from codememory.retrieval import nudge
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.store.memories import RankRow
from codememory.text.query import STOPWORDS, Node, ParsedQuery, Term, all_terms, compile_node, fold, words

TAG_NUDGE = 0.2  # keyword-only any-word pass: a memory tagged with a query word (see _tag_nudged)
CANDIDATE_SLACK = 25
_FUZZY_CANDIDATES = 200
_CORRECTIONS_PER_WORD = 8
# The most trigrams the literal-substring pass asks the trigram index for, over all the query's terms: FTS5 holds the
# positions of every trigram of a needle while it matches, so a 10,000-character run of one letter against a memory
# holding a long run took 241 MB (100,000: 2.2 GB). A longer needle is looked up by its first characters; whether the
# memory holds all of it is then checked on its text (`_term_similarities`).
SUBSTRING_TRIGRAMS = 64

Ranked = list[tuple[float, int, str, dict[str, Any]]]  # (score, pk, match, explain), best first


def nudges(row: RankRow, now: datetime) -> tuple[float, float]:
    return nudge.nudges(row.importance, row.created_at, now)


def demoted(score: float, row: RankRow, factor: float) -> float:
    return nudge.demote(score, row.stale, factor)


def stale_explain(explain: dict[str, Any], row: RankRow, factor: float) -> dict[str, Any]:
    if row.stale and factor < 1.0:
        explain["stale_factor"] = factor
    return explain


def keyword_ranking(
    db: Database,
    parsed: ParsedQuery,
    filters: Filters,
    want: int,
    fuzzy: bool | None,
    threshold: float,
    now: datetime,
) -> tuple[Ranked, bool, bool]:
    """Keyword-only ranking. A plain-words query of several words that finds fewer than `want` memories
    with all its words ("exact") goes on with its content words ORed: memories holding some of them
    ("partial", by BM25), then, if still short, the fuzzy pass over those words ("fuzzy"). Each pass
    ranks after the one before; explicit syntax keeps its strict meaning (`lexical_ranking`)."""
    relaxed = parsed.relaxed()
    if relaxed is None:
        return lexical_ranking(db, parsed, filters, want, fuzzy, threshold, now)
    ranked, more, _ = lexical_ranking(db, parsed, filters, want, False, threshold, now)
    if len(ranked) >= want and fuzzy is not True:
        return ranked, more, False
    seen = {pk for _, pk, _, _ in ranked}
    loose, loose_more, fuzzy_used = lexical_ranking(db, relaxed, filters, want, fuzzy, threshold, now, relaxed.fts)
    partial = _tag_nudged(db, relaxed, [entry for entry in loose if entry[2] == "partial" and entry[1] not in seen])
    ranked += partial + [entry for entry in loose if entry[2] != "partial" and entry[1] not in seen]
    return ranked, more or loose_more, fuzzy_used


def _tag_nudged(db: Database, parsed: ParsedQuery, ranked: Ranked) -> Ranked:
    """A memory tagged with one of the words gains TAG_NUDGE of its score: a tag is a curated topic, so
    among memories that hold some of the words it marks the one about them (LoCoMo-dev recall@5
    0.542 -> 0.550, coding set 0.770 -> 0.785; benchmarks/README.md)."""
    query_words = {t.text for t in parsed.terms}
    tagged = {pk for pk, tags in db.tags_of([pk for _, pk, _, _ in ranked]).items() if query_words & set(tags)}
    if not tagged:
        return ranked
    out: Ranked = []
    for score, pk, match, explain in ranked:
        if pk in tagged:
            score, explain = score * (1 + TAG_NUDGE), {**explain, "tag_nudge": TAG_NUDGE}
        out.append((score, pk, match, explain))
    return sorted(out, key=lambda r: -r[0])


def lexical_ranking(
    db: Database,
    parsed: ParsedQuery,
    filters: Filters,
    want: int,
    fuzzy: bool | None,
    threshold: float,
    now: datetime,
    match: str | None = None,
) -> tuple[Ranked, bool, bool]:
    """Keyword ranking of `match` (default: the query's own expression, matched strictly)."""
    fetch = min(want + CANDIDATE_SLACK, 10_000)
    label = "partial" if match else "exact"
    match = match or parsed.fts
    exact = db.fts_search(match, filters, fetch) if match else []
    rows = db.rank_rows([pk for pk, _ in exact])
    ranked: Ranked = []
    for pk, bm25 in exact:
        imp, rec = nudges(rows[pk], now)
        relevance = -bm25
        explain = {"bm25": round(relevance, 6), "importance_nudge": round(imp, 4), "recency_nudge": round(rec, 4)}
        score = demoted(relevance * (1 + imp) * (1 + rec), rows[pk], db.stale_factor)
        ranked.append((score, pk, label, stale_explain(explain, rows[pk], db.stale_factor)))
    ranked.sort(key=lambda r: -r[0])
    fuzzy_used = False
    if fuzzy is True or (fuzzy is None and len(exact) < want):
        fuzzy_used = True
        seen = {pk for pk, _ in exact}
        ranked.extend(
            (score, pk, "fuzzy", explain)
            for score, pk, explain in fuzzy_matches(db, parsed, filters, threshold, seen, now)
        )
    return ranked, len(exact) >= fetch, fuzzy_used


def matched_words(db: Database, parsed: ParsedQuery, pks: list[int]) -> dict[int, list[str]]:
    """Which of the query's keywords (its content words, as the keyword half of ranking ORs them) each memory
    holds, as the index matches them (stemmed: "retry" finds "retries"). One index lookup per word, over these
    memories only: meant for the few memories handed to an agent, to say why each was found."""
    found: dict[int, list[str]] = {}
    if not pks:
        return found
    asked = parsed.content_words() or list(dict.fromkeys(w for t in parsed.terms for w in words(t.text)))
    for word, holding in zip(asked, db.fts_subsets(['"' + word + '"' for word in asked], pks), strict=True):
        for pk in holding:
            found.setdefault(pk, []).append(word)
    return found


def has_unknown_word(db: Database, parsed: ParsedQuery) -> bool:
    """A content word that no memory contains is likely a typo: worth the fuzzy pass. (Meaning-based
    results fill the list anyway, so "fewer exact hits than asked for" is no signal here.)"""
    candidates = [w for t in parsed.terms for w in words(t.text) if len(w) >= 3 and w.isalpha() and w not in STOPWORDS]
    return bool(candidates) and not set(candidates) <= db.known_words(candidates)


# ------------------------------------------------------------------------------------------- fuzzy
def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


_NEUTRAL = -1.0  # a term FTS5 cannot index (e.g. "@"): ignored, as the exact pass ignores it
_PRESENT = 0.9  # what counts as "contains it" on the excluded side of a NOT


def fuzzy_matches(
    db: Database, parsed: ParsedQuery, filters: Filters, threshold: float, seen: set[int], now: datetime
) -> list[tuple[float, int, dict[str, Any]]]:
    """Fuzzy pass: the same boolean expression, with each term allowed to match approximately."""
    from rapidfuzz import fuzz as rf_fuzz  # imported on use: most searches never need it
    from rapidfuzz import process as rf_process

    node = parsed.node
    if node is None or not parsed.terms:
        return []
    vocab: list[str] | None = None
    alternatives: dict[str, list[str]] = {}
    for term in parsed.terms:
        term_words = words(term.text)
        if len(term_words) != 1 or len(term_words[0]) < 3 or term_words[0] in alternatives:
            continue
        if vocab is None:
            vocab = db.vocabulary()
        word = term_words[0]
        alternatives[word] = [
            match
            for match, _score, _i in rf_process.extract(
                word, vocab, scorer=rf_fuzz.ratio, score_cutoff=threshold * 100, limit=_CORRECTIONS_PER_WORD
            )
            if match != word
        ]

    def render_words(term: Term, negated: bool) -> str | None:
        term_words = words(term.text)
        if negated or len(term_words) != 1 or not alternatives.get(term_words[0]):
            return term.fts() if term.indexable() else None
        return "(" + " OR ".join([term.fts(), *(_quote(a) for a in alternatives[term_words[0]])]) + ")"

    trigrams_left = SUBSTRING_TRIGRAMS

    def render_substring(term: Term, _negated: bool) -> str | None:
        nonlocal trigrams_left
        needle = fold(term.text).strip()
        if len(needle) < 3 or trigrams_left < 1:
            return None
        needle = needle[: trigrams_left + 2]
        trigrams_left -= len(needle) - 2
        return _quote(needle)

    candidates: set[int] = set()
    if expr := compile_node(node, render_substring):
        candidates.update(db.substring_search(expr, filters, _FUZZY_CANDIDATES))
    if expr := compile_node(node, render_words):
        candidates.update(pk for pk, _ in db.fts_search(expr, filters, _FUZZY_CANDIDATES))
    candidates -= seen

    rows = db.rank_rows(sorted(candidates))
    out: list[tuple[float, int, dict[str, Any]]] = []
    terms = _folded_terms(all_terms(node))

    def closest(word: str, doc_words: set[str]) -> tuple[str, float, Any] | None:
        return rf_process.extractOne(word, doc_words, scorer=rf_fuzz.ratio)

    for pk, row in rows.items():
        per_term = _term_similarities(terms, row.text, closest)
        similarity = _evaluate(node, per_term, threshold)
        if similarity is None or similarity == _NEUTRAL:
            continue
        imp, rec = nudges(row, now)
        explain = {
            "similarity": round(similarity, 4),
            "terms": {t: {"similarity": round(s, 4), "matched": how} for t, (s, how) in per_term.items()},
            "importance_nudge": round(imp, 4),
            "recency_nudge": round(rec, 4),
        }
        score = demoted(similarity * (1 + imp) * (1 + rec), row, db.stale_factor)
        out.append((score, pk, stale_explain(explain, row, db.stale_factor)))
    out.sort(key=lambda r: -r[0])
    return out


def _evaluate(node: Node, sims: dict[str, tuple[float, str]], threshold: float) -> float | None:
    """Similarity of a memory to the expression: None if it does not match, _NEUTRAL if nothing in the
    expression is searchable. AND needs every term (mean), OR any (max), NOT excludes what is present."""
    if node.op == "TERM":
        assert node.term is not None
        if not node.term.indexable() and len(fold(node.term.text).strip()) < 3:
            return _NEUTRAL
        score = sims.get(node.term.text, (0.0, ""))[0]
        return score if score >= threshold else None
    if node.op == "NOT":
        left = _evaluate(node.children[0], sims, threshold)
        right = _evaluate(node.children[1], sims, _PRESENT)
        return None if right is not None and right != _NEUTRAL else left
    results = [_evaluate(c, sims, threshold) for c in node.children]
    scored = [r for r in results if r is not None and r != _NEUTRAL]
    if node.op == "AND":
        if any(r is None for r in results):
            return None
        return sum(scored) / len(scored) if scored else _NEUTRAL
    if scored:
        return max(scored)
    return _NEUTRAL if all(r == _NEUTRAL for r in results) else None


def _folded_terms(terms: list[Term]) -> list[tuple[str, str, list[str]]]:
    """Each term's text, folded needle and words: the same for every candidate, so worked out once per query."""
    return [(term.text, fold(term.text).strip(), words(term.text)) for term in terms]


def _term_similarities(
    terms: list[tuple[str, str, list[str]]],
    text: str,
    closest: Callable[[str, set[str]], tuple[str, float, Any] | None],
) -> dict[str, tuple[float, str]]:
    """Best match of each query term (`_folded_terms`) in the text: 1.0 the word(s), 0.9 a literal substring, else
    the mean edit-distance ratio of its words to the closest words of the text (`closest`: rapidfuzz's)."""
    folded = fold(text)
    doc_words = set(words(text))
    out: dict[str, tuple[float, str]] = {}
    for term_text, needle, term_words in terms:
        if term_words and all(w in doc_words for w in term_words) and (len(term_words) == 1 or needle in folded):
            out[term_text] = (1.0, "word")
        elif len(needle) >= 3 and needle in folded:
            out[term_text] = (0.9, "substring")
        elif term_words and doc_words:
            scores, matched = [], []
            for w in term_words:
                found = (w, 100.0, None) if w in doc_words else closest(w, doc_words)
                scores.append(found[1] / 100 if found else 0.0)
                matched.append(found[0] if found else "?")
            out[term_text] = (sum(scores) / len(scores), "typo:" + ",".join(matched))
        else:
            out[term_text] = (0.0, "none")
    return out
