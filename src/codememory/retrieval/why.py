"""What proactive retrieval says about each memory it hands an agent (its `why`): the real parts of how the memory
was found, so that `codememory explain` can show them.

Keys (each only when it applies):
- retriever: "hybrid" (keywords and meaning fused), "lexical" (keywords only), "entity", "pinned" (kept from the
  previous call by meaning alone);
- match: how the ranking found it (exact, partial, semantic, context, fuzzy);
- score: the memory's place in the ranking, 1.0 first (what proactive retrieval orders by; not a relevance);
- bm25: the keyword index's raw relevance (FTS5 BM25, higher is better) for the query's keywords ORed;
- cosine: meaning similarity to the closest query phrase (with an embedding model);
- fused: the ranking's own score: BM25 and cosine z-scores fused, plus session context, date/tag boosts and the
  importance/recency nudges (codememory.retrieval.fusion); keyword-only, BM25 with the nudges;
- context, boost: the session-neighbour and date/tag parts of `fused`, when not zero;
- typos: query words matched through a correction ("webhok~webhook");
- words: the query's keywords the memory holds (as the index matches them: stemmed);
- entities: the memory's entities that the step named (the request's entities, or entities found in its phrases);
- pinned: true when it was kept because the previous call showed it;
- stale: the "may be stale: `src/x.py` deleted in abc1234" note of a memory a staleness check marked (its score
  was demoted by `[staleness] demote`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from codememory.retrieval.lexical import matched_words
from codememory.store.database import Database
from codememory.text.query import parse_query, words

MAX_WORDS = 12  # matched words kept per memory
MAX_ENTITIES = 8


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def ranked_why(mode: str, match: str, score: float, fused: float, explain: Mapping[str, Any]) -> dict[str, Any]:
    """The `why` of a memory the ranking found, from the ranking's entry (`fused` is its score, `explain` its
    parts; see codememory.retrieval.hybrid and .lexical)."""
    why: dict[str, Any] = {"retriever": mode, "match": match, "score": round(score, 4)}
    bm25 = _number(explain.get("bm25"))
    fuzzy = explain.get("fuzzy") or (explain if "similarity" in explain else None)
    if bm25 is not None and not fuzzy:  # a typo's keyword score is borrowed from the best hit (hybrid.py)
        why["bm25"] = float(f"{bm25:.4g}")  # significant digits: BM25 is tiny in a small store (rare words only)
    cosine = _number(explain.get("cosine"))
    if cosine is not None:
        why["cosine"] = round(cosine, 4)
    why["fused"] = round(fused, 4)
    for key in ("context", "boost"):
        part = _number(explain.get(key))
        if part:
            why[key] = round(part, 4)
    if isinstance(fuzzy, Mapping):
        terms = fuzzy.get("terms")
        typos = [
            f"{term}~{info['matched'][5:]}"
            for term, info in (terms.items() if isinstance(terms, Mapping) else ())
            if isinstance(info, Mapping) and str(info.get("matched", "")).startswith("typo:")
        ]
        if typos:
            why["typos"] = typos
    return why


def add_matches(
    db: Database, chosen: Sequence[tuple[int, dict[str, Any]]], phrases: Sequence[str], entity_names: Sequence[str]
) -> None:
    """Add `words` and `entities` to the `why` of each chosen (pk, why). The words are those of the phrases as
    rank_phrases reads them (codememory.retrieval.search)."""
    if not chosen:
        return
    pks = [pk for pk, _why in chosen]
    found: dict[int, list[str]] = {}
    if phrases:
        found = matched_words(db, parse_query(" ".join(w for p in phrases for w in words(p))), pks)
    named = set(entity_names)
    if phrases:
        from codememory.text.entities import extract_entities  # its vocabulary loads on first use

        named.update(e.name for e in extract_entities(" ".join(phrases)))
    holds = db.entities_of(pks) if named else {}
    for pk, why in chosen:
        if found.get(pk):
            why["words"] = found[pk][:MAX_WORDS]
        matching = [name for name, _type in holds.get(pk, []) if name in named]
        merged = list(dict.fromkeys([*why.get("entities", []), *matching]))[:MAX_ENTITIES]
        if merged:
            why["entities"] = merged
