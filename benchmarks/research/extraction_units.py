"""Units, features and a logistic model for learning which sentences of a session are durable knowledge
(benchmarks/research/extraction_learn.py; the study and its result are in benchmarks/README.md).

Every prose sentence the user and the assistant wrote (split as the rules split them: extract.statements), and
every memory the rules made, becomes a unit: its words and word pairs (hashed) and what it is in its conversation
(who said it, whether the user's next turn objected or carried on, its place in the message, a question or hedge,
numbers, paths, versions, whether it answers a question, which rule kept it, the words it shares with the user's
request, the user's next message and the later assistant texts). Tool outputs and files are never units.

`judged` is what the package would run if the model earned its place: a rule memory the model finds very unlikely
dropped, a sentence no rule kept that it finds very likely admitted under the package's speaker rules
(extract.speakers.attribute: the assistant's wanted-kind statements only once the user accepted them; claims about
the user, relays of a source, copies of a tool's output and risky statements never). Left out, it did not earn it:
nothing of this is in the package.
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from codememory.capture.turns import Turn
from codememory.extract.candidate import ASSISTANT, USER, Candidate
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.statements import prose_units, sentences, user_sentences

BITS = 16
DIM = 1 << BITS
CATEGORY_BITS = 14
CATEGORY_DIM = 1 << CATEGORY_BITS
# what an admitted sentence may become (the labels' categories; todos and notes come only from the rules)
CATEGORIES = ("decision", "rejected_alternative", "convention", "preference", "fact", "gotcha")
MIN_WORDS = 4
MAX_CHARS = 400

_WORD_RE = re.compile(r"[a-z][a-z'+#.-]*[a-z+#]|[a-z]|\d+")
_HEDGE_RE = re.compile(r"\b(?:maybe|might|perhaps|probably|possibly|not sure|i think|i guess|could|would)\b", re.I)
_PATH_RE = re.compile(r"[\w-]+/[\w./-]+|\b[\w-]+\.(?:py|ts|js|go|rs|rb|java|toml|json|ya?ml|md|sql|sh|cfg|ini)\b")
_VERSION_RE = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b")
_NUMBER_RE = re.compile(r"\d")
_NEGATION_RE = re.compile(r"\b(?:no|not|never|don'?t|doesn'?t|won'?t|can'?t|without|instead|rather)\b", re.I)
_REASON_RE = re.compile(r"\b(?:because|since|so that|so we|as it|otherwise|which means|due to)\b", re.I)


@dataclass(frozen=True)
class Unit:
    """A sentence (or a rule's memory) with what it is in its conversation."""

    text: str
    seq: int
    speaker: str  # "user" | "assistant"
    position: str  # "only" | "first" | "middle" | "last": its place in its message
    reply: str  # the user's next message after an assistant sentence: "objects" | "agrees" | "none" | ""
    asked: bool  # a user sentence answering an assistant text that ended with a question
    rule: str = ""  # the category a rule gave it ("" for a sentence no rule kept)
    echo_ask: int = 0  # content words it shares with the user's message of its turn
    echo_next: int = 0  # content words it shares with the user's next message
    echo_later: int = 0  # content words it shares with the session's later assistant texts


def _position(index: int, count: int) -> str:
    if count == 1:
        return "only"
    return "first" if index == 0 else "last" if index == count - 1 else "middle"


def message_sentences(text: str, speaker: str) -> list[str]:
    """A message's prose sentences as the rules read them (code, quotes and log lines left out)."""
    if speaker == USER:
        return [s.strip() for unit in prose_units(text) for s in user_sentences(unit) if s.strip()]
    return sentences(text)


def sentence_units(turns: Sequence[Turn]) -> list[Unit]:
    """Every prose sentence the user and the assistant wrote in these turns. Tool outputs and files are never
    units: what they say is not the speaker's."""
    from codememory.extract.speakers import objects

    ordered = sorted(turns, key=lambda t: t.seq)
    out: list[Unit] = []
    for i, turn in enumerate(ordered):
        later = ordered[i + 1].user_text if i + 1 < len(ordered) else None
        reply = "none" if later is None else "objects" if objects(scrub(later)) else "agrees"
        before = ordered[i - 1].assistant_texts if i > 0 else ()
        asked = bool(before) and scrub(before[-1]).rstrip().endswith("?")
        ask = _content(scrub(turn.user_text))
        nxt = _content(scrub(later)) if later else set()
        after = _content(" ".join(scrub(t) for u in ordered[i + 1 :] for t in u.assistant_texts))
        said = message_sentences(scrub(turn.user_text), USER)
        out += [
            Unit(s, turn.seq, USER, _position(j, len(said)), "", asked, "", 0, len(_content(s) & nxt),
                 len(_content(s) & after))
            for j, s in enumerate(said)
            if _usable(s)
        ]  # fmt: skip
        for raw in turn.assistant_texts:
            said = message_sentences(scrub(raw), ASSISTANT)
            out += [
                Unit(s, turn.seq, ASSISTANT, _position(j, len(said)), reply, False, "", len(_content(s) & ask),
                     len(_content(s) & nxt), len(_content(s) & after))
                for j, s in enumerate(said)
                if _usable(s)
            ]  # fmt: skip
    return out


def _usable(sentence: str) -> bool:
    return len(sentence) <= MAX_CHARS and len(_WORD_RE.findall(sentence.lower())) >= MIN_WORDS


def rule_unit(candidate: Candidate, turns: Sequence[Turn]) -> Unit:
    """A rule's memory as a unit: its text, its turn, its speaker and the rule's category."""
    from codememory.extract.speakers import next_user_text, objects

    speaker = USER if candidate.said_by in ("", USER) else ASSISTANT
    reply = ""
    if speaker == ASSISTANT:
        later = next_user_text(turns, candidate.seq)
        reply = "none" if later is None else "objects" if objects(later) else "agrees"
    return Unit(candidate.text, candidate.seq, speaker, "rule", reply, False, candidate.category or "note")


def feature_names(unit: Unit) -> list[str]:
    low = unit.text.lower()
    words = _WORD_RE.findall(low)
    out = [f"w:{w}" for w in words]
    out += [f"b:{a}_{b}" for a, b in itertools.pairwise(words)]
    out += [f"f:{w}" for w in words[:1]] + [f"f2:{'_'.join(words[:2])}"]
    who = unit.speaker
    shape = [
        f"sp:{who}",
        f"pos:{unit.position}",
        f"len:{min(len(words) // 6, 6)}",
        f"reply:{unit.reply}",
        f"rule:{unit.rule or '-'}",
        f"rule_sp:{unit.rule or '-'}:{who}",
    ]
    flags = {
        "q": low.rstrip().endswith("?"),
        "hedge": bool(_HEDGE_RE.search(low)),
        "num": bool(_NUMBER_RE.search(low)),
        "path": bool(_PATH_RE.search(low)),
        "ver": bool(_VERSION_RE.search(low)),
        "code": "`" in low,
        "neg": bool(_NEGATION_RE.search(low)),
        "why": bool(_REASON_RE.search(low)),
        "asked": unit.asked,
        "echo_ask": unit.echo_ask >= 2,
        "echo_next": unit.echo_next >= 1,
        "echo_next2": unit.echo_next >= 2,
        "echo_later": unit.echo_later >= 2,
        "excl": low.rstrip().endswith("!"),
    }
    shape += [f"{name}:{who}" for name, on in flags.items() if on]
    return out + shape


def _bucket(name: str, bits: int) -> int:
    return zlib.crc32(name.encode("utf-8")) & ((1 << bits) - 1)


def features(unit: Unit, bits: int = BITS) -> list[int]:
    """The unit's hashed feature indices (repeats kept: a word said twice counts twice)."""
    return [_bucket(name, bits) for name in feature_names(unit)]


# ------------------------------------------------------------------------------------------------ the model
@dataclass(frozen=True)
class Model:
    """Logistic weights over hashed features (binary head: durable or not) and a category head, with the two bars
    the study chose on the sets it learned from: below `veto` a rule's memory is dropped, from `admit` up a
    sentence no rule kept is admitted."""

    weights: tuple[float, ...]  # DIM + 1 (the last one: the bias)
    categories: tuple[tuple[float, ...], ...]  # one row of CATEGORY_DIM + 1 per CATEGORIES entry
    admit: float
    veto: float

    def probability(self, unit: Unit) -> float:
        import math

        w = self.weights
        z = w[-1] + sum(w[i] for i in features(unit))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def category(self, unit: Unit) -> str:
        idx = features(unit, CATEGORY_BITS)
        scores = [row[-1] + sum(row[i] for i in idx) for row in self.categories]
        return CATEGORIES[max(range(len(scores)), key=scores.__getitem__)]


# ------------------------------------------------------------------------------------------------ judging
LEARNED_IMPORTANCE = 0.6
COVERED_SHARE = 0.6  # a sentence whose words are mostly a rule memory's (kept or dropped) is that memory
_ALWAYS_RULES = frozenset({"remember", "todo"})  # said explicitly or the agent's own list: no judgement needed


def _content(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(text.lower()) if len(w) > 3}


def open_units(candidates: Sequence[Candidate], turns: Sequence[Turn]) -> list[Unit]:
    """The sentences no rule memory holds that may become memories at all: not a copy of a tool's output, not
    risky, not opening on an unresolved pronoun, and for the assistant not a claim about the user or a relay."""
    from codememory.extract.speakers import ToolText, not_the_speakers, risky
    from codememory.extract.unresolved_pronouns import UNRESOLVED_START_RE

    taken = [(c.seq, _content(c.text)) for c in candidates]
    tool_text = ToolText.of(turns)
    out = []
    for unit in sentence_units(turns):
        words = _content(unit.text)
        if not words or any(seq == unit.seq and len(words & mine) >= COVERED_SHARE * len(words) for seq, mine in taken):
            continue
        if UNRESOLVED_START_RE.match(unit.text) or risky(unit.text) or tool_text.copies(unit.text):
            continue
        if unit.speaker == ASSISTANT and (not_the_speakers(unit.text) or tool_text.derives(unit.text)):
            continue
        out.append(unit)
    return out


def judged_rule(candidate: Candidate) -> bool:
    """Whether the model judges this rule memory (remember notes and todos are kept as they are)."""
    return candidate.rule not in _ALWAYS_RULES and candidate.category not in ("todo", "note")


def judged(
    candidates: Sequence[Candidate],
    turns: Sequence[Turn],
    model: Model | None,
    units: Sequence[Unit] | None = None,
) -> list[Candidate]:
    """The rules' memories with the model's judgement: very unlikely ones dropped, very likely sentences no rule
    kept admitted (under the same speaker rules). Without a model: the candidates as they are. `units`: the
    span's `open_units`, when already computed."""
    if model is None or not turns:
        return list(candidates)
    from codememory.extract.heuristic import contained_once, near_duplicates_once, unique
    from codememory.extract.speakers import attribute

    kept = [c for c in candidates if not judged_rule(c) or model.probability(rule_unit(c, turns)) >= model.veto]
    admitted: list[Candidate] = []
    for unit in (open_units(candidates, turns) if units is None else units) if model.admit <= 1 else ():
        if model.probability(unit) < model.admit:
            continue
        said = "" if unit.speaker == USER else ASSISTANT
        admitted.append(
            Candidate(unit.text, model.category(unit), LEARNED_IMPORTANCE, unit.seq, rule="learned", said_by=said)
        )
    if not admitted:
        return kept
    merged = sorted([*kept, *attribute(admitted, turns)], key=lambda c: c.seq)
    return near_duplicates_once(contained_once(unique(merged)))
