"""Knowledge that only the exchange states: an option the user asks about ("Should we use SQLAlchemy
instead?") that the assistant advises against with a reason ("I'd rather not. SQLAlchemy would be the first
dependency …") is a rejected alternative with its reason; when the user's next message settles it ("Ok, let's
stay with plain sqlite3 then."), the choice, the rejected option and the reason are one decision.

An option the assistant recommends ("I'd use pgx directly with hand-written SQL. GORM would hide the queries …")
that the user's next message settles in a few words ("Agreed, pgx it is.") is one decision: the recommendation
with its reason, not the bare "Pgx it is.".

Also here: a choice stated twice in a span (the assistant's "I'll store links in sqlite3 rather than
SQLAlchemy", the user's later "let's stay with sqlite3 rather than SQLAlchemy") is kept once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from codememory.capture.turns import Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import ACCEPTED, ASSISTANT, USER, Candidate, entity_names, spoken
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.clean import clip, tidy
from codememory.extract.rules import HYPOTHETICAL_RE, classify, is_consequence
from codememory.extract.statements import SENTENCE_SPLIT_RE, prose_units
from codememory.extract.unresolved_pronouns import PRONOUN_OBJECT_RE

_PROPOSAL_RE = lazy_pattern(
    r"\b(?:should|shall|could|can|do)\s+(?:we|i|you)\s+(?:just\s+)?(?:use|switch\s+to|go\s+with|add|try|adopt|"
    r"move\s+to|migrate\s+to|pull\s+in|bring\s+in|introduce|depend\s+on)\s+(?P<x>[^?,]+?)"
    r"(?:\s+(?:instead|here|now|too|as\s+well|for\s+(?:this|that|it|the\s+\w+)))*\s*\?"
    r"|\b(?:what|how)\s+about\s+(?:using\s+|adding\s+)?(?P<x2>[^?,]+?)\s*\?"
    r"|\bwhy\s+not\s+(?:just\s+)?(?:use\s+|add\s+)?(?P<x3>[^?,]+?)\s*\?"
    # "someone suggested partitioning orders by month — worth doing now?", "is a read replica worth it?"
    r"|\b(?:suggested|proposed|recommended|mentioned|floated)\s+(?P<x4>[^?,\u2014\u2013]+?)\s*(?:[\u2014\u2013,;:-]+\s*|\.\s+)"
    r"(?:is\s+(?:it|that)\s+|would\s+(?:it|that)\s+be\s+)?worth\s+(?:it|\w+ing)\b[^?]*\?"
    r"|^(?:is|would)\s+(?P<x5>[^?,]{3,50}?)\s+(?:be\s+)?worth\s+(?:it|\w+ing)\b[^?]*\?",
    re.IGNORECASE,
)
_NO_RE = lazy_pattern(
    r"^(?:i'?d\s+rather\s+not|i\s+would\s+rather\s+not|i\s+wouldn'?t|no\b|nope\b|not\s+(?:really|here|now|yet|"
    r"worth\s+it)|probably\s+not|better\s+not|i'?d\s+(?:avoid|skip|stay\s+with|keep|stick\s+with|not)|"
    r"i\s+(?:don'?t|do\s+not)\s+think\s+(?:so|we\s+should|it'?s\s+worth)|i'?d\s+recommend\s+against|let'?s\s+not)\b",
    re.IGNORECASE,
)
_REASON_WORDS_RE = lazy_pattern(
    r"\b(?:would|is|are|adds?|needs?|requires?|has|have|only|covers?|because|since)\b", re.I
)
MAX_REASON_SENTENCES = 2
MIN_SHARED_ENTITIES = 2
MAX_OPTION_WORDS = 5
MAX_SUGGESTED_WORDS = 8


_RECOMMEND_RE = lazy_pattern(
    r"^(?:i'?d|i\s+would|we'?d|i\s+suggest|i\s+recommend|my\s+suggestion\s+is(?:\s+to)?|i'?d\s+recommend)\s+"
    r"(?:just\s+)?(?:use|using|go\s+with|pick|choose|start\s+with|stick\s+with|keep)\b",
    re.IGNORECASE,
)
MAX_SETTLING_WORDS = 8  # "Agreed, pgx it is." settles; a longer decision stands on its own


@dataclass(frozen=True)
class Exchange:
    candidates: list[Candidate]
    settled: frozenset[tuple[int, str]]  # (seq, text) of user decisions now part of a merged memory


def proposal_rejections(turns: Sequence[Turn]) -> Exchange:
    out: list[Candidate] = []
    settled: set[tuple[int, str]] = set()
    for n, turn in enumerate(turns):
        option = _proposed_option(scrub(turn.user_text))
        if not option or not turn.assistant_texts:
            continue
        reason = _refusal_reason(scrub(turn.assistant_texts[0]))
        if reason is None:
            continue
        following = turns[n + 1] if n + 1 < len(turns) else None
        choice = _settling_choice(following)
        if following is not None and choice:
            settled.add((following.seq, choice))
            head = choice.rstrip(".!")
            text = f"{head}, not {option}" + (f": {_lower_first(reason)}" if reason else ".")
            out.append(
                Candidate(clip(text), "decision", 0.8, following.seq, entity_names(text), rule="decision", said_by=USER)
            )
        elif reason:
            text = f"{option[0].upper()}{option[1:]} rejected: {_lower_first(reason)}"
            out.append(
                Candidate(
                    clip(text), "rejected_alternative", 0.65, turn.seq, entity_names(text), rule="rejected",
                    said_by=ASSISTANT,
                )
            )  # fmt: skip
    return Exchange(out, frozenset(settled))


def agreed_recommendations(turns: Sequence[Turn]) -> Exchange:
    """The assistant's recommendation, with its reason, when the user's next message settles it in a few words
    naming the recommended option."""
    out: list[Candidate] = []
    settled: set[tuple[int, str]] = set()
    for before, turn in pairwise(turns):
        units = prose_units(scrub(turn.user_text))
        if not units or not before.assistant_texts:
            continue
        first = SENTENCE_SPLIT_RE.split(units[0])[0]
        found = classify(first)
        if not found or found[0].rule != "decision" or len(found[0].text.split()) > MAX_SETTLING_WORDS:
            continue
        named = {w.lower() for w in re.findall(r"[\w.+-]{3,}", found[0].text)}
        units_before = [u for text in before.assistant_texts for u in prose_units(scrub(text))]
        said = [tidy(x) for u in units_before for x in SENTENCE_SPLIT_RE.split(u)]
        for n, sentence in enumerate(said):
            words = {w.lower() for w in re.findall(r"[\w.+-]{3,}", sentence)}
            if _RECOMMEND_RE.match(sentence) and named & words - _COMMON_FIRST:
                reason = [x for x in said[n + 1 : n + 1 + MAX_REASON_SENTENCES] if _REASON_WORDS_RE.search(x)][:1]
                text = clip(" ".join([sentence, *reason]))
                decision = Candidate(text, "decision", 0.8, turn.seq, entity_names(text), rule="decision")
                out.append(spoken(decision, ACCEPTED))
                settled.add((turn.seq, found[0].text))
                break
    return Exchange(out, frozenset(settled))


def _proposed_option(user_text: str) -> str | None:
    units = prose_units(user_text)
    for unit in units:
        for sentence in SENTENCE_SPLIT_RE.split(unit):
            m = _PROPOSAL_RE.search(sentence)
            if m:
                option = next(g for g in m.group("x", "x2", "x3", "x4", "x5") if g).strip()
                option = re.sub(r"^(?:the|a|an)\s+", "", option, flags=re.I)
                # a question about what someone suggested names a whole change ("sharding the events table by tenant")
                longest = MAX_SUGGESTED_WORDS if m.group("x4") or m.group("x5") else MAX_OPTION_WORDS
                if option and not PRONOUN_OBJECT_RE.match(option) and len(option.split()) <= longest:
                    return option
    return None


def _refusal_reason(answer: str) -> str | None:
    """The reason an answer gives for advising against the option, "" when it gives none, None when the
    answer is not a refusal."""
    said = [s for unit in prose_units(answer) for s in SENTENCE_SPLIT_RE.split(unit) if s.strip()]
    if not said or not _NO_RE.match(tidy(said[0])):
        return None
    first = re.sub(r"^[^,.;:]*[,;:]\s*", "", tidy(said[0]), count=1) if "," in said[0] or ":" in said[0] else ""
    reasons = [tidy(first)] if first and _REASON_WORDS_RE.search(first) else []
    for s in said[1:]:
        t = tidy(s)
        if len(reasons) >= MAX_REASON_SENTENCES or re.match(r"^(?:if|unless|once|when)\b", t, re.I):
            break
        if _REASON_WORDS_RE.search(t) and not t.endswith("?"):
            reasons.append(t)
    return " ".join(r for r in reasons if r)


def _settling_choice(turn: Turn | None) -> str | None:
    if turn is None:
        return None
    for unit in prose_units(scrub(turn.user_text))[:1]:
        first = SENTENCE_SPLIT_RE.split(unit)[0]
        if not is_consequence(first) or HYPOTHETICAL_RE.search(tidy(first)):
            return None
        found = classify(first)
        if found and found[0].rule == "decision":
            return found[0].text
    return None


_COMMON_FIRST = frozenset("the a an it its this that these those there we our with without one every each".split())


def _lower_first(text: str) -> str:
    """The reason after a colon: its first word in lower case unless it is a name ("Celery needs …")."""
    first = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if first.lower() in _COMMON_FIRST else text


def same_choice_once(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Decisions and rejections naming the same options (two or more entities in common with an earlier one, all
    of the smaller one's) are one memory: the first. Two choices about one table share its columns, not all names."""
    out: list[Candidate] = []
    seen: list[frozenset[str]] = []
    for c in candidates:
        if c.category in ("decision", "rejected_alternative") and c.rule != "remember":
            names = frozenset(e.lower() for e in c.entities)
            # the same options: two or more names in common, all of the smaller memory's names
            if len(names) >= MIN_SHARED_ENTITIES and any(
                len(names & s) >= max(MIN_SHARED_ENTITIES, min(len(names), len(s))) for s in seen
            ):
                continue
            seen.append(names)
        out.append(c)
    return out
