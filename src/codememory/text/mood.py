"""A sentence's mood: whether it asks, narrates the speaker's own steps, or is a line a program printed, rather
than stating something. Read from its grammatical form, never from its topic, so it holds for any project.

Only a statement can become a memory. A question asks ("Want me to use the csv module", with or without its "?");
a narration says what the speaker is doing or is about to do ("Reading the contributing guide first", "Let me check the
config", "Now I'll rerun the tests", "I'm adding a guard: …"); a log line is a program's output pasted or echoed
("2026-03-01 12:00:01 ERROR …", "E   assert 3 == 2", "npm ERR! code ENOENT"). None of them is a decision, a
rule, a fact or a lesson, whatever else the sentence holds: a lesson says what failed, why and what fixed it, and
"Reading X first, and the check fails for now" says none of that. One home for the concept: the prose rules
(`extract.rules`), the lessons from failures (`extract.gotchas`, `extract.reported`) and the last check on every
memory (`extract.heuristic`) all ask here."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from codememory.core.lazy_pattern import lazy_pattern

Mood = Literal["statement", "question", "narration", "log"]

# Every rule that reads a sentence asks its mood first (the prose rules, the lessons' explanations, the reported
# problems, the last check on each memory): 6 to 10 times a sentence. The three readings are cached on the
# sentence's text, bounded, so each is read once however many rules ask; they are pure functions of the text.
_CACHED = 4096

# fillers a sentence may open on before its real start ("Ok, let me …", "So, should we …")
_LEAD = (
    r"^\W*(?:(?:ok(?:ay)?|alright|all\s+right|right|so|and|but|also|well|hmm+|great|good|cool|perfect)\b"
    r"[\s,.!:\u2014-]*)*"
)

# ------------------------------------------------------------------------------------------- questions
# a question's form without its "?": an auxiliary before its subject ("do we need …", "should I pin it"), a
# wh-word before an auxiliary ("why does it …", "what about …"), or an offer ("want me to …", "shall I …")
_SUBJECT = r"(?:i|we|you|it|they|he|she|this|that|these|those|there|everything|anything|anyone|someone)"
_AUX = r"(?:do|does|did|can|could|should|shall|would|will|is|are|was|were|have|has|had|may|might|must)(?:n'?t)?"
# before a noun subject, not "do" or "have": "Do the migration first." and "Have the script log it." command
_AUX_BEFORE_NOUN = r"(?:does|did|can|could|should|shall|would|will|is|are|was|were|has|may|might)(?:n'?t)?"
_NOT_A_NOUN = r"(?:not|never|also|only|just|to|rather|always|still|ever|already|usually|\w+ly)"
_QUESTION_FORM_RE = lazy_pattern(
    # "Do it with …", "Have this one log …" command: "do" and "have" before an object pronoun are no question
    # "Don't you ever commit …" is an emphatic command
    _LEAD + rf"(?:(?!(?:do|have)\s+(?:it|this|that|these|those)\b|don'?t\s+you\s+(?:ever|dare)\b)"
    rf"{_AUX}\s+{_SUBJECT}\b(?!\s*[,:])"
    rf"|{_AUX_BEFORE_NOUN}\s+(?:the|a|an|our|my|your|its|their)\s+\w"
    # a bare noun subject before the verb: "should prices be stored as cents", "can users get a refund"
    # but not an adverb or "to" where the noun would be: a user's subjectless "Would rather use httpx.", "Has to be
    # UTC everywhere.", "Should always use pnpm." state a rule
    rf"|{_AUX_BEFORE_NOUN}\s+(?!{_NOT_A_NOUN}\b)[a-z]\w*\s+(?:be|get|go|run|work|stay|use|have)\b"
    rf"|(?:what|why|how|which|where|when|who|whom|whose)\s+(?:{_AUX}|about|if|else)\b(?!\s+why\b)"
    r"|(?:do\s+you\s+)?want\s+me\s+to\b|any\s+(?:idea|ideas|thoughts|reason|chance)\b|wdyt\b)",
    re.IGNORECASE,
)
_TAG_QUESTION_RE = lazy_pattern(r",\s*(?:right|correct|isn'?t\s+it|don'?t\s+you\s+think)\s*\W*$", re.I)
_TRAILING_CLOSERS = " \t\"')]*_\u201d\u2019"


# a polite request that sets a standing rule is an instruction, with or without its "?": "Can you always use UTC in
# the logs.", "Could you never touch the generated files, please?", "Would you make sure to run ruff first?",
# "Can you use pnpm from now on?". The rule word comes right after "you" (or the request says "from now on" /
# "going forward" anywhere): "Can you check why it never finishes?" asks about something, it sets nothing.
_STANDING = r"(?:always|never|every\s+time|each\s+time|from\s+now\s+on|going\s+forward|make\s+sure|be\s+sure)"
_STANDING_REQUEST_RE = lazy_pattern(
    _LEAD + r"(?:please\s*,?\s*)?(?:can|could|would|will)\s+you\s+(?:please\s+|just\s+|also\s+|kindly\s+)*"
    rf"(?:,\s*)?(?=(?:{_STANDING}\b|.*\b(?:from\s+now\s+on|going\s+forward|from\s+here\s+on)\b))"
    r"(?P<instruction>.*?)(?:\s*,?\s+please)?\s*[?.!]*$",
    re.IGNORECASE | re.DOTALL,
)


def standing_instruction(sentence: str) -> str | None:
    """The instruction a polite request for a standing rule gives, without its frame ("Could you never touch the
    generated files, please?" gives "never touch the generated files"); None for any other sentence."""
    m = _STANDING_REQUEST_RE.match(sentence.strip().rstrip(_TRAILING_CLOSERS))
    return m.group("instruction").strip() if m and m.group("instruction").strip() else None


# a condition put in a question's form, then the rule it sets after a comma, with no "?": the inverted conditional
# ("Should the build fail, don't deploy.", "Is the build red, no merging.") and the non-native "when"/"where" + verb
# for "on/where …" ("When is friday, no deploy.", "Where is possible, always use the async client."). The clause
# after the comma is a directive (a prohibition, "always"/"never", an obligation, "make sure"): a question goes on
# asking there ("When is the release, do you know", "Is it done, or not yet"). Requests and offers ("Can we …",
# "Could you …, never mind") are no condition: only the auxiliaries that invert a condition ("is", "does", "had",
# "should", …) and the wh-words of time and place lead one.
_CONDITION_LEAD = (
    r"(?:(?:when(?:ever)?|where(?:ever)?)\s+(?:is|are|was|were|does|do|has|have|it'?s)"
    r"|(?:is|are|was|were|does|do|did|has|have|had|should)\s+(?!you\b))"
)
_DIRECTIVE = (
    r"(?:then\s+)?(?:please\s+)?(?:(?:we|you|i)\s+(?:must|should|have\s+to|need\s+to|never|always|"
    r"(?:don'?t|do\s+not)\s+(?!(?:know|think|have|need|care|mind|see|get|want|like|remember|understand)\b)))?"
    r"(?:no\s+(?!(?:idea|clue|problem|worries|way|thanks|rush|doubt|need)\b)\w"
    r"|never\s+(?!mind\b)\w|always\s+\w|(?:don'?t|dont|do\s+not|must\s+not|mustn'?t)\s+\w|avoid\s+\w"
    r"|(?:make|be)\s+sure\b|[\w-]+(?:\s+[\w-]+){0,2}\s+(?:must|has\s+to|have\s+to)\s+\w)"
)
# the formal "Should X fail, retry it once.": after a "should" condition with a subject other than a person, any
# command on an object is the rule (a question would ask "Should the import fail?" and stop there)
_COMMAND_ON_AN_OBJECT = (
    r"(?!(?:i|we|you|it|they|he|she|this|that|there|the|a|an|or|and|but|so|if|then|what|why|how|which|who|when|"
    r"where|is|are|was|were|do|does|did|can|could|should|would|will)\b)[a-z]+(?:\s+(?:back|up|out|off|down|over|away))?\s+"
    r"(?:it|them|the|a|an|each|every|all|our|its|their|this|that|these|those)\b"
)
_CONDITIONAL_RULE_RE = lazy_pattern(
    _LEAD + rf"(?:{_CONDITION_LEAD}\b[^,;:?]{{1,80}},\s*{_DIRECTIVE}"
    rf"|should\s+(?!(?:i|we|you)\b)[^,;:?]{{1,80}},\s*(?:then\s+)?(?:please\s+)?(?:just\s+)?{_COMMAND_ON_AN_OBJECT})"
    r"[^?]*$",
    re.IGNORECASE,
)


@lru_cache(maxsize=_CACHED)
def asks(sentence: str) -> bool:
    """A question: it ends on "?" (before any closing quote or bracket), or has a question's form without one; not
    a request that sets a standing rule ("Can you always run ruff before committing?" instructs) nor a condition in
    a question's form with the rule it sets ("When is friday, no deploy." means "On Fridays, no deploys")."""
    s = sentence.strip().rstrip(_TRAILING_CLOSERS)
    if _STANDING_REQUEST_RE.match(s):
        return False
    if s.endswith("?"):
        return True
    if _CONDITIONAL_RULE_RE.match(s):
        return False
    return bool(_QUESTION_FORM_RE.match(s) or _TAG_QUESTION_RE.search(s))


# ------------------------------------------------------------------------------------------- narration
# the speaker's own next step or the one under way: "let me", "let's see", a sequencing word before "I'll" /
# "I'm" ("Now I'll …", "Next, I'm …", "First I'll …"), an intent to look ("I'll check …"), a step in progress
# ("I'm reading …"), or an agenda ("Next: …")
_LOOK = (
    r"(?:run|rerun|re-run|check|read|look|open|try|verify|test|search|inspect|see|grep|list|start|take\s+a\s+look|"
    r"have\s+a\s+look|dig|investigate|confirm|find|print|debug|reproduce|figure)"
)
_I_WILL = r"(?:i(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to|'m\s+gonna)|we(?:'ll|\s+will|'re\s+going\s+to))"
_I_AM = r"(?:i'?m|i\s+am|we'?re|we\s+are)"
_PLAN_RE = lazy_pattern(
    _LEAD + r"(?:let\s+me\b|let'?s\s+(?:see|check|look|try|run|start|first|verify|find|figure)\b"
    rf"|(?:now|next|first|then|after\s+that|meanwhile|first\s+of\s+all)\b[\s,:]*(?:{_I_WILL}|{_I_AM}|let)\b"
    rf"|{_I_WILL}\s+(?:now\s+|first\s+|quickly\s+|just\s+|also\s+)?{_LOOK}\b"
    r"|(?:next|first|then|now|next\s+steps?)\s*:)",
    re.IGNORECASE,
)
_STEP_RE = lazy_pattern(
    _LEAD + rf"{_I_AM}\s+(?:now\s+|just\s+|first\s+|also\s+)?[a-z]+ing\b(?!\s+(?:to|with|for)\b)", re.I
)
# a sentence that opens on a gerund with no subject: a step under way ("Reading the contributing guide first", "Adding
# the retry: …", "Switching to Vitest."), unless the gerund is the subject of a finite verb ("Caching the token
# saves a round trip", "Storing money as floats loses cents")
_GERUND_LEAD_RE = lazy_pattern(_LEAD + r"(?P<verb>[A-Za-z][a-z]{2,}ing)\b(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
# words ending in -ing that are nouns or adjectives, not a step: "String", "Nothing", "Logging is …"
_NOT_A_STEP = frozenset(
    "string nothing something anything everything thing king ring spring morning evening during bring sing wing "
    "ceiling building setting settings warning warnings padding heading timing pricing billing shipping routing "
    "spacing wording coming missing existing remaining pending upcoming following outgoing incoming ongoing "
    "interesting amazing boring annoying confusing surprising tracing logging".split()
)
# the first clause's end: a gerund fragment's clause ends here, a gerund subject's finite verb comes before it
_CLAUSE_END_RE = lazy_pattern(
    r"[,;:\u2014\u2013]|\s(?:and(?!\s+\w+ing\b)|but|so|then|while|before|after|since|because)\s|\.\s|$"
)
_VERB_AFTER_RE = lazy_pattern(r"\s+[a-z]{2,}(?<!s)s\b")
_ASIDE_RE = lazy_pattern(r"\([^()]*\)|`[^`]*`")
_FINITE_RE = lazy_pattern(
    r"\b(?:is|are|was|were|be|been|has|have|had|does|do|did|can|could|will|would|should|must|may|might|shall|"
    r"isn'?t|aren'?t|wasn'?t|doesn'?t|don'?t|didn'?t|won'?t|can'?t|cannot|makes|breaks|needs|means|keeps|gives|"
    r"takes|saves|costs|loses|fixes|causes|avoids|helps|works|fails|returns|adds|requires|leads|lets|turns|beats|"
    r"wins|matters|solves|changes|happens|stops|creates|drops|reads|writes|runs|hides|hits|uses|becomes|seems)\b"
    r"|\b\w+(?:'s|'re)\b"
    # a past form not after a determiner ("Partitioning orders by month rejected", not "reading the cached file")
    r"|(?<!\bthe\s)(?<!\ba\s)(?<!\ban\s)(?<!\bits\s)(?<!\bour\s)(?<!\bthis\s)\b[a-z]{3,}ed\b",
    re.IGNORECASE,
)


def narrates(sentence: str) -> bool:
    """Narration of the speaker's own steps: what it is about to do or is doing, never what it learned."""
    return narration(sentence) is not None


@lru_cache(maxsize=_CACHED)
def narration(sentence: str) -> Literal["plan", "step"] | None:
    """Which narration a sentence is: a plan ("Let me check …", "Now I'll …", "Next: …", "I'll run …"), which
    states nothing at all, or a step under way ("I'm switching the query to …", "Adding the retry: …"), which
    may still name a choice and why; None for any other sentence."""
    s = sentence.strip()
    if _PLAN_RE.match(s):
        return "plan"
    if _STEP_RE.match(s):
        return "step"
    m = _GERUND_LEAD_RE.match(s)
    if m is None or m.group("verb").lower() in _NOT_A_STEP:
        return None
    rest = _ASIDE_RE.sub("", m.group("rest"))
    # a gerund right before a verb in -s is the subject ("Accounting wants …", "Logging goes to stderr")
    if _VERB_AFTER_RE.match(rest):
        return None
    first_clause = rest[: _CLAUSE_END_RE.search(rest).start()]  # type: ignore[union-attr]  # `$` always matches
    return None if _FINITE_RE.search(first_clause) else "step"


# ------------------------------------------------------------------------------------------- work told
# What the speaker says of its own work, which states nothing a later session could use, in two kinds (one home:
# the prose rules' facts, the lessons from failures and the reported problems all ask here):
# - its status: a look it is about to take or taking ("Let me check …", "I'll rerun the tests", "Now I see …",
#   "Running the suite again", but not "Looking at X: <what it found>"), the work finished ("Done.", "Fixed.",
#   "Committed.", "Here's the diff") or a check's verdict ("All 12 pass", "3 tests failed", "Tests green",
#   "Builds cleanly", "Works now", "Still open");
# - a change it makes or made ("I'll add a guard …", "I've updated the config", "Added the index", "Rewrote the
#   loader"): no fact about the project, though after a failure it may be the fix, so the two are asked apart.
_STATUS_RE = lazy_pattern(
    rf"^(?:let\s+me|{_I_WILL}\s+(?:now\s+|first\s+|then\s+|also\s+)?{_LOOK}|now,?\s+(?:i|let)|(?:next|first),?\s+i"
    r"|to\s+(?:check|verify|test|run|try|see)"
    r"|done|fixed|committed|here'?s|here\s+is|still\s+open|all\s+\d+|\d+\s+tests?|tests?\s+(?:pass|passed|green)"
    r"|builds?\s+(?:cleanly|fine|green)|all\s+green|works\s+now"
    r"|files?\s+(?:changed|touched|edited|modified)|changed\s+files?)\b",
    re.IGNORECASE,
)
_CHANGE_TOLD_RE = lazy_pattern(
    rf"^(?:{_I_WILL}\s+(?:now\s+)?(?:create|add|write|update|fix|install|first|then|also)"
    r"|i(?:'ve|\s+have)\s+(?:added|updated|created|written|fixed|run|made|changed|implemented|refactored)"
    r"|added|updated|rewr(?:ote|iting))\b",
    re.IGNORECASE,
)


# a look under way told as a step (text.mood's narration), unless it goes on to say what it found ("Looking at
# `database.yml`: in test, the queue …"); "Running migrations on the primary locks the table" is a finding
_LOOK_STEP_RE = lazy_pattern(r"^(?:running|checking|reading|looking)\b(?![^:]*:\s+\S+\s+\S+\s+\S)", re.IGNORECASE)


def reports_status(sentence: str) -> bool:
    """The speaker's status: a look it takes, work finished or a check's verdict (see above)."""
    s = sentence.strip()
    return bool(_STATUS_RE.match(s)) or (bool(_LOOK_STEP_RE.match(s)) and narration(s) == "step")


def tells_a_change(sentence: str) -> bool:
    """The speaker telling a change it makes or made ("I've updated the config", "Added the index")."""
    return bool(_CHANGE_TOLD_RE.match(sentence.strip()))


# ------------------------------------------------------------------------------------------- log lines
# a line a program printed: a timestamp, a log level, a test runner's verdict, a compiler's location, a prompt
_LOG_LINE_RE = lazy_pattern(
    r"^\W{0,2}(?:\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|\d{1,2}:\d{2}:\d{2}\b|\d{2}/\w{3}/\d{4}:"
    r"|(?:INFO|WARN|WARNING|ERROR|ERR|DEBUG|TRACE|FATAL|CRITICAL|NOTICE|PANIC)\b(?:\s*[:\]|-]|\s+\[|\s+\S+:)"
    r"|level=\w+|E\s{2,}\S|npm\s+(?:ERR|WARN)!|(?:error|warning)(?:\[[\w-]+\])?:\s|FAILED\s|PASSED\s|ERROR\s+\S+::"
    r"|Traceback\s\(|at\s+[\w.$<>]+\s*\([^()]*(?::\d+|Native\sMethod|Unknown\sSource)\)|[\w./\\-]+\.[A-Za-z]{1,5}:\d+(?::\d+)?(?::|\s+-\s)|\$\s|>>>\s|#\s\d+\s"
    r"|\w+(?:\.\w+)*:\s*(?:error|warning|fatal)\b|(?:[\w.-]+=\S+\s+){2,}[\w.-]+=)",
)


# a person's own warning written like a log prefix: the level word, then a rule in prose ("WARNING: never run
# migrations on prod without a backup.", "warning: dont use sqlite for the tests"). A program's line goes on with
# what it found ("WARNING: 3 tests skipped", "warning: unused variable `x`"), never with a rule word.
_WARNED_RULE_RE = lazy_pattern(
    r"^\W{0,2}(?:warn(?:ing)?|error|caution|careful|note|important|heads[\s-]up)\s*[:!\-\u2014]+\s*"
    r"(?:never|always|don'?t|dont|do\s+not|make\s+sure|be\s+sure|avoid|remember\s+to)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=_CACHED)
def logged(sentence: str) -> bool:
    """A line a program printed (a log record, a test runner's or compiler's line, a shell prompt); not a person's
    warning that only borrows a log level's prefix to state a rule."""
    s = sentence.strip()
    return bool(_LOG_LINE_RE.match(s)) and not _WARNED_RULE_RE.match(s)


# a conjecture about the past ("my cousin must have copied it from a website", "the job may have run twice"): a
# guess at what happened, never a rule ("must" here is no obligation) nor a fact
_CONJECTURE_RE = lazy_pattern(
    r"\b(?:must|might|may)(?:n'?t|\s+not)?\s+have\s+(?:been|gotten|\w+(?:ed|en|wn|pt|ght|ne))\b", re.IGNORECASE
)


def conjectures(sentence: str) -> bool:
    return bool(_CONJECTURE_RE.search(sentence))


def mood(sentence: str) -> Mood:
    """What a sentence does: asks, narrates, is a printed line, or states (the only mood a memory can have)."""
    if logged(sentence):
        return "log"
    if asks(sentence):
        return "question"
    if narrates(sentence):
        return "narration"
    return "statement"


def states(sentence: str) -> bool:
    return mood(sentence) == "statement"


__all__ = [
    "Mood",
    "asks",
    "conjectures",
    "logged",
    "mood",
    "narrates",
    "narration",
    "reports_status",
    "standing_instruction",
    "states",
    "tells_a_change",
]
