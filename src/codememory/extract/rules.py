"""What one prose sentence states, if anything durable: a decision (what was chosen, with what it was chosen
over and why when the sentence says so), a rejected alternative, a convention or constraint, a preference, an
environment fact (version, port, command). Most sentences state none of these.

The rules are linguistic, not lists of words from one project:
- a decision is a choice verb with a first-person or imperative subject ("we decided", "I'll use X instead of Y
  because …", "let's stay with X", "going with X", "switching to X"); the assistant's own "I'll use X" counts only
  with a rejected option or a reason, since assistants narrate the tools they use for a step;
- a rejection is a negated choice ("don't add Y", "decided against Y") or a judgement of the option ("Y is
  overkill / too heavy / not worth it");
- a convention is a standing rule ("always", "never", "from now on", "don't …", "keep it dependency-free",
  "we use tabs") or a platform constraint ("CI runs Python 3.9, so no `X | None`");
- a fact is a version, port or command stated about the project, not narrated as the next step.
Questions, hypotheticals, open decisions and statements about a bare pronoun are never memories."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from codememory.core.lazy_pattern import lazy_pattern
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
from codememory.extract.phrasings import (
    GUESS_RE,
    INCAPABLE_RE,
    IT_IS_RE,
    NO_THING_WHY_RE,
    OBVIOUS_BUT_RE,
    PLACEMENT_RE,
    RULE_OUT_RE,
    SIZING_RE,
    SUBJECT_RE,
    TEMPTING_RE,
    TOPIC_CHOICE_RE,
    UNFIT_RE,
    VERDICT_RE,
)
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
from codememory.text.mood import asks, conjectures, logged, narration, standing_instruction


@dataclass(frozen=True)
class Statement:
    text: str
    category: str  # decision | rejected_alternative | convention | preference | fact
    rule: str  # decision | rejected | convention | preference | fact
    has_reason: bool = False


# ------------------------------------------------------------------------------------------ guards
_PRONOUN = (
    r"(?:it|that|this|these|those|them|they|one|ones|both|either|neither|whichever|yours|your\s+\w+|option\s*\w*|"
    r"the\s+(?:first|second|third|last|former|latter|other|above|below)(?:\s+\w+)?)"
)
PRONOUN_OBJECT_RE = lazy_pattern(
    rf"^\s*{_PRONOUN}\s*(?:[.,;!]|$|\s+(?:one|approach|option|instead|then|for now|too|as well)\b)", re.I
)
PRONOUN_SUBJECT_RE = lazy_pattern(
    r"^(?:it|that|this|these|those|they|he|she)\b(?!\s+(?:project|repo|repository|codebase|module|package|file|"
    r"function|class|service|app|library|team|api|endpoint|table|test))",
    re.IGNORECASE,
)
# A memory opening on a pronoun with its verb ("It is one more package …", "That's what the code does …") names
# nothing a later session could resolve.
UNRESOLVED_START_RE = lazy_pattern(
    r"^(?:TODO:\s*)?(?:it|that|this|these|those|they)(?:'s|'re|\s+(?:is|was|are|were|has|had|would|will|can|could|"
    r"should|only|also|just|does|did|means|makes|works|needs|breaks|fails|keeps))\b",
    re.IGNORECASE,
)
# "It's `to_datetime(date_format=…)`: that keyword …" names its subject right after the pronoun
_NAMED_AFTER_RE = lazy_pattern(
    r"^(?:it|that|this)(?:'s|\s+is|\s+was)\s+(?=`[^`]+`\s*[:,(\u2014\u2013-])", re.IGNORECASE
)


def named_subject(text: str) -> str:
    """`text` without an opening "It's" that a code span right after it names."""
    return _NAMED_AFTER_RE.sub("", text, count=1)


HYPOTHETICAL_RE = lazy_pattern(
    r"^(?:if|what if|suppose|supposing|imagine|assuming|in case|unless|whether|perhaps|maybe|once)\b"
    r"|\b(?:could|might|maybe|perhaps|probably|possibly|not sure|unsure|wonder(?:ing)?|hypothetical(?:ly)?|"
    r"alternatively|in theory|what if|or should|should\s+(?:we|i)|either way|"
    r"would(?!\s+(?:rather|prefer|like|be\s+(?:overkill|too|unnecessary|a\s+dead)))|"
    r"was thinking|thinking about|considering|(?:one|another)\s+option|(?<!not\s)an\s+option|"
    r"for\s+example|e\.g\.|such\s+as)\b",
    re.IGNORECASE,
)
OPEN_DECISION_RE = lazy_pattern(
    r"\b(?:haven'?t|have not|hasn'?t|didn'?t|did not|not yet|undecided|not decided|still deciding|"
    r"not going (?:to|with)|won'?t|wasn'?t)\b",
    re.IGNORECASE,
)
_NARRATION_RE = lazy_pattern(
    r"^(?:let\s+me|i(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to)\s+(?:now\s+)?(?:run|check|read|look|"
    r"start|open|try|create|add|write|update|fix|verify|test|search|install|first|then|also)|now\s+i|next,?\s+i|"
    r"first,?\s+i|running|checking|reading|looking|done|here'?s|here\s+is|i(?:'ve|\s+have)\s+(?:added|updated|"
    r"created|written|fixed|run|made|changed|implemented|refactored))\b",
    re.IGNORECASE,
)


def usable(sentence: str) -> bool:
    words = sentence.split()
    return 3 <= len(words) <= 60 and len(sentence) <= 400 and not asks(sentence) and not logged(sentence)


# -------------------------------------------------------------------------------------- decisions
_REASON_RE = lazy_pattern(
    r"\b(?:because|since|so\s+that|given\s+that|due\s+to|as\s+(?:it|they|the|we|this|that)\b|which\s+(?:keeps|"
    r"avoids|means)|to\s+(?:keep|avoid|stay|remain)\b)|,\s*so\s+(?!far\b)",
    re.IGNORECASE,
)
REASON_RE = _REASON_RE
_CHOICE_VERB = (
    r"(?:use|using|go\s+with|going\s+with|went\s+with|switch(?:ed|ing)?\s+to|chose|choose|choosing|pick(?:ed|ing)?|"
    r"migrat(?:e|ed|ing)\s+to|mov(?:e|ed|ing)\s+to|stick(?:ing)?\s+with|stay(?:ing)?\s+with|keep(?:ing)?\s+using|"
    r"opt(?:ed|ing)?\s+for|settl(?:e|ed|ing)\s+on|adopt(?:ed|ing)?|rely\s+on|store|implement|write|build|"
    # "I'm rewriting it with window functions instead", "replacing it with a systemd timer"
    r"(?:(?:re)?writ(?:e|ing)|replac(?:e|ing))\s+(?:it|this|that|them|the\s+[\w-]+(?:\s+[\w-]+)?)\s+(?:with|using))"
)
_CHOICE_VERBS_RE = lazy_pattern(rf"\b{_CHOICE_VERB}\b", re.IGNORECASE)
# "X instead of Y", "X rather than Y", "X over Y", "X, not Y": the rejected option is a noun phrase, or a gerund of
# taking something on ("rather than adding python-slugify"), never a step ("instead of guessing").
_CONTRAST_RE = lazy_pattern(
    r"(?:\binstead\s+of|\brather\s+than|\bover|,\s*not)\s+(?!(?:guessing|reading|checking|running|looking|trying|"
    r"waiting|doing|writing|asking|editing|opening|searching|hard-?coding\s+it|that|this|it)\b)(?P<y>[^,.;!?]{2,80})",
    re.IGNORECASE,
)
_INSTEAD_END_RE = lazy_pattern(r"\s(?P<y>instead)\s*(?:[:.;,!\u2014\u2013]|$)", re.IGNORECASE)
_CONTRAST_LEAD_RE = lazy_pattern(
    r"^(?:instead\s+of|rather\s+than)\s+(?!(?:guessing|reading|checking|running|looking|trying|waiting|doing|"
    r"asking|editing|opening|searching)\b)[^,]+,\s*(?:we|let'?s|i|use|just|go)\b",
    re.IGNORECASE,
)
_EXPLICIT_DECISION_RE = lazy_pattern(
    r"\b(?:(?:we|i)(?:'ve|\s+have)?\s+(?:finally\s+)?decided\s+(?:to|on|that)|decided\s+to\s+go\s+with|"
    r"(?:the\s+)?decision(?:\s+is)?\s*:|we(?:'ve|\s+have)?\s+agreed\s+(?:to|on|that)|agreed\s*:|"
    r"(?:we|i)(?:'ve|\s+have)?\s+(?:settled\s+on|opted\s+for|chosen|chose|picked|went\s+with|gone\s+with)|"
    r"(?:i'?m|we'?re|i\s+am|we\s+are)\s+(?:going|gonna)\s+(?:to\s+)?(?:go\s+)?with|"
    r"(?:^|,\s*)going\s+with|(?:i'?m|we'?re|i\s+am|we\s+are)\s+switching\s+(?:\w+\s+){0,3}?to|(?:^|,\s*)switching\s+to|"
    r"(?:we|i)\s+(?:switched|moved|migrated)\s+(?:\w+\s+)?to)\s+(?P<x>[^.;!?]+)",
    re.IGNORECASE,
)
_LETS_RE = lazy_pattern(
    r"\b(?:let'?s|let\s+us|we(?:'ll|\s+will|\s+should|\s+must|\s+need\s+to)|go)\s+(?:just\s+)?(?:keep\s+)?"
    r"(?:use|go\s+with|stick\s+with|stay\s+with|switch\s+(?:\w+\s+){0,3}?to|keep\s+using|move\s+to|migrate\s+to|"
    r"adopt|pick|choose)\s+(?P<x>[^.;!?]+)",
    re.IGNORECASE,
)
_IMPERATIVE_USE_RE = lazy_pattern(
    r"^(?:just\s+)?(?:use|go\s+with|stick\s+with|stay\s+with|switch\s+to|keep\s+using)\s+(?P<x>[^.;!?]+)"
    # "Move money to int64 cents, floats and money don't mix.": a change of approach with why, not an errand
    r"|^(?:(?:and|so|then)\s+)?(?:move|switch|migrate|convert|change)\s+(?:the\s+|our\s+|all\s+)?[\w-]+(?:\s+[\w-]+)?\s+"
    r"(?:to|over\s+to|into)\s+(?P<x2>[^,.;!?]+),\s*(?!(?:then|and\s+then|after\s+that|please|thanks)\b)\w+[^.;!?]*\s\w+",
    re.IGNORECASE,
)
_FIRST_PERSON_CHOICE_RE = lazy_pattern(
    rf"\b(?:i|we)(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to|'re\s+going\s+to|\s+are\s+going\s+to|'d|'m|\s+am|'re|"
    rf"\s+are)?\s+"
    rf"(?:just\s+)?(?:\w+(?:\s+[\w.@/'-]+){{1,4}}\s+and\s+)?{_CHOICE_VERB}\s+(?P<x>[^.;!?]+)",
    re.IGNORECASE,
)
# an instruction: a verb, then what it acts on ("Lock the class row instead", "Cache each page instead")
_IMPERATIVE_OBJECT_RE = lazy_pattern(
    r"^(?:(?:ok(?:ay)?|so|then|just|hm+|no)[,.!]?\s+)*(?!(?:i|we|you|it|they|he|she|this|that|there|what|why|how|"
    r"which|who|when|where|is|are|was|were|do|does|did|can|could|should|would|will)\b)[a-z]+\s+"
    r"(?:the|a|an|each|every|all|our|my|its|their)\s",
    re.IGNORECASE,
)
_STEP_RE = lazy_pattern(
    r"^\S+(?:\s+\S+){0,3}\s+to\s+(?:find|see|check|look|read|search|get|inspect|debug|print|list)\b"
)

# -------------------------------------------------------------------------------------- rejections
_JUDGEMENT = (
    r"(?:overkill|too\s+(?:heavy|slow|big|much|complex|complicated|fragile|risky|new|old|expensive)|"
    r"not\s+worth(?:\s+it)?|unnecessary|not\s+needed|not\s+an\s+option|ruled\s+out|a\s+dead\s+end|rejected|"
    r"out\s+of\s+the\s+question|off\s+the\s+table|a\s+non-?starter|not\s+allowed|banned|deprecated\s+here|"
    r"the\s+wrong\s+(?:signal|choice|tool|fit|metric|approach|layer|place|trigger)|a\s+(?:bad|poor)\s+fit|"
    r"not\s+a\s+(?:good\s+)?fit)"
)
_REJECT_RE = lazy_pattern(
    r"(?:^|\b(?:we|you|please|so|and|but|i)\s+)(?:don'?t|do\s+not|stop|no\s+longer)\s+(?:want\s+(?:to\s+)?)?"
    r"(?:use|using|add|adding|introduce|pull\s+in|depend\s+on|rely\s+on|go\s+with|need|install)\s+(?P<y>[^,.;!?]+)"
    r"|(?:^|\b(?:we|you|please|should|must|let'?s|always|i)\s+)avoid(?:ed)?\s+(?P<y2>[^,.;!?]+)"
    r"|\b(?:we|i)\s+(?:rejected|ruled\s+out|dropped|abandoned|gave\s+up\s+on|decided\s+against)\s+(?P<y3>[^.;!?]+)"
    rf"|^(?:(?:hmm+|well|ok(?:ay)?|honestly|actually|nah)[,!]?\s+)?(?P<y4>(?:(?!\b(?:because|since|but|and|so|if|when|as)\b)[^,.;!?]){{2,50}}?)\s+(?:is|was|would\s+be|seems|feels|looks)\s+(?:\w+\s+)?{_JUDGEMENT}"
    r"|\bdecided\s+(?:not\s+to\s+(?:use|add|adopt|go\s+with)|against(?:\s+using)?)\s+(?P<y5>[^,.;!?]+)"
    r"|\b(?:i|we)\s+(?:considered|looked\s+at|looked\s+into|had\s+a\s+look\s+at|checked\s+out|evaluated|tried|"
    r"thought\s+(?:about|of)|weighed|toyed\s+with)\s+(?P<y7>(?!(?:running|reading|checking|restarting|rerunning|re-running|debugging|looking|searching|the\s+(?:logs?|output|file|error|tests?|docs?))\b)[^,;]{2,60}?),?\s+but\s+\w+"
    r"|^(?:(?:and|but|also|so)\s+)?(?:(?:yes|yeah|yep|ok(?:ay)?|right|and)[,!]?\s+)?no\s+(?P<y6>(?!(?:worries|problem|"
    r"thanks|idea|need|rush|way|luck|change|changes|issue|issues|errors?|failures?|tests?|output|more|one|longer|"
    r"matter|row|rows|data|time|doubt)\b)[\w.+/-]+(?:\s+[\w.+/-]+){0,2})\s*(?:,?\s*please)?(?:[.!]?$|(?<=please),\s+(?=\w))"
    # the user taking back what was chosen: "Scratch the per-line VAT.", "forget the redis cache, …"
    r"|^(?:(?:ok(?:ay)?|so|hmm+|actually)[,!]?\s+)?(?:scratch|scrap|ditch|forget(?:\s+about)?)\s+(?:the\s+|that\s+|our\s+)?"
    r"(?P<y9>(?!(?:it|that|this|them)\b)[\w./-]+(?:[\s-]+[\w./-]+){0,4})"
    # the assistant turning an option down with its reason: "I won't pull in a CSV library like CsvHelper: …"
    r"|\b(?:i|we)\s+(?:won'?t|will\s+not|wouldn'?t|would\s+not)\s+(?:use|add|pull\s+in|bring\s+in|introduce|depend\s+on|"
    r"go\s+with|bother\s+with)\s+(?P<y8>[^,.;:!?]{2,60})\s*(?:[:;\u2014\u2013]|,?\s+(?:because|since|as)\b)",
    re.IGNORECASE,
)

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

# ------------------------------------------------------------------- phrasings without a choice verb
# (the patterns are in extract/phrasings.py)

# "The usual random_password resource would leave …": after a decision, the alternative it was chosen over.
COUNTERFACTUAL_RE = lazy_pattern(
    r"^(?:the\s+|a\s+|an\s+)?(?:usual|default|obvious|standard|common|naive|simpler|plain|classic|traditional|"
    r"built-in|alternative|other)\s+[^,]{2,60}?\s+(?:would|could)\s+(?!be\s+(?:fine|better|great|ideal|nice|good)\b)\w+",
    re.IGNORECASE,
)
# A caveat: "no need for a GradScaler with bf16; that's only for fp16".
_CAVEAT_RE = lazy_pattern(
    r"\b(?:no\s+need\s+for|(?:doesn'?t|don'?t)\s+need)\s+(?:a\s+|an\s+|the\s+)?[\w.-]+[^.]*\b(?:only\s+(?:needed\s+|"
    r"required\s+)?(?:for|with|when|on)|only\s+(?:matters|applies))\s+(?!(?:now|the\s+moment|testing|this\s+test)\b)\w+",
    re.IGNORECASE,
)


def _phrased_choice(s: str) -> Statement | None:
    """Decisions and rejections said without a choice verb (see the patterns above)."""
    reason = bool(_REASON_RE.search(s))
    m = IT_IS_RE.match(s)
    if m and len(m.group("x").split()) <= 5 and not PRONOUN_OBJECT_RE.match(m.group("x")):
        return Statement(s, "decision", "decision", reason)
    m = TOPIC_CHOICE_RE.match(s)
    if m and not PRONOUN_OBJECT_RE.match(m.group("x")):
        return Statement(s, "decision", "decision", reason)
    if TEMPTING_RE.match(s):
        return Statement(s, "rejected_alternative", "rejected", True)
    if RULE_OUT_RE.search(s):
        m = SUBJECT_RE.match(s)
        if m and not PRONOUN_SUBJECT_RE.match(m.group("y")) and not PRONOUN_OBJECT_RE.match(m.group("y")):
            return Statement(s, "rejected_alternative", "rejected", True)
    m = INCAPABLE_RE.search(s) or UNFIT_RE.match(s)
    if m and not PRONOUN_OBJECT_RE.match(m.group("y")):
        return Statement(s, "rejected_alternative", "rejected", True)
    m = VERDICT_RE.match(s)
    if m and not PRONOUN_OBJECT_RE.match(m.group("x")):
        return Statement(s, "decision", "decision", reason or ":" in m.group("x"))
    m = SIZING_RE.match(s)
    if m and not PRONOUN_OBJECT_RE.match(m.group("x")):
        return Statement(s, "decision", "decision", True)
    if PLACEMENT_RE.search(s):
        return Statement(s, "decision", "decision", reason)
    return None


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
    reason = bool(_REASON_RE.search(s))
    decision = _decision(s, user=user, reason=reason)
    if decision:
        return [decision]
    rejected = _rejection(s, user=user)
    if rejected:
        return [rejected]
    turned_down = NO_THING_WHY_RE.match(s) if user else None
    if turned_down and not PRONOUN_OBJECT_RE.match(turned_down.group("y")):
        return [Statement(s, "rejected_alternative", "rejected", True)]
    phrased = _phrased_choice(s)
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
    if factual and not _NARRATION_RE.match(s) and not (not user and FAILURE_TALK_RE.search(talk)):
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


def _decision(s: str, *, user: bool, reason: bool) -> Statement | None:
    if OPEN_DECISION_RE.search(s):
        return None
    contrast = _CONTRAST_RE.search(s) if _CHOICE_VERBS_RE.search(s) else None
    contrast = contrast or (_INSTEAD_END_RE.search(s) if _CHOICE_VERBS_RE.search(s) else None)
    lead = _CONTRAST_LEAD_RE.match(s)
    m = _EXPLICIT_DECISION_RE.search(s)
    if m and not PRONOUN_OBJECT_RE.match(m.group("x")):
        if re.match(r"(?:always|never)\b", m.group("x"), re.IGNORECASE):
            return Statement(s, "convention", "convention", reason)  # "we decided: always …"
        return Statement(s, "decision", "decision", reason or bool(contrast))
    if user or reason or contrast:
        m = _LETS_RE.search(s) if not user else (_LETS_RE.search(s) or _IMPERATIVE_USE_RE.match(s))
        chosen = next((g for g in m.groupdict().values() if g), "") if m else ""
        if m and not PRONOUN_OBJECT_RE.match(chosen):
            if _STEP_RE.match(chosen) and not (contrast or reason):
                return None  # "let's use grep to find the bug": a tool for a step
            return Statement(s, "decision", "decision", reason or bool(contrast))
    m = _FIRST_PERSON_CHOICE_RE.search(s)
    spelled_out = bool(m) and bool(re.search(r"\w\s*:\s+\w+\s+\w+", m.group("x") if m else ""))
    if m and not PRONOUN_OBJECT_RE.match(m.group("x")) and (contrast or lead or (reason and not user) or spelled_out):
        if contrast and PRONOUN_OBJECT_RE.match(contrast.group("y")):
            return None
        return Statement(s, "decision", "decision", True)
    if user and (contrast or lead) and re.match(r"^(?:use|go\s+with|pick|choose)\b", s, re.IGNORECASE):
        return Statement(s, "decision", "decision", True)
    if user and _INSTEAD_END_RE.search(s) and _IMPERATIVE_OBJECT_RE.match(s):
        return Statement(s, "decision", "decision", True)  # "Lock the class row instead, PESSIMISTIC_WRITE …"
    return None


def _rejection(s: str, *, user: bool) -> Statement | None:
    m = _REJECT_RE.search(s)
    if not m:
        return None
    target = next((g for g in m.group("y", "y2", "y3", "y4", "y5", "y6", "y7", "y8", "y9") if g), "")
    if not target or PRONOUN_OBJECT_RE.match(target) or PRONOUN_SUBJECT_RE.match(target):
        return None
    if not user and not (m.group("y3") or m.group("y4") or m.group("y5") or m.group("y7") or m.group("y8")):
        return None  # "don't use the old helper here": the assistant talking to itself
    return Statement(s, "rejected_alternative", "rejected", bool(_REASON_RE.search(s)))


def is_reason(sentence: str) -> bool:
    """A sentence that gives the reason for the one before it ("Because …", "That way …", "It keeps …")."""
    return bool(_REASON_LEAD_RE.match(tidy(sentence)))


_REASON_LEAD_RE = lazy_pattern(
    r"^(?:because|since|that\s+way|this\s+way|otherwise|the\s+reason\s+is|"
    r"it(?:'s|\s+is)?\s+(?:keeps|avoids|means|adds|pulls|needs|would|doesn'?t|does\s+not|only|has|is\s+(?:faster|"
    r"simpler|smaller|lighter|overkill|too))|(?:that|this)\s+(?:keeps|avoids|means)|"
    r"the\s+(?:project|codebase|repo|app|package|library)\s+(?:has|is|must|needs|should|uses|ships|targets)|"
    rf"[\w.+-]+(?:\s+[\w.+-]+)?\s+(?:is|was|would\s+be)\s+(?:\w+\s+)?{_JUDGEMENT}|"
    r"we\s+(?:don'?t|do\s+not)\s+(?:need|want))\b",
    re.IGNORECASE,
)


def is_consequence(raw_sentence: str) -> bool:
    """A sentence that follows from the one before it ("Ok, let's stay with sqlite3 then.", "So we use X.")."""
    s = " ".join(raw_sentence.split()).strip(" \"'\u201c\u201d.!")
    return bool(re.search(r"\bthen$", s, re.IGNORECASE) or re.match(r"^(?:\W*(?:ok(?:ay)?|alright|fine),?\s+)?so\b|"
                r"^in\s+that\s+case\b|^(?:ok(?:ay)?|alright|fine),?\s+then\b", s, re.IGNORECASE))  # fmt: skip
