"""What one prose sentence states, if anything durable: a decision (what was chosen, with what it was chosen
over and why when the sentence says so), a rejected alternative, a convention or constraint, a preference, an
environment fact (version, port, command). Most sentences state none of these.

The rules are linguistic, not lists of words from one project:
- decisions and rejections are read in `choices`;
- a convention is a standing rule ("always", "never", "from now on", "don't …", "keep it dependency-free",
  "we use tabs") or a platform constraint ("CI runs Python 3.9, so no `X | None`");
- a fact is a version, port or command stated about the project, not narrated as the next step.
Questions, hypotheticals, open decisions and statements about a bare pronoun are never memories."""

from __future__ import annotations

import re
from functools import lru_cache

from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import Statement
from codememory.extract.choices import REASON_RE, phrased_choice, stated_decision, stated_rejection
from codememory.extract.clean import tidy
from codememory.extract.fact_phrasings import (
    ASIDE_RE,
    CODE_SPAN_RE,
    COMMAND_RE,
    CONSTRAINT_RE,
    ENV_VERSION_RE,
    FAILURE_TALK_RE,
    GENERIC_VERSION_RE,
    HOST_VERSION_RE,
    LOCATION_RE,
    MINE_RE,
    PORT_RE,
    RESULT_NOW_RE,
    SPEC_RE,
    VERSION_RE,
    WITHOUT_COMMAND_RE,
)
from codememory.extract.observations import states_an_observation
from codememory.extract.phrasings import GUESS_RE, NO_THING_WHY_RE, OBVIOUS_BUT_RE
from codememory.extract.speakers import relays_a_source, risky
from codememory.extract.standing_rules import (
    CI_ENFORCES_RE,
    DEONTIC_RE,
    FOLLOWS_PRACTICE_RE,
    NOT_THE_OTHER_RE,
    RULE_HEADING_RE,
    SETTLED_RE,
    names_a_format,
    terse_bounds,
)
from codememory.extract.stated_values import states_a_valued_rule
from codememory.extract.unresolved_pronouns import PRONOUN_OBJECT_RE, PRONOUN_SUBJECT_RE
from codememory.text.mood import (
    asks,
    conjectures,
    logged,
    narration,
    reports_status,
    standing_instruction,
    tells_a_change,
)

# ------------------------------------------------------------------------------------------ guards
HYPOTHETICAL_RE = lazy_pattern(
    r"^(?:if|what if|suppose|supposing|imagine|assuming|in case|unless|whether|perhaps|maybe|once)\b"
    r"|\b(?:could|might|maybe|perhaps|probably|possibly|not sure|unsure|wonder(?:ing)?|hypothetical(?:ly)?|"
    r"alternatively|in theory|what if|or should|should\s+(?:we|i)|either way|"
    r"would(?!\s+(?:rather|prefer|like|be\s+(?:overkill|too|unnecessary|a\s+dead)))|"
    r"was thinking|thinking about|considering|(?:one|another)\s+option|(?<!not\s)an\s+option|"
    r"for\s+example|e\.g\.|such\s+as)\b",
    re.IGNORECASE,
)


def usable(sentence: str) -> bool:
    words = sentence.split()
    return 3 <= len(words) <= 60 and len(sentence) <= 400 and not asks(sentence) and not logged(sentence)


