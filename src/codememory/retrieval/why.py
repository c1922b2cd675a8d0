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
  was demoted by `[staleness] demote`);
- usefulness: {factor, shown, used}, what agents did with it when it was shown before moved its score by `factor`
  (codememory.retrieval.usefulness; `shown` and `used` are the decayed session counts it came from).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from codememory.retrieval.lexical import matched_words
from codememory.store.database import Database
from codememory.text.query import parse_query, words

MAX_WORDS = 12  # matched words kept per memory
MAX_ENTITIES = 8


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


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


# ------------------------------------------------------------------------------------------- one line
# The readable line of a `why` (proactive retrieval, the injection ledger) or of a search hit's `explain`: what
# found the memory, in the order a person reads it. The keys below are shown by name; any other key the mapping
# holds follows as "key value". A ledger row is untrusted: anything of the wrong type is not shown.
_LABEL_CHARS = 80
_LIST_ITEMS = 12
_NOTE_CHARS = 300
# Parts of the fused score that the line leaves to --json: the z-scores the fusion combines, the nudges (at most
# ±5%) and the fuzzy pass's per-term table (its corrections are shown as typos); `score` is the caller's to show.
_QUIET = frozenset(
    {"score", "lexical_z", "semantic_z", "importance_nudge", "recency_nudge", "similarity", "terms", "rank"}
    # the relevance evidence and the ranking's order marks (retrieval/evidence.py, fusion.py): in --json
    | {
        "keyword",
        "meaning",
        "standout",
        "coverage",
        "likelihood",
        "background_likelihood",
        "all_words",
        "covered",
        "newer_in_tie",
        "supersedes",
        "updates",
    }
)
_SHOWN = frozenset(
    {"retriever", "match", "bm25", "cosine", "fused", "words", "entities", "typos", "fuzzy", "context", "boost"}
    | {"tag_nudge", "stale", "stale_factor", "pinned", "by", "project", "usefulness"}
)


def _text(value: Any, limit: int = _LABEL_CHARS) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def _texts(value: Any) -> list[str]:
    items = value if isinstance(value, list | tuple) else []
    return [v[:_LABEL_CHARS] for v in items if isinstance(v, str) and v][:_LIST_ITEMS]


def _generic(value: Any, depth: int = 0) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    if depth > 2 and isinstance(value, list | tuple | dict):
        return "…"  # an untrusted value is not walked deeply
    if isinstance(value, list | tuple):
        return ", ".join(_generic(v, depth + 1) for v in value[:_LIST_ITEMS])
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} {_generic(v, depth + 1)}" for k, v in list(value.items())[:_LIST_ITEMS]) + "}"
    return str(value)[:_LABEL_CHARS]


def _typos(why: Mapping[str, Any]) -> list[str]:
    """Corrections, "webhok~webhook": retrieval's `typos`, or a search hit's fuzzy table (its own or nested)."""
    found = _texts(why.get("typos"))
    nested = why.get("fuzzy")
    fuzzy: Mapping[str, Any] = nested if isinstance(nested, Mapping) else why
    terms = fuzzy.get("terms")
    for term, info in terms.items() if isinstance(terms, Mapping) else ():
        how = info.get("matched") if isinstance(info, Mapping) else None
        if isinstance(how, str) and how.startswith("typo:"):
            found.append(f"{str(term)[:_LABEL_CHARS]}~{how[5:][:_LABEL_CHARS]}")
        elif how == "substring":
            found.append(f"{str(term)[:_LABEL_CHARS]} inside a word")
    return list(dict.fromkeys(found))[:_LIST_ITEMS]


def why_text(why: Mapping[str, Any], *, shown: bool = False) -> str:
    """One line of why a memory was found or chosen, e.g. "bm25 0.54 · cosine 0.86 · matched: httpx · typos:
    webhok~webhook · session context +0.20 · via hybrid (partial)"; "-" when the mapping says nothing. `shown`:
    the `why` of an injection already made (its staleness note is what the agent was shown)."""
    out: list[str] = []
    borrowed = isinstance(why.get("fuzzy"), Mapping)  # a typo's keyword score is the best hit's (hybrid.py)
    for key, label in (("bm25", "bm25 {:.3g}"), ("cosine", "cosine {:.2f}"), ("fused", "fused {:.2f}")):
        if key == "bm25" and borrowed:
            continue
        if (value := _number(why.get(key))) is not None:
            out.append(label.format(value))
    nested = why.get("fuzzy")
    fuzzy: Mapping[str, Any] = nested if isinstance(nested, Mapping) else why
    similarity = _number(fuzzy.get("similarity"))
    if similarity is not None:
        out.append(f"fuzzy {similarity:.2f}")
    if words := _texts(why.get("words")):
        out.append("matched: " + ", ".join(words))
    if typos := _typos(why):
        out.append("typos: " + "; ".join(typos))
    if entities := _texts(why.get("entities")):
        out.append("entities: " + ", ".join(entities))
    for key, label in (("context", "session context"), ("boost", "date/tag boost"), ("tag_nudge", "tag")):
        if value := _number(why.get(key)):
            out.append(f"{label} {value:+.2f}")
    if why.get("pinned") is True:
        out.append("pinned")
    if by := _text(why.get("by")):
        out.append(f"by {by}")
    if stale := _text(why.get("stale"), _NOTE_CHARS):
        out.append(f"shown as stale ({stale.removeprefix('may be stale: ')})" if shown else stale)
    if (factor := _number(why.get("stale_factor"))) is not None:
        out.append(f"stale: score × {factor:g}")
    use = why.get("usefulness")
    if isinstance(use, Mapping) and (factor := _number(use.get("factor"))) is not None:
        shown_n, used_n = _number(use.get("shown")), _number(use.get("used"))
        counts = f" (shown {shown_n:.3g}, used {used_n:.3g})" if shown_n is not None and used_n is not None else ""
        out.append(f"usefulness × {factor:.2f}{counts}")
    if project := _text(why.get("project")):
        rank = _number(why.get("rank"))
        out.append(f"project {project}" + (f" #{rank:g}" if rank is not None else ""))
    for key, value in why.items():
        if key in _SHOWN or key in _QUIET or value is None or value is False or value in ([], {}, ""):
            continue
        out.append(str(key)[:_LABEL_CHARS] if value is True else f"{str(key)[:_LABEL_CHARS]} {_generic(value)}")
    if retriever := _text(why.get("retriever")):
        match = _text(why.get("match"))
        out.append(f"via {retriever.replace('_', ' ')}" + (f" ({match})" if match else ""))
    return " · ".join(out) or "-"
