"""How the evidence about each candidate (retrieval/evidence.py) combines into one ranking.

Every part is on an absolute scale, so that a real match is never sunk by being normalised against the few other
hits (a keyword match z-scored against one other keyword match once ranked 13th behind meaning-only results):

1. base = 5 × keyword evidence (BM25 over the query's word weight) + 1.5 × word coverage (the share of the query's
   IDF weight the memory holds) + meaning (its cosine's z-score against the background sentences, scaled so that
   the candidates' spread is 0.7: `meaning_scale`) ± 1.0 when the memory is or is not of the kind the query's form
   asks for ("why not ...?": a decision or a rejected alternative; a symptom: a gotcha; text/asks.py).
2. Context: a memory's neighbours in the same session (±1 and ±2 turns) add 0.4 × how far their base is above the
   candidates' mean: an answer is often spread over adjacent turns. Memories outside any session get no context.
3. Boosts: +3.0 when the query names the month (and year) the memory was created in; +0.3 when a query word equals
   one of the memory's tags. Then the importance and recency nudges, and a stale memory's demotion.
4. Order: the keyword matches holding the query's distinctive words (coverage ≥ 0.9) first, then the rest, each by
   score; within a near tie the newer memory goes first, and among the first few the newer of two memories that say
   nearly the same thing goes first within a wider window (`newer_supersedes`: an updated setting), and a newer
   memory that says it changed something ("upgraded to 1.29", "raised from 500 to 1000") goes directly above each of
   the first few older memories on its subject, from wherever it ranked (`updates_first`).

Weights chosen on the precision development set, LoCoMo-dev and the coding set together
(benchmarks/research/ranking_study.py `rank`; the table in benchmarks/README.md, "Precision on project-sized
stores"). The relevance decision (retrieval/decision.py) then says which of the ranked candidates are shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from codememory.retrieval.nudge import demote, nudges

NEIGHBOUR_SPAN = 2
DATE_BOOST = 3.0
TAG_BOOST = 0.3
# Candidates from each side before context expansion (research: 50/50 scored 0.721 against 0.724 for
# ranking every memory, at a fraction of the cost).
LEXICAL_POOL = 50
SEMANTIC_POOL = 50


@dataclass
class Sessions:
    """Turn order of the sessions the candidates belong to: pk -> (that session's members, index)."""

    position: dict[int, tuple[list[int], int]]

    @classmethod
    def build(cls, members: Iterable[list[int]]) -> Sessions:
        return cls({pk: (order, i) for order in members for i, pk in enumerate(order)})

    def around(self, pk: int, span: int) -> list[tuple[int, int]]:
        """(neighbour pk, distance) within `span` turns of pk in its session."""
        if pk not in self.position:
            return []
        order, i = self.position[pk]
        return [(order[j], abs(j - i)) for j in range(max(0, i - span), min(len(order), i + span + 1)) if j != i]


def expand(pool: Iterable[int], sessions: Sessions, span: int) -> set[int]:
    out = set(pool)
    for pk in list(out):
        out.update(n for n, _ in sessions.around(pk, span))
    return out


@dataclass
class Evidence:
    """What is known about one candidate for one query, each part on a scale of its own (retrieval/evidence.py)."""

    keyword: float = 0.0  # BM25 over the query's word weight (a typo match: its similarity); 0: no keyword
    meaning: float | None = None  # cosine as a z-score against the background; None: no vector
    coverage: float = 0.0  # the share of the query's word weight (IDF) among the words it holds
    boost: float = 0.0  # the month the query names, a query word among its tags
    importance: float = 0.5
    created_at: str = ""
    stale: bool = False  # a staleness check marked it
    changes: bool = False  # its text says something changed (text/changes.py): it may update an older memory
    text: str = ""  # the memory's text (for telling an update from a memory that merely sits near)
    kind_fit: float = 0.0  # +1 of the kind the query's form asks for, -1 of another, 0 unknown (text/asks.py)


@dataclass(frozen=True)
class RankWeights:
    """How the evidence orders candidates (tuned on data: benchmarks/README.md, "Precision on project-sized
    stores"; benchmarks/research/ranking_study.py)."""

    keyword: float = 5.0  # per unit of keyword evidence (a memory holding every distinctive word once: ~1)
    meaning: float = 1.0  # per `spread` of the candidates' meaning evidence (or per unit of it, `spread` 0)
    coverage: float = 1.5  # per unit of word coverage (the share of the query's word weight a memory holds)
    neighbour: float = 0.4  # × how far a session neighbour's base is above the candidates' mean
    covered: float = 0.9  # word coverage from which a keyword match ranks above every match by meaning alone
    tie: float = 0.3  # scores this close are a near tie, which the newer memory wins
    supersede: float = 2.0  # ... and this close when the two say nearly the same (an updated fact)
    head: int = 4  # how far down the newer of two near-duplicates is looked for
    spread: float = 0.7  # the meaning evidence's typical spread over one query's candidates in project notes
    kind: float = 1.0  # × the memory's fit to the kind of memory the query's form asks for (`Evidence.kind_fit`)


def base_score(e: Evidence, w: RankWeights, meaning_scale: float = 1.0) -> float:
    meaning = e.meaning * meaning_scale if e.meaning is not None else 0.0
    return w.keyword * e.keyword + w.coverage * e.coverage + w.meaning * meaning + w.kind * e.kind_fit


def meaning_scale(evidence: Iterable[Evidence], spread: float) -> float:
    """What puts one query's meaning evidence on the ranking's scale: `spread` over its standard deviation across
    the candidates. Background z-scores measure how far a memory stands out from text that answers nothing, which
    is what the relevance decision needs; for ordering, what counts is how far it stands out from the other
    candidates: in a conversation log every turn is far from the background (spread 1.8 on LoCoMo against 0.7 in
    project notes) and meaning would drown the keywords. Over the whole candidate set (≥ 50 memories, or the whole
    store), never a handful of hits; the keyword evidence is never rescaled."""
    values = [e.meaning for e in evidence if e.meaning is not None]
    if spread <= 0 or len(values) < 3:
        return 1.0
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return spread / sd if sd > 1e-6 else 1.0


def order(
    evidence: dict[int, Evidence],
    pool: set[int],
    sessions: Sessions,
    w: RankWeights,
    now: datetime,
    stale_factor: float,
) -> list[tuple[float, int, dict[str, Any]]]:
    """The pool and its session neighbours, best first: (score, pk, its parts). `evidence` covers those and their own
    neighbours (whose base feeds the context term).

    score = base (keywords, word coverage, meaning) + context + boosts + importance/recency nudges, a stale
    memory's demoted. Order: first the keyword matches that hold the query's distinctive words (coverage ≥
    `w.covered`: a memory that holds what was searched for never sinks under ones found by meaning alone), then
    the rest, each by score; within a near tie (`w.tie`) the newer memory goes first, since where a fact was
    updated the newer memory is the current one."""
    ranked = expand(pool, sessions, NEIGHBOUR_SPAN)
    scale = meaning_scale(evidence.values(), w.spread)
    base = {pk: base_score(e, w, scale) for pk, e in evidence.items()}
    mean = sum(base.values()) / len(base) if base else 0.0
    out: list[tuple[float, int, dict[str, Any]]] = []
    for pk in ranked:
        e = evidence.get(pk)
        if e is None:
            continue
        context = w.neighbour * sum(base.get(n, mean) - mean for n, _ in sessions.around(pk, NEIGHBOUR_SPAN))
        imp, rec = nudges(e.importance, e.created_at, now)
        score = demote(base[pk] + context + e.boost + imp + rec, e.stale, stale_factor)
        covered = e.keyword > 0 and e.coverage >= w.covered
        parts = {"context": context, "boost": e.boost, "importance_nudge": imp, "recency_nudge": rec}
        if covered:
            parts["covered"] = True
        out.append((score, pk, parts))
    out.sort(key=lambda r: (not r[2].get("covered"), -r[0], r[1]))
    return newer_first_in_ties(out, evidence, w.tie)


def newer_first_in_ties(
    ranked: list[tuple[float, int, dict[str, Any]]], evidence: dict[int, Evidence], tie: float
) -> list[tuple[float, int, dict[str, Any]]]:
    """Move each entry above the older ones just before it whose score is less than `tie` higher (in the same tier)."""
    out: list[tuple[float, int, dict[str, Any]]] = []
    for entry in ranked:
        i = len(out)
        created = evidence[entry[1]].created_at
        while (
            i > 0
            and out[i - 1][2].get("covered") == entry[2].get("covered")
            and out[i - 1][0] - entry[0] < tie
            and evidence[out[i - 1][1]].created_at < created
        ):
            i -= 1
        if i < len(out):
            entry[2]["newer_in_tie"] = True
        out.insert(i, entry)
    return out


def newer_supersedes(
    ranked: list[tuple[float, int, dict[str, Any]]],
    evidence: dict[int, Evidence],
    alike: Callable[[int, int], bool],
    w: RankWeights,
) -> list[tuple[float, int, dict[str, Any]]]:
    """Among the first `w.head` entries, move a memory above the first older one that says nearly the same (`alike`:
    their vectors are near-duplicates on the model's scale) and scores less than `w.supersede` higher, in the same
    tier.
    A store accumulates: where a setting or decision changed ("snap to 15 minutes", later "changed the snap from 15
    to 30 minutes"), the older memory often words the question more closely, yet the newer one is the current
    answer. Unrelated memories only swap within a near tie (`newer_first_in_ties`). A moved entry's parts name
    the memories it passed (`supersedes`): it is as likely relevant as they are."""
    head = ranked[: w.head]
    out: list[tuple[float, int, dict[str, Any]]] = []
    for entry in head:
        created = evidence[entry[1]].created_at
        older = [
            j
            for j, (score, pk, parts) in enumerate(out)
            if parts.get("covered") == entry[2].get("covered")
            and score - entry[0] < w.supersede
            and evidence[pk].created_at < created
            and alike(pk, entry[1])
        ]
        if older:
            entry[2]["supersedes"] = [out[j][1] for j in older]
            out.insert(older[0], entry)
        else:
            out.append(entry)
    return out + ranked[w.head :]


def updates_first(
    ranked: list[tuple[float, int, dict[str, Any]]],
    evidence: dict[int, Evidence],
    updates: Callable[[int, int], bool],
    w: RankWeights,
    alike: Callable[[int, int], bool] = lambda a, b: False,
) -> list[tuple[float, int, dict[str, Any]]]:
    """Move the newest memory that says it changed something (`Evidence.changes`) and is on the subject of one of the
    first `w.head` entries (`updates(older, newer)`: their vectors are as close as an update and what it updates, on
    the model's scale) directly above that entry, wherever it ranked.

    The note that first stated a setting words the question about it best ("what Kubernetes version are our clusters
    running?" against "EKS clusters run Kubernetes 1.27"); the note that changed it ("Both EKS clusters upgraded to
    1.29") says so, may share none of the question's words, and ranked anywhere from 2nd to 30th: further apart in
    score than `newer_supersedes` moves, and often too far apart in wording to be a near-duplicate. A change note never
    passes a keyword match holding the query's distinctive words unless it holds them too (the tiers stay). Its parts
    name the memories it passed (`updates`); it takes on their likelihood (`supersedes`) only where it is also a
    near-duplicate of them (`alike`): a note on a neighbouring subject that passed the answer must not be shown on the
    answer's evidence."""
    changes = [entry for entry in ranked if evidence[entry[1]].changes]
    if not changes:
        return ranked
    out = list(ranked)
    moved: set[int] = set()
    for older in ranked[: w.head]:
        created = evidence[older[1]].created_at
        covered = older[2].get("covered")
        newer = [
            entry
            for entry in changes
            if entry[1] != older[1]
            and entry[1] not in moved
            and evidence[entry[1]].created_at > created
            and (entry[2].get("covered") or not covered)
            and updates(older[1], entry[1])
        ]
        if not newer:
            continue
        update = max(newer, key=lambda entry: (evidence[entry[1]].created_at, entry[1]))
        at = out.index(older)
        if out.index(update) < at:
            continue
        out.remove(update)
        out.insert(at, update)
        moved.add(update[1])
        key = "supersedes" if alike(older[1], update[1]) else "updates"
        passed = update[2].get(key)
        update[2][key] = [*(passed if isinstance(passed, list) else []), older[1]]
    return out