# ------------------------------------------------------------------------------------- conventions
_NOT_VERBS = (
    r"been|mind|had|has|was|were|is|are|did|do|does|worked|works|seen|happened|happens|knew|know|thought|"
    r"really|ever|once|before|again|got|get|gets|came|fails?|failed|breaks?|broke|shows?|showed|seems?|made|"
    r"returns?|printed|prints|liked|crashes|crashed|passes|passed|takes|took|"
    # "never said zero deps": a denial of what someone claimed, not a rule
    r"said|asked|told|wanted|meant|mentioned|claimed|agreed|requested"
)
_DONT_NOT = r"worry|know|think|mind|bother|care|see|understand|get|remember|need|have|want|like|feel|seem|forget|let"
_CONVENTION_RE = lazy_pattern(
    rf"(?:^|[,:]\s*|\b(?:we|you|should|must|please|to|and|then|but|i\s+want\s+you\s+to|make\s+sure\s+to|"
    rf"remember\s+to)\s+)"
    rf"(?:always|never)\s+(?!(?:{_NOT_VERBS})\b)\w+"
    r"|\b(?:the|our|project'?s?|repo'?s?|codebase'?s?)\s+convention\s+is\b|\bby\s+convention\b"
    r"|^prefer\s+\w+"
    r"|^(?:from\s+now\s+on|going\s+forward|in\s+this\s+(?:project|repo|codebase)|throughout\s+the\s+\w+),?\s+\w+"
    rf"|(?:^|[,:;]\s*)(?:please\s+)?(?:don'?t|do\s+not)\s+(?!(?:{_DONT_NOT})\b)\w+"
    r"|^(?:the\s+)?(?:convention|rule|policy)(?:\s+(?:here|for\s+(?:this|the)\s+(?:repo|project|codebase|team)))?\s*:"
    r"|\b(?:is|'s)\s+(?:a|the|our)\s+(?:legal\s+|hard\s+|strict\s+)?(?:requirement|rule|policy)\b"
    r"|\b(?!(?:i|you)\b)\w+\s+(?:must|have\s+to|has\s+to)\s+(?!(?:be\s+(?:fixed|done|wrong|broken)|pass)\b)\w+"
    r"|^(?:keep|bear)\s+in\s+mind\b|^(?:remember|note)\s+that\b|^be\s+aware\s+that\b"
    r"|\bkeep\s+(?:it|this|things|everything|the\s+(?:\w+\s+)?(?:project|code|codebase|package|library|module|app|"
    r"tool|cli|api|repo))\s+(?:\w+-(?:free|only|compatible|agnostic|safe|dependent)|free\s+of|dependency\s+free|"
    r"under|below|within|compatible|backwards?[- ]compatible|pure|stdlib|in\s+the\s+standard\s+library)"
    r"|\bno\s+(?:new\s+|external\s+|extra\s+|third[- ]party\s+|runtime\s+|additional\s+)*dependenc(?:y|ies)\b"
    # a bound said with "never": "body text is never smaller than 24px"
    r"|\b(?:is|are|must\s+be|should\s+be|stays?)\s+never\s+(?:smaller|larger|bigger|longer|shorter|more|less|lower|"
    r"higher|above|below|over|under|older|newer)\b"
    r"|\b(?:standard\s+library|stdlib)\s+only\b|\bonly\s+(?:the\s+)?(?:standard\s+library|stdlib)\b"
    r"|\bwithout\s+(?:any\s+)?(?:new\s+|external\s+|third[- ]party\s+)?dependencies\b"
    r"|^we\s+(?:use|write|name|put|keep|prefix|format|follow|store|tag|log|pin|squash|rebase)\s+(?!(?:it|this|that|"
    r"them)\b)\w+",
    re.IGNORECASE,
)
_ASSISTANT_CONVENTION_RE = lazy_pattern(
    r"\b(?:the|this|our)\s+(?:project'?s?|repo(?:sitory)?'?s?|codebase'?s?)\s+convention\s+is\b|\bby\s+convention\b",
    re.IGNORECASE,
)
PREFERENCE_RE = lazy_pattern(
    r"^(?:personally,?\s+)?i(?:'d|\s+would)?\s+(?:really\s+|much\s+)?(?:prefer|rather|like\s+it\s+when|like\s+to|"
    r"always\s+want|want\s+you\s+to\s+always|want\s+you\s+to\s+never|hate\s+it\s+when|don'?t\s+like)\b"
    r"|^my\s+preference\s+is\b",
    re.IGNORECASE,
)

# A caveat: "no need for a GradScaler with bf16; that's only for fp16".
_CAVEAT_RE = lazy_pattern(
    r"\b(?:no\s+need\s+for|(?:doesn'?t|don'?t)\s+need)\s+(?:a\s+|an\s+|the\s+)?[\w.-]+[^.]*\b(?:only\s+(?:needed\s+|"
    r"required\s+)?(?:for|with|when|on)|only\s+(?:matters|applies))\s+(?!(?:now|the\s+moment|testing|this\s+test)\b)\w+",
    re.IGNORECASE,
)


# ------------------------------------------------------------------------------------------ classify
def classify(sentence: str, *, role: str = "user") -> list[Statement]:
    """The memory one prose sentence states (at most one; often none). `role`: "user" or "assistant"."""
    return list(_classify(sentence, role))


@lru_cache(maxsize=2048)
def _classify(sentence: str, role: str) -> tuple[Statement, ...]:
    return tuple(_classified(sentence, role=role))


def _classified(sentence: str, *, role: str) -> list[Statement]:
    user = role == "user"
    # the user's polite request for a standing rule is the rule: "Could you never touch the generated files,
    # please?" is read (and kept) as "Never touch the generated files."
    s = tidy((standing_instruction(sentence) if user else None) or sentence)
    if not s or not usable(s) or PRONOUN_SUBJECT_RE.match(s):
        return []
    # the assistant telling its own steps states nothing ("Let me check …", "Now I'll …", "Reading X first"); a
    # step under way ("I'm switching the query to …", "Switching to X instead of Y: …") is at most a choice, and
    # only when it says why or what it is (text.mood); a user's terse "Using UTC everywhere." is an instruction
    told = None if user else narration(s)
    if told == "plan":
        return []
    if told == "step":
        said = [st for st in _classified_statement(s, sentence, user=user) if st.rule in ("decision", "rejected")]
        return said if said and (said[0].has_reason or _SPELLED_OUT_RE.search(s)) else []
    return _classified_statement(s, sentence, user=user)


# a choice told as a step that says what it is after a colon: "I'm switching the query to keyset pagination: the
# client passes the last row's created_at and id, …"
_SPELLED_OUT_RE = lazy_pattern(r":\s+(?:\S+\s+){4,}\S")


