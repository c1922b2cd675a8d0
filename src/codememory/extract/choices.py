"""A choice one sentence states: a decision (what was chosen, with what it was chosen over and why when the sentence
says so) or a rejected alternative, read from the sentence's grammar, not from one project's words:
- a decision is a choice verb with a first-person or imperative subject ("we decided", "I'll use X instead of Y
  because …", "let's stay with X", "going with X", "switching to X"); the assistant's own "I'll use X" counts only
  with a rejected option or a reason, since assistants narrate the tools they use for a step;
- a rejection is a negated choice ("don't add Y", "decided against Y") or a judgement of the option ("Y is
  overkill / too heavy / not worth it");
- a choice said without a choice verb ("X it is", "Y was tempting, but …") uses the patterns of `phrasings`.
`rules.classify` asks here first, then for conventions, preferences and facts."""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import Statement
from codememory.extract.clean import tidy
from codememory.extract.phrasings import (
    INCAPABLE_RE,
    IT_IS_RE,
    PLACEMENT_RE,
    RULE_OUT_RE,
    SIZING_RE,
    SUBJECT_RE,
    TEMPTING_RE,
    TOPIC_CHOICE_RE,
    UNFIT_RE,
    VERDICT_RE,
)
from codememory.extract.unresolved_pronouns import PRONOUN_OBJECT_RE, PRONOUN_SUBJECT_RE

OPEN_DECISION_RE = lazy_pattern(
    r"\b(?:haven'?t|have not|hasn'?t|didn'?t|did not|not yet|undecided|not decided|still deciding|"
    r"not going (?:to|with)|won'?t|wasn'?t)\b",
    re.IGNORECASE,
)


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
_TOOL_FOR_A_STEP_RE = lazy_pattern(
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


# ------------------------------------------------------------------- phrasings without a choice verb
# (the patterns are in extract/phrasings.py)

# "The usual random_password resource would leave …": after a decision, the alternative it was chosen over.
COUNTERFACTUAL_RE = lazy_pattern(
    r"^(?:the\s+|a\s+|an\s+)?(?:usual|default|obvious|standard|common|naive|simpler|plain|classic|traditional|"
    r"built-in|alternative|other)\s+[^,]{2,60}?\s+(?:would|could)\s+(?!be\s+(?:fine|better|great|ideal|nice|good)\b)\w+",
    re.IGNORECASE,
)


def phrased_choice(s: str) -> Statement | None:
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


def stated_decision(s: str, *, user: bool, reason: bool) -> Statement | None:
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
            if _TOOL_FOR_A_STEP_RE.match(chosen) and not (contrast or reason):
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


def stated_rejection(s: str, *, user: bool) -> Statement | None:
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
