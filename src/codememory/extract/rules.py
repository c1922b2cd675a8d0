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

from codememory.extract.clean import tidy
from codememory.extract.observations import states_an_observation
from codememory.extract.phrasings import (
    GUESS_RE,
    INCAPABLE_RE,
    IT_IS_RE,
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
from codememory.extract.speakers import relays_a_source


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
PRONOUN_OBJECT_RE = re.compile(
    rf"^\s*{_PRONOUN}\s*(?:[.,;!]|$|\s+(?:one|approach|option|instead|then|for now|too|as well)\b)", re.I
)
PRONOUN_SUBJECT_RE = re.compile(
    r"^(?:it|that|this|these|those|they|he|she)\b(?!\s+(?:project|repo|repository|codebase|module|package|file|"
    r"function|class|service|app|library|team|api|endpoint|table|test))",
    re.IGNORECASE,
)
# A memory opening on a pronoun with its verb ("It is one more package …", "That's what the code does …") names
# nothing a later session could resolve.
UNRESOLVED_START_RE = re.compile(
    r"^(?:TODO:\s*)?(?:it|that|this|these|those|they)(?:'s|'re|\s+(?:is|was|are|were|has|had|would|will|can|could|"
    r"should|only|also|just|does|did|means|makes|works|needs|breaks|fails|keeps))\b",
    re.IGNORECASE,
)
# "It's `to_datetime(date_format=…)`: that keyword …" names its subject right after the pronoun
_NAMED_AFTER_RE = re.compile(r"^(?:it|that|this)(?:'s|\s+is|\s+was)\s+(?=`[^`]+`\s*[:,(\u2014\u2013-])", re.IGNORECASE)


def named_subject(text: str) -> str:
    """`text` without an opening "It's" that a code span right after it names."""
    return _NAMED_AFTER_RE.sub("", text, count=1)


_QUESTION_START_RE = re.compile(
    r"^(?:what|why|how|which|who|where|when|should|shall|could|can|would|will|do|does|did|is|are|was|were|"
    r"have|has|any\s+(?:idea|thoughts))\b[^.!]*$",
    re.IGNORECASE,
)
HYPOTHETICAL_RE = re.compile(
    r"^(?:if|what if|suppose|supposing|imagine|assuming|in case|unless|whether|perhaps|maybe|once)\b"
    r"|\b(?:could|might|maybe|perhaps|probably|possibly|not sure|unsure|wonder(?:ing)?|hypothetical(?:ly)?|"
    r"alternatively|in theory|what if|or should|should\s+(?:we|i)|either way|"
    r"would(?!\s+(?:rather|prefer|like|be\s+(?:overkill|too|unnecessary|a\s+dead)))|"
    r"was thinking|thinking about|considering|(?:one|another)\s+option|(?<!not\s)an\s+option|"
    r"for\s+example|e\.g\.|such\s+as)\b",
    re.IGNORECASE,
)
OPEN_DECISION_RE = re.compile(
    r"\b(?:haven'?t|have not|hasn'?t|didn'?t|did not|not yet|undecided|not decided|still deciding|"
    r"not going (?:to|with)|won'?t|wasn'?t)\b",
    re.IGNORECASE,
)
_NARRATION_RE = re.compile(
    r"^(?:let\s+me|i(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to)\s+(?:now\s+)?(?:run|check|read|look|"
    r"start|open|try|create|add|write|update|fix|verify|test|search|install|first|then|also)|now\s+i|next,?\s+i|"
    r"first,?\s+i|running|checking|reading|looking|done|here'?s|here\s+is|i(?:'ve|\s+have)\s+(?:added|updated|"
    r"created|written|fixed|run|made|changed|implemented|refactored))\b",
    re.IGNORECASE,
)


def usable(sentence: str) -> bool:
    words = sentence.split()
    return (
        3 <= len(words) <= 60
        and len(sentence) <= 400
        and not sentence.rstrip(" .").endswith("?")
        and not _QUESTION_START_RE.match(sentence)
    )


# -------------------------------------------------------------------------------------- decisions
_REASON_RE = re.compile(
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
_CHOICE_VERBS_RE = re.compile(rf"\b{_CHOICE_VERB}\b", re.IGNORECASE)
# "X instead of Y", "X rather than Y", "X over Y", "X, not Y": the rejected option is a noun phrase, or a gerund of
# taking something on ("rather than adding python-slugify"), never a step ("instead of guessing").
_CONTRAST_RE = re.compile(
    r"(?:\binstead\s+of|\brather\s+than|\bover|,\s*not)\s+(?!(?:guessing|reading|checking|running|looking|trying|"
    r"waiting|doing|writing|asking|editing|opening|searching|hard-?coding\s+it|that|this|it)\b)(?P<y>[^,.;!?]{2,80})",
    re.IGNORECASE,
)
_INSTEAD_END_RE = re.compile(r"\s(?P<y>instead)\s*(?:[:.;,!\u2014\u2013]|$)", re.IGNORECASE)
_CONTRAST_LEAD_RE = re.compile(
    r"^(?:instead\s+of|rather\s+than)\s+(?!(?:guessing|reading|checking|running|looking|trying|waiting|doing|"
    r"asking|editing|opening|searching)\b)[^,]+,\s*(?:we|let'?s|i|use|just|go)\b",
    re.IGNORECASE,
)
_EXPLICIT_DECISION_RE = re.compile(
    r"\b(?:(?:we|i)(?:'ve|\s+have)?\s+(?:finally\s+)?decided\s+(?:to|on|that)|decided\s+to\s+go\s+with|"
    r"(?:the\s+)?decision(?:\s+is)?\s*:|we(?:'ve|\s+have)?\s+agreed\s+(?:to|on|that)|agreed\s*:|"
    r"(?:we|i)(?:'ve|\s+have)?\s+(?:settled\s+on|opted\s+for|chosen|chose|picked|went\s+with|gone\s+with)|"
    r"(?:i'?m|we'?re|i\s+am|we\s+are)\s+(?:going|gonna)\s+(?:to\s+)?(?:go\s+)?with|"
    r"(?:^|,\s*)going\s+with|(?:i'?m|we'?re|i\s+am|we\s+are)\s+switching\s+(?:\w+\s+){0,3}?to|(?:^|,\s*)switching\s+to|"
    r"(?:we|i)\s+(?:switched|moved|migrated)\s+(?:\w+\s+)?to)\s+(?P<x>[^.;!?]+)",
    re.IGNORECASE,
)
_LETS_RE = re.compile(
    r"\b(?:let'?s|let\s+us|we(?:'ll|\s+will|\s+should|\s+must|\s+need\s+to)|go)\s+(?:just\s+)?(?:keep\s+)?"
    r"(?:use|go\s+with|stick\s+with|stay\s+with|switch\s+(?:\w+\s+){0,3}?to|keep\s+using|move\s+to|migrate\s+to|"
    r"adopt|pick|choose)\s+(?P<x>[^.;!?]+)",
    re.IGNORECASE,
)
_IMPERATIVE_USE_RE = re.compile(
    r"^(?:just\s+)?(?:use|go\s+with|stick\s+with|stay\s+with|switch\s+to|keep\s+using)\s+(?P<x>[^.;!?]+)"
    # "Move money to int64 cents, floats and money don't mix.": a change of approach with why, not an errand
    r"|^(?:(?:and|so|then)\s+)?(?:move|switch|migrate|convert|change)\s+(?:the\s+|our\s+|all\s+)?[\w-]+(?:\s+[\w-]+)?\s+"
    r"(?:to|over\s+to|into)\s+(?P<x2>[^,.;!?]+),\s*(?!(?:then|and\s+then|after\s+that|please|thanks)\b)\w+[^.;!?]*\s\w+",
    re.IGNORECASE,
)
_FIRST_PERSON_CHOICE_RE = re.compile(
    rf"\b(?:i|we)(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to|'re\s+going\s+to|\s+are\s+going\s+to|'d|'m|\s+am|'re|"
    rf"\s+are)?\s+"
    rf"(?:just\s+)?(?:\w+(?:\s+[\w.@/'-]+){{1,4}}\s+and\s+)?{_CHOICE_VERB}\s+(?P<x>[^.;!?]+)",
    re.IGNORECASE,
)
# an instruction: a verb, then what it acts on ("Lock the class row instead", "Cache each page instead")
_IMPERATIVE_OBJECT_RE = re.compile(
    r"^(?:(?:ok(?:ay)?|so|then|just|hm+|no)[,.!]?\s+)*(?!(?:i|we|you|it|they|he|she|this|that|there|what|why|how|"
    r"which|who|when|where|is|are|was|were|do|does|did|can|could|should|would|will)\b)[a-z]+\s+"
    r"(?:the|a|an|each|every|all|our|my|its|their)\s",
    re.IGNORECASE,
)
_STEP_RE = re.compile(r"^\S+(?:\s+\S+){0,3}\s+to\s+(?:find|see|check|look|read|search|get|inspect|debug|print|list)\b")

# -------------------------------------------------------------------------------------- rejections
_JUDGEMENT = (
    r"(?:overkill|too\s+(?:heavy|slow|big|much|complex|complicated|fragile|risky|new|old|expensive)|"
    r"not\s+worth(?:\s+it)?|unnecessary|not\s+needed|not\s+an\s+option|ruled\s+out|a\s+dead\s+end|rejected|"
    r"out\s+of\s+the\s+question|off\s+the\s+table|a\s+non-?starter|not\s+allowed|banned|deprecated\s+here|"
    r"the\s+wrong\s+(?:signal|choice|tool|fit|metric|approach|layer|place|trigger)|a\s+(?:bad|poor)\s+fit|"
    r"not\s+a\s+(?:good\s+)?fit)"
)
_REJECT_RE = re.compile(
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
_CONVENTION_RE = re.compile(
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
_PLATFORM = (
    r"(?:python|node(?:\.?js)?|go|java|ruby|rust|php|deno|bun|postgres(?:ql)?|mysql|sqlite|redis|ubuntu|debian|"
    r"alpine|windows|macos|linux|ios|android|typescript|react|django|flask|rails|\.net|jdk|gcc|clang|es\d{4}|"
    r"ecmascript|pg|msrv|rustc)"
)
_VERSION_RE = re.compile(rf"\b{_PLATFORM}\s*v?\d+(?:\.\d+)*\b|\b{_PLATFORM}\b", re.IGNORECASE)
_CONSTRAINT_RE = re.compile(
    r",?\s*so\s+(?:no|don'?t|do\s+not|avoid|never|we\s+(?:can'?t|cannot|must|need|have)|nothing|only)\b"
    r"|\b(?:must|has\s+to|have\s+to|needs\s+to|need\s+to)\s+(?:support|run\s+on|work\s+on|be\s+compatible|stay\s+on|"
    r"target)\b|\b(?:can'?t|cannot|can\s+not)\s+use\b|\b(?:only|still)\s+(?:supports?|runs?)\b|\bstuck\s+on\b",
    re.IGNORECASE,
)
_ASSISTANT_CONVENTION_RE = re.compile(
    r"\b(?:the|this|our)\s+(?:project'?s?|repo(?:sitory)?'?s?|codebase'?s?)\s+convention\s+is\b|\bby\s+convention\b",
    re.IGNORECASE,
)
PREFERENCE_RE = re.compile(
    r"^(?:personally,?\s+)?i(?:'d|\s+would)?\s+(?:really\s+|much\s+)?(?:prefer|rather|like\s+it\s+when|like\s+to|"
    r"always\s+want|want\s+you\s+to\s+always|want\s+you\s+to\s+never|hate\s+it\s+when|don'?t\s+like)\b"
    r"|^my\s+preference\s+is\b",
    re.IGNORECASE,
)

# What the user wants of the thing itself, said as a terse list with a bound in it (the user's only): "sfx only, no
# music", "sheets: a4 landscape, 24h, no colour — printer is b/w laser", "so please no colours and none of those
# line characters". Small talk is no bound ("no worries", "no rush", "coffee only").
_NOT_A_BOUND = r"(?!(?:worries|rush|problem|problems|idea|way|luck|doubt|kidding|joke|pressure|stress|clue|need|one)\b)"
_ITEM = r"[\w/.+-]+(?:\s+[\w/.+-]+){0,2}"
# a label that names where a line came from, not what the user wants: "error: python only, no rust" is a pasted line
_NOT_A_SOURCE = (
    r"(?!(?:error|warning|warn|info|debug|fatal|notice|hint|log|output|stdout|stderr|exception|readme|docs?|faq|page)"
    r"\s*:)"
)
TERSE_BOUNDS_RE = re.compile(
    rf"^(?!(?:ok|okay|k|yes|yeah|yep|sure|thanks|thank|great|cool|fine|good|nice|perfect|right|well|hi|hey)\b)"
    rf"(?:and\s+|but\s+|also\s+)?(?:{_NOT_A_SOURCE}[\w-]+(?:\s+[\w-]+)?:\s*)?"
    rf"(?:{_ITEM}\s+only|only\s+{_ITEM}|no\s+{_NOT_A_BOUND}{_ITEM}|{_ITEM})"
    rf"(?:\s*,\s*(?:{_ITEM}\s+only|only\s+{_ITEM}|no\s+{_NOT_A_BOUND}{_ITEM}|{_ITEM}))*"
    rf"\s*,\s*(?:no\s+{_NOT_A_BOUND}[\w/.+-]+|{_ITEM}\s+only)\b"
    rf"|^(?:and\s+|but\s+)?{_ITEM}\s+only\s*,\s*no\s+{_NOT_A_BOUND}[\w-]+"
    rf"|\bplease\s+no\s+{_NOT_A_BOUND}[\w-]+(?:\s+[\w-]+)?\s*(?:,|\s+and\s+(?:no|none)\b|\s+or\s+)",
    re.IGNORECASE,
)
# A terse list can also say what happened rather than what is wanted: "checked the logs, no errors", "deployed to
# staging, no issues so far", "ran it again, no difference". A report starts with what was done (a verb in the past
# with what it was done to) or ends on how things stand so far; it bounds nothing.
_TERSE_REPORT_RE = re.compile(
    r"^(?:and\s+|but\s+|also\s+|so\s+)?(?:(?:re)?(?:ran|tried|got|saw|did|went|made|found|gave|took)\s"
    r"|\w+ed\s+(?:it|them|this|that|the|a|an|my|our|again|locally|everything|all|both|twice)\b)"
    r"|\bno\s+[\w-]+(?:\s+[\w-]+)?\s+(?:so\s+far|yet|anymore|any\s+more|this\s+time)\b",
    re.IGNORECASE,
)

# ------------------------------------------------------------------------------------------- facts
_PORT_RE = re.compile(
    r"\b(?:runs?|running|listens?|listening|serves?|served|is|are|bound|binds?|exposed?|available|lives?|starts?)\s+"
    r"(?:\w+\s+){0,4}on\s+(?:port\s+\d{2,5}|(?:https?://)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0)?:\d{2,5})\b"
    r"|\bport\s+(?:is\s+)?\d{2,5}\b|\b(?:the\s+)?(?:\w+\s+)?port\s+(?:is|=)\s+\d{2,5}",
    re.IGNORECASE,
)
_ENV_VERSION_RE = re.compile(
    r"\b(?:ci|production|prod|staging|the\s+(?:server|build|image|container|runtime|project|app|repo|codebase|"
    r"deploy(?:ment)?|pipeline|ci)|we|our\s+\w+|it)\s+(?:runs?|uses?|is\s+on|are\s+on|'re\s+on|targets?|"
    r"requires?|needs?|is\s+pinned\s+to|pins?|ships?\s+with|supports?)\s+(?:only\s+)?(?:\w+\s+)?"
    rf"{_PLATFORM}\s*v?\d+(?:\.\d+)*"
    rf"|\b{_PLATFORM}\s*v?\d+(?:\.\d+)*\s+(?:in|on)\s+(?:ci|production|prod|staging)\b"
    rf"|\b(?:requires?|needs?)\s+{_PLATFORM}\s*(?:>=?\s*)?v?\d+(?:\.\d+)*",
    re.IGNORECASE,
)
_BARE_COMMAND = (
    r"(?:cargo|npm|pnpm|yarn|bun|make|go|uv|pytest|poetry|docker(?:\s+compose)?|kubectl|python3?\s+-m|mvn|gradle|"
    r"bundle|rake|mix|dotnet|golangci-lint|ruff|tox|nox)\s+[\w-]+"
)
_CODE_SPAN_RE = re.compile(r"`[^`]*`")
_FAILURE_TALK_RE = re.compile(r"\b(?:fail(?:s|ed|ing|ure)?|error|because|broke|broken|crash(?:es|ed)?)\b", re.I)
_COMMAND_RE = re.compile(
    r"\b(?:run|start|launch|build|test|lint|format|deploy|migrate|serve|seed|check|type-?check|release)\w*\s+"
    r"(?:the\s+|all\s+)?(?:[\w-]+\s+){0,2}(?:with|using|via|by\s+running)\s+`[^`]+`"
    r"|`[^`]{2,80}`\s+(?:runs|starts|builds|lints|formats|deploys|migrates|seeds|serves|runs\s+the)\b"
    r"|\b(?:test|build|dev|start|lint|format|deploy|migration|run)\s+command\s+is\s+`[^`]+`"
    r"|^to\s+(?:run|start|build|test|lint|format|deploy|migrate|serve|seed)\b[^,]*,\s*(?:run|use|type)\s+`[^`]+`"
    r"|^to\s+(?:run|start|build|test|lint|format|deploy|migrate|serve|seed)(?:\s+(?:and|&)\s+\w+)?(?:\s+[\w-]+){0,3}"
    r"\s*:\s*`[^`]+`"
    r"|\b(?:tests?|the\s+server|the\s+app|migrations?|the\s+linter)\s+(?:run|runs|start|starts)\s+with\s+`[^`]+`"
    rf"|\b(?:lint(?:er|ing)?|tests?|builds?|formatter|format(?:ting)?|dev\s+server|migrations?|deploy(?:s|ment)?|"
    rf"releases?|type-?check(?:s|ing)?)\b[^.`]{{0,30}}(?:\b(?:is|it'?s|are|with|using|via|run)\s*:?|:)\s*"
    rf"(?:`[^`]+`|{_BARE_COMMAND})"
    r"|\b(?:runs?|run\s+by)\s+(?:from|via|in|on|as\s+a)\s+(?:a\s+)?(?:cron(?:job)?|systemd|a\s+timer)\b"
    r"|\b(?:nightly|daily|hourly|weekly|every\s+\w+)\b[^.]*\bat\s+\d{1,2}:\d{2}\b",
    re.IGNORECASE,
)


# ------------------------------------------------------------------- phrasings without a choice verb
# (the patterns are in extract/phrasings.py)

# "The usual random_password resource would leave …": after a decision, the alternative it was chosen over.
COUNTERFACTUAL_RE = re.compile(
    r"^(?:the\s+|a\s+|an\s+)?(?:usual|default|obvious|standard|common|naive|simpler|plain|classic|traditional|"
    r"built-in|alternative|other)\s+[^,]{2,60}?\s+(?:would|could)\s+(?!be\s+(?:fine|better|great|ideal|nice|good)\b)\w+",
    re.IGNORECASE,
)
# Standing rules not phrased always/never (the user's only).
_SETTLED_RE = re.compile(
    r"\b(?:is|are|'s|stays?)\s+(?:not\s+up\s+for\s+(?:discussion|debate|negotiation)|non-?negotiable|not\s+negotiable|"
    r"set\s+in\s+stone|a\s+hard\s+(?:requirement|constraint|limit))\b",
    re.IGNORECASE,
)
_RULE_HEADING_RE = re.compile(r"\brules?\b[^:.?]{0,30}:\s*\S|\brules?\s+apply\b", re.IGNORECASE)
_DEONTIC_RE = re.compile(
    r"\b(?:nothing|nobody|no\s+one|no-one)\b[^.;:!?]{0,40}?\b(?:should|may|must|can)\s+ever\b"
    r"|\b(?:nobody|no\s+one|no-one)\s+(?:ever\s+)?(?:runs?|pushes|commits|deploys|merges|edits|touches|applies|calls|"
    r"imports|writes|uses|should|may|must|gets\s+to|is\s+allowed)\b"
    r"|(?<!\bi\s)(?<!\byou\s)(?<!\bwe\s)(?:must|has\s+to|have\s+to|needs?\s+to|should)\s+(?:always\s+)?(?:stay|remain)\b"
    r"|\b(?:i|we)\s+need\s+(?:the\s+|our\s+|all\s+|every\s+)?[\w\s-]{2,40}?\s+to\s+(?:stay|remain|keep)\b"
    # a rule that follows from a fact: "all our customers are in the EU, so the data stays in Frankfurt"
    r"|,\s*so\s+(?:the\s+|all\s+|our\s+|every\s+)?[\w-]+(?:\s+[\w-]+)?\s+(?:stays?|remains?|lives?)\s+"
    r"(?:in|on|inside|within|under|behind)\b"
    r"|\b(?:must|have\s+to|has\s+to|needs?\s+to)\s+(?:pass|succeed|be\s+green|run)\s+before\b"
    # terse rules with the subject left out: "Must be RE-2024-0001, no gaps!", "only for main branch please",
    # "keep it shellcheck clean", "max 1 req per 5s per host"
    r"|^(?:but\s+|and\s+)?(?:must|has\s+to|needs?\s+to|should\s+always|always)\s+(?:be|stay|have|use|run|go)\b"
    r"(?!\s+(?:the|a|an|it|that|this|something|because|due|from|why|my|our|wrong|broken|fine)\b)"
    r"|^(?:but\s+|and\s+)?only\s+(?:for|on|in|with|from|when|via|through|the)\b[^.?]*\bplease\b"
    r"|\bkeep\s+(?:it|this|them|the\s+[\w-]+)\s+(?:[\w-]+\s+)?(?:clean|green|passing|lint-?free|warning-?free)\b"
    r"|\b(?:max(?:imum)?|at\s+most|no\s+more\s+than)\s+(?:\w+\s+)?\d+\s*(?:reqs?|requests?|calls?|hits?|jobs?|runs?|"
    r"connections?|retries|tries)\s*(?:/|per|a|an|every|each)\b"
    r"|\b(?:one|1)\s+(?:req|request|call)\s+(?:every|per|a)\b"
    # a ban list: "no colours, no emoji", "no capital letters and no full stop at the end"
    r"|\bno\s+(?!(?:worries|rush|problem|problems|idea|way|luck|doubt|kidding|joke|pressure|stress)\b)[\w-]+(?:\s+[\w-]+)?"
    r"\s*(?:,\s*|\s+and\s+|\s+or\s+)(?:no|nor)\s+(?!(?:worries|rush|problem|problems|idea|way|luck|pressure)\b)[\w-]+"
    # a request with the way it must (not) be done: "please write it with a decimal point, not a comma"
    r"|\bplease\b[^.?]*\b(?:with|as|in|using)\b[^.?]*,\s*(?:not|never)\s+(?:a|an|the)?\s*\w+"
    # an instruction for every time something happens: "bump the chart version whenever you touch a chart"
    r"|^(?:and\s+|also\s+|please\s+)*(?!(?:i|we|you|it|the|a|an|this|that|they|he|she|there|when|if|my|our|haha|lol)\b)"
    r"(?!(?:crash|fail|break|broke|hang|hung|freez|error|dies|die|stop|show)\w*\b)"
    r"[a-z]+\s(?:(?!\b(?:crash|fail|break|broke|hang|hung|freez|error|dies|die|stop|show)\w*)[^.?])*?"
    r"\b(?:whenever|(?:every|each)\s+time\s+(?:you|we|someone|anyone|somebody))\b",
    re.IGNORECASE,
)
# What the pipeline enforces: "ci runs clippy -D warnings", "CI checks formatting with ruff --check".
_CI_ENFORCES_RE = re.compile(
    r"(?:^|[\u2014\u2013;:]\s*|\s-\s)(?:and\s+|also\s+)?(?:our\s+|the\s+)?(?:ci|pipeline|pre-commit(?:\s+hook)?|github\s+actions|"
    r"the\s+build)\s+"
    r"(?:always\s+)?(?:runs?|enforces?|checks?|requires?)\s+`?[\w.-]+`?(?:\s+[\w.=`-]+){0,4}?\s+`?(?:--?[A-Za-z][\w=-]*)"
    r"|(?:^|[\u2014\u2013;:]\s*|\s-\s)(?:and\s+|also\s+)?(?:our\s+|the\s+)?(?:ci|pipeline|pre-commit)\s+(?:always\s+)?"
    r"(?:runs?|enforces?|checks?)\s+"
    r"(?:\w+\s+)?(?:lint(?:ing|s)?|format(?:ting)?|type[- ]?check(?:ing|s)?|clippy|mypy|ruff|eslint|prettier|black|"
    r"shellcheck|gofmt|rustfmt)\b",
    re.IGNORECASE,
)
# Facts given in passing: "For the record, the box has CUDA 12.1", "the dataset is mounted at /mnt/data".
_ASIDE_RE = re.compile(r"^\W*(?:for\s+the\s+record|for\s+reference|fyi|heads[- ]up|just\s+so\s+you\s+know)\b", re.I)
# The user's own setup, with a version: "My switch is logq-5.1, on OCaml 5.1.1."
_MINE_RE = re.compile(r"\b(?:my|our)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:is|are|runs?|uses?|has|have)\b", re.IGNORECASE)
# A terse "label: values" the user gives: "measured: air 26100, glass of water 12400", "UA: bot/1.0 (+mailto:…)".
_SPEC_RE = re.compile(
    r"^(?!(?:problem|question|bug|issue|note|todo|next|also|btw|ps|update|edit|other\s+thing|last\s+thing|one\s+more|"
    r"reminder|plan|context|background|summary|hint|tip)\b)[A-Za-z][\w -]{0,20}:\s+"
    r"(?=.*(?:\d{3,}|[\w-]+/\d|\+mailto:|@[\w.-]+\.\w+)).{6,160}$",
    re.IGNORECASE,
)
_GENERIC_VERSION_RE = re.compile(r"\b[A-Za-z][\w+-]*\s*v?\d+\.\d+(?:\.\d+)*\b")
_HOST_VERSION_RE = re.compile(
    r"\b(?:box|machine|server|host|cluster|runners?|builders?|build\s+(?:farm|machine|box)|image|container|vm|"
    r"ci|prod(?:uction)?|staging|mac|laptop|workstation|desktop|device|board|pi)(?:\s+(?:box|machine|server|host|"
    r"runners?|image|mac|laptop|vm|node))?\s+(?:has|have|runs?|uses?|is\s+on|are\s+on|ships?\s+with|comes\s+with)\s+"
    r"(?:[\w.+-]+\s+){0,2}?[A-Za-z][\w+-]*\s*v?\d+\.\d+",
    re.IGNORECASE,
)
_LOCATION_RE = re.compile(
    r"\b(?:is|are|lives?)\s+(?:mounted|located|stored|installed|kept|checked\s+out)?\s*(?:at|in|under)\s+"
    r"(?:`)?(?:~|/(?!tmp/|var/tmp/))[\w.-]+/[\w./-]+",
    re.IGNORECASE,
)
_WITHOUT_COMMAND_RE = re.compile(
    r"\b(?:without|if\s+you\s+(?:don'?t|do\s+not)\s+have)\b[^.`]{0,60}?\b(?:run|use)\s+`[^`]{3,}`", re.IGNORECASE
)
# A caveat: "no need for a GradScaler with bf16; that's only for fp16".
_CAVEAT_RE = re.compile(
    r"\b(?:no\s+need\s+for|(?:doesn'?t|don'?t)\s+need)\s+(?:a\s+|an\s+|the\s+)?[\w.-]+[^.]*\b(?:only\s+(?:needed\s+|"
    r"required\s+)?(?:for|with|when|on)|only\s+(?:matters|applies))\s+(?!(?:now|the\s+moment|testing|this\s+test)\b)\w+",
    re.IGNORECASE,
)
# The assistant reporting what it just changed ("The PDF now formats …") states no fact of its own.
_RESULT_NOW_RE = re.compile(r"^(?:the\s+|a\s+|an\s+)?[\w.`-]+(?:\s+[\w.`-]+){0,3}\s+now\s+\w+", re.IGNORECASE)


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
    s = tidy(sentence)
    if not s or not usable(s) or PRONOUN_SUBJECT_RE.match(s):
        return []
    user = role == "user"
    hypothetical = bool(HYPOTHETICAL_RE.search(main_clause(s)))
    if PREFERENCE_RE.match(s):
        return [Statement(s, "preference", "preference")] if user else []
    m = OBVIOUS_BUT_RE.search(s)
    if m and not PRONOUN_OBJECT_RE.match(m.group("y")):
        return [Statement(s, "rejected_alternative", "rejected", True)]  # "would be X, but …" is no hypothesis
    if hypothetical or GUESS_RE.search(s):
        return []
    reason = bool(_REASON_RE.search(s))
    decision = _decision(s, user=user, reason=reason)
    if decision:
        return [decision]
    rejected = _rejection(s, user=user)
    if rejected:
        return [rejected]
    phrased = _phrased_choice(s)
    if phrased:
        return [phrased]
    if user and (
        _RULE_HEADING_RE.search(s) or _DEONTIC_RE.search(s) or _SETTLED_RE.search(s) or _CI_ENFORCES_RE.search(s)
    ):
        return [Statement(s, "convention", "convention", reason)]
    if _CAVEAT_RE.search(s):
        return [Statement(s, "gotcha", "gotcha", True)]
    if user and (_CONVENTION_RE.search(s) or (_VERSION_RE.search(s) and _CONSTRAINT_RE.search(s))):
        return [Statement(s, "convention", "convention", reason)]
    if user and TERSE_BOUNDS_RE.search(s) and not _TERSE_REPORT_RE.search(s) and not relays_a_source(s):
        return [Statement(s, "preference", "preference", reason)]
    if not user and _ASSISTANT_CONVENTION_RE.search(s):
        return [Statement(s, "convention", "convention", reason)]
    if user and re.match(r"^(?:keep|bear)\s+in\s+mind\b|^(?:remember|note)\s+that\b|^be\s+aware\s+that\b", s, re.I):
        return [Statement(s, "convention", "convention", reason)]
    if states_an_observation(s):
        return [Statement(s, "fact", "observation")]  # what a value in the data stands for, a file's encoding
    factual = (
        _PORT_RE.search(s)
        or _ENV_VERSION_RE.search(s)
        or _COMMAND_RE.search(s)
        or _HOST_VERSION_RE.search(s)
        or _WITHOUT_COMMAND_RE.search(s)
        or (_LOCATION_RE.search(s) and (user or not _FAILURE_TALK_RE.search(s)))
        or (user and _ASIDE_RE.match(sentence) and _GENERIC_VERSION_RE.search(s))
        or (user and _SPEC_RE.match(s))
        or (user and _MINE_RE.search(s) and _GENERIC_VERSION_RE.search(s))
    )
    if not user and _RESULT_NOW_RE.match(s):
        return []  # "The PDF now formats amounts with …": a change reported, not a fact
    talk = _CODE_SPAN_RE.sub("", s)  # `ctest --output-on-failure` is a command, not failure talk
    if factual and not _NARRATION_RE.match(s) and not (not user and _FAILURE_TALK_RE.search(talk)):
        if _VERSION_RE.search(s) and _CONSTRAINT_RE.search(s):
            return [Statement(s, "convention", "convention", reason)]  # the assistant restating a constraint
        return [Statement(s, "fact", "fact")]
    return []


_REASON_CLAUSE_RE = re.compile(
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


_REASON_LEAD_RE = re.compile(
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