def _classified_statement(s: str, sentence: str, *, user: bool) -> list[Statement]:
    hypothetical = bool(HYPOTHETICAL_RE.search(main_clause(s)))
    if PREFERENCE_RE.match(s):
        return [Statement(s, "preference", "preference")] if user else []
    m = OBVIOUS_BUT_RE.search(s)
    if m and not PRONOUN_OBJECT_RE.match(m.group("y")):
        return [Statement(s, "rejected_alternative", "rejected", True)]  # "would be X, but …" is no hypothesis
    if hypothetical or GUESS_RE.search(s) or conjectures(s):
        return []
    reason = bool(REASON_RE.search(s))
    decision = stated_decision(s, user=user, reason=reason)
    if decision:
        return [decision]
    rejected = stated_rejection(s, user=user)
    if rejected:
        return [rejected]
    turned_down = NO_THING_WHY_RE.match(s) if user else None
    if turned_down and not PRONOUN_OBJECT_RE.match(turned_down.group("y")):
        return [Statement(s, "rejected_alternative", "rejected", True)]
    phrased = phrased_choice(s)
    if phrased:
        return [phrased]
    if states_an_observation(s):
        return [Statement(s, "fact", "observation")]  # what a value stands for, a file's encoding: not a rule
    if user and (
        RULE_HEADING_RE.search(s)
        or DEONTIC_RE.search(s)
        or SETTLED_RE.search(s)
        or CI_ENFORCES_RE.search(s)
        or NOT_THE_OTHER_RE.match(s)
        or FOLLOWS_PRACTICE_RE.match(s)
        or (names_a_format(s) and not relays_a_source(s))
    ):
        return [Statement(s, "convention", "convention", reason)]
    if _CAVEAT_RE.search(s):
        return [Statement(s, "gotcha", "gotcha", True)]
    if user and (_CONVENTION_RE.search(s) or (VERSION_RE.search(s) and CONSTRAINT_RE.search(s))):
        return [Statement(s, "convention", "convention", reason)]
    if user and terse_bounds(s) and not relays_a_source(s):
        return [Statement(s, "preference", "preference", reason)]
    if not user and _ASSISTANT_CONVENTION_RE.search(s):
        return [Statement(s, "convention", "convention", reason)]
    if user and re.match(r"^(?:keep|bear)\s+in\s+mind\b|^(?:remember|note)\s+that\b|^be\s+aware\s+that\b", s, re.I):
        return [Statement(s, "convention", "convention", reason)]
    factual = (
        PORT_RE.search(s)
        or ENV_VERSION_RE.search(s)
        or COMMAND_RE.search(s)
        or HOST_VERSION_RE.search(s)
        or WITHOUT_COMMAND_RE.search(s)
        or (LOCATION_RE.search(s) and (user or not FAILURE_TALK_RE.search(s)))
        or (user and ASIDE_RE.match(sentence) and GENERIC_VERSION_RE.search(s))
        or (user and SPEC_RE.match(s))
        or (user and MINE_RE.search(s) and GENERIC_VERSION_RE.search(s))
    )
    if not user and RESULT_NOW_RE.match(s):
        return []  # "The PDF now formats amounts with …": a change reported, not a fact
    talk = CODE_SPAN_RE.sub("", s)  # `ctest --output-on-failure` is a command, not failure talk
    if factual and not (reports_status(s) or tells_a_change(s)) and not (not user and FAILURE_TALK_RE.search(talk)):
        if VERSION_RE.search(s) and CONSTRAINT_RE.search(s):
            return [Statement(s, "convention", "convention", reason)]  # the assistant restating a constraint
        return [Statement(s, "fact", "fact")]
    if user and states_a_valued_rule(s) and not risky(s):
        # no phrasing above caught it: a behaviour asked for in general, with a value (a format, a default, a flag);
        # a last-resort reading never keeps text that would weaken security (often pasted, not the user's own rule)
        return [Statement(s, "convention", "convention", reason)]
    return []


_REASON_CLAUSE_RE = lazy_pattern(
    r"(?::\s|\s(?:because|since|so\s+that|given\s+that)\b|,\s*so\s|(?<=\w),\s*but\s+(?:it|that|this|they)\s)",
    re.IGNORECASE,
)


def main_clause(s: str) -> str:
    """The sentence before its reason ("… rather than SQLAlchemy: an ORM would be …"): a "would" in the
    reason does not make the choice hypothetical."""
    m = _REASON_CLAUSE_RE.search(s)
    return s[: m.start()] if m and m.start() > 10 else s


def is_consequence(raw_sentence: str) -> bool:
    """A sentence that follows from the one before it ("Ok, let's stay with sqlite3 then.", "So we use X.")."""
    s = " ".join(raw_sentence.split()).strip(" \"'\u201c\u201d.!")
    return bool(re.search(r"\bthen$", s, re.IGNORECASE) or re.match(r"^(?:\W*(?:ok(?:ay)?|alright|fine),?\s+)?so\b|"
                r"^in\s+that\s+case\b|^(?:ok(?:ay)?|alright|fine),?\s+then\b", s, re.IGNORECASE))  # fmt: skip
