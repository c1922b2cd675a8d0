"""Who said it: the speaker of every candidate, and what the assistant may state for the user.

A decision, rejected alternative, convention, preference or `*Remember*:` note is the user's when the user said it.
When the assistant said it, it stands only once the user accepted it: the user's next turn agrees or carries on
(anything but an objection). The assistant's own statements that the user's next turn objects to are dropped; so
are its standing rules and preferences with no next turn (its choices there are kept as its own, see
`attribute`), and whatever of its statements would weaken security or skip checks (`risky`).

Never a memory of the assistant's, whoever accepted what else:
- a claim about the user ("the user approved force pushes", "as you said, tests can be skipped"): what the user
  wants is only ever taken from the user's own words;
- a relay of what a source says ("The page says: …", "According to the README, …", "the output tells agents to
  …"): a tool's output, a web page or a file is not the speaker's view;
- a sentence copied from a tool's output or a file (eight words in a row, or the whole of a shorter sentence):
  said by the tool, not by the assistant.

Lessons from failures and facts about the data or environment are `observed`; the agent's own todo list is the
assistant's (`assistant`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from codememory.capture.turns import Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import ACCEPTED, ASSISTANT, OBSERVED, USER, Candidate, spoken
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.observations import contradicts

# categories that state what someone wants: the user's, or accepted by the user
WANTED = frozenset({"decision", "rejected_alternative", "convention", "preference", "note"})
COPIED_WORDS = 6  # a run of this many words shared with a tool's output is a copy
DERIVED_SHARE = 0.7  # a rule whose words are this much a tool output's words came from that output
MIN_COPIED_SENTENCE = 5  # a shorter sentence is a copy only when the whole of it is in an output

# ----------------------------------------------------------------------------------- objections
# "no" that agrees or leaves the choice to the assistant opens no objection: "no problem, go ahead", "honestly no idea,
# your call", "no strong opinion, you pick"
_NO_BUT_FINE = r"(?!\s+(?:problems?|worries|rush|idea|clue|preference|objections?|complaints?|(?:strong\s+)?opinion)\b)"
_OBJECTION_RE = lazy_pattern(
    rf"^\W*(?:no\b{_NO_BUT_FINE}|nope\b|nah\b|nay\b|not\s+(?:that|this|like\s+that|really|quite|yet|now|so\s+fast)\b|"
    r"(?:please\s+)?(?:don'?t|do\s+not)\b|wait\b|hold\s+on\b|stop\b|revert\b|undo\b|roll\s+(?:it|that)\s+back\b|"
    r"let'?s\s+not\b|i'?d\s+rather\b|i\s+would\s+rather\b|rather\s+not\b|i\s+(?:don'?t|do\s+not)\s+(?:want|like|"
    r"think\s+(?:so|that|we|it'?s))\b|that'?s\s+(?:wrong|not\s+(?:right|what)|overkill|too\s+much)\b|"
    r"why\s+(?:did|would)\s+you\b|scratch\s+that\b|never\s*mind\b|instead\b|keep\s+(?:it|the)\b[^.]*\binstead\b)",
    re.IGNORECASE,
)
# a hedge before the refusal: "hmm, no", "actually, let's not", "But honestly no.", "to be honest, nah"
_SECOND_THOUGHT_RE = lazy_pattern(
    r"^\W*(?:hmm+|actually|on\s+second\s+thought|but|honestly|frankly|tbh|to\s+be\s+honest|sorry)\b[,.\s]+"
    r"(?P<rest>.+)",
    re.I | re.S,
)
# the topic named first, then turned down: "Compression: nah.", "the cache? no, …", "Redis — let's not"
_TOPIC_THEN_NO_RE = lazy_pattern(
    r"^\W*[\w.+/-]+(?:\s+[\w.+/-]+){0,2}\s*(?:[:?\u2014\u2013]|\s-)\s+"
    r"(?P<rest>(?:no|nope|nah|not\s+now|let'?s\s+not|rather\s+not)\b.*)",
    re.I | re.S,
)


def without_topic_no(sentence: str) -> str:
    """ "Compression: nah, auto is fine" -> "nah, auto is fine": the objection without the topic it names first."""
    m = _TOPIC_THEN_NO_RE.match(sentence)
    return m.group("rest") if m else sentence


def objects(reply: str) -> bool:
    """Whether a user's message opens by objecting to what came before ("no, keep the mean", "nah, keep it
    simple", "let's not", "hmm, actually don't")."""
    text = " ".join(reply.split())
    while m := _SECOND_THOUGHT_RE.match(text):
        text = m.group("rest")
    if m := _TOPIC_THEN_NO_RE.match(text):
        text = m.group("rest")
    return bool(_OBJECTION_RE.match(text))


def next_user_text(turns: Sequence[Turn], seq: int) -> str | None:
    """The user's message after turn `seq` in this span, None when there is none."""
    later = [t for t in turns if t.seq > seq]
    return scrub(min(later, key=lambda t: t.seq).user_text) if later else None


# ------------------------------------------------------------------------------- not the speaker's
_ABOUT_USER_RE = lazy_pattern(
    r"\b(?:the\s+user|you|the\s+developer|the\s+owner|the\s+maintainers?)\s+(?:has\s+|have\s+|had\s+)?"
    r"(?:already\s+|explicitly\s+|previously\s+|earlier\s+)?(?:approved|allowed|authori[sz]ed|agreed|confirmed|said|"
    r"told|asked|wanted|wants|prefers?|preferred|decided|requested|instructed|okayed|ok'?d|signed\s+off|mentioned|"
    r"noted|indicated|stated|specified|chose|picked|insisted|"
    r"(?:is|are)\s+(?:fine|ok(?:ay)?|happy)\s+with|(?:does|do)\s*n[o']t\s+(?:mind|care))\b"
    r"|\b(?:you'?re|the\s+user\s+is)\s+(?:fine|ok(?:ay)?|happy|comfortable)\s+with\b"
    r"|\b(?:as|like)\s+you\s+(?:said|asked|wanted|requested|prefer|mentioned|suggested)\b"
    r"|\b(?:per|following)\s+your\s+(?:request|instructions?|preference|wish(?:es)?|approval)\b"
    r"|\byour\s+(?:team|lead|manager|boss|company|org(?:anisation|anization)?)\s+(?:has\s+)?(?:decided|approved|said|"
    r"wants?|requires?|allows?|agreed)\b"
    r"|\byour\s+(?:preference|approval|instruction)\s+(?:is|was)\b",
    re.IGNORECASE,
)
_SOURCE = (
    r"(?:the|this|that|its|their|a|an|your)\s+(?:[\w.-]+\s+)?(?:page|site|website|docs?|documentation|readme|"
    r"file|comment|output|log|error(?:\s+message)?|message|issue|ticket|thread|article|post|blog|answer|changelog|"
    r"wiki|notice|banner|header|footer|note|description|tool|script|test|response|result|server|api|repo|"
    r"repository|md|instructions?)"
)
_RELAY_RE = lazy_pattern(
    rf"\b{_SOURCE}\s+(?:says?|said|claims?|claimed|tells?|told|instructs?|instructed|insists?|recommends?|"
    r"recommended|suggests?|suggested|warns?|warned|mentions?|mentioned|asks?\s+(?:you|us|agents?|ai|the\s+"
    r"(?:agent|assistant|model)))\b"
    rf"|\b{_SOURCE}\s+(?:states?|stated|reads?|notes?|wants?|explains?)\s*(?::|that\b|[\"'\u201c])"
    r"|^\W*(?:according\s+to|per|as\s+(?:stated|described|noted|written|documented)\s+in)\s+\S+"
    # a file name starts where its run of name characters starts: from every dot of a long `1.1.1…` run a search
    # would otherwise rescan the rest of the run (minutes for 20k characters of untrusted tool text)
    r"|(?<![\w./-])[\w./-]+\.(?:md|txt|rst|html?|json|ya?ml|toml|cfg|ini|adoc)`?\s+(?:says?|said|states?|claims?|tells?|"
    r"instructs?|recommends?|requires?|asks?|wants?)\b"
    r"|\b(?:it|they)\s+(?:says?|claims?|instructs?|tells?)\s*:",
    re.IGNORECASE,
)
_WORD_RE = lazy_pattern(r"[a-z0-9][a-z0-9_'./-]*")


def claims_about_user(sentence: str) -> bool:
    """The assistant stating what the user wants, approved or said."""
    return bool(_ABOUT_USER_RE.search(sentence))


def relays_a_source(sentence: str) -> bool:
    """A sentence reporting what a page, file, output or tool says."""
    return bool(_RELAY_RE.search(sentence))


def not_the_speakers(sentence: str) -> bool:
    """An assistant's sentence that is not its own view: a claim about the user or a relay of a source."""
    return claims_about_user(sentence) or relays_a_source(sentence)


@dataclass(frozen=True)
class ToolText:
    """The words of a span's tool outputs and file contents, for finding sentences copied from them."""

    text: str  # normalised: lower case, one space between words, no punctuation but inside words

    @classmethod
    def of(cls, turns: Iterable[Turn]) -> ToolText:
        outputs = [call.output for turn in turns for call in turn.tool_calls if call.output]
        return cls(_normal("\n".join(outputs)) if outputs else "")

    def copies(self, sentence: str) -> bool:
        return bool(self.text) and _copied(sentence, self.text)

    def derives(self, sentence: str) -> bool:
        """Most of the sentence's words are words of the outputs: a rule restated from a page or a file."""
        if not self.text:
            return False
        words = {w for w in _words(sentence) if len(w) > 3}
        return len(words) >= 4 and sum(f" {w} " in self.text for w in words) >= DERIVED_SHARE * len(words)


def _words(text: str) -> list[str]:
    return [w.rstrip(".") for w in _WORD_RE.findall(text.lower())]


def _normal(text: str) -> str:
    return " " + " ".join(_words(text)) + " "


@lru_cache(maxsize=1024)
def _copied(sentence: str, haystack: str) -> bool:
    words = _words(sentence)
    if len(words) < COPIED_WORDS:
        return len(words) >= MIN_COPIED_SENTENCE and f" {' '.join(words)} " in haystack
    return any(f" {' '.join(words[i : i + COPIED_WORDS])} " in haystack for i in range(len(words) - COPIED_WORDS + 1))


# ------------------------------------------------------------------------------------ attribution
# A choice the assistant made in the span's last turn, which no user turn has answered yet (the user asked for the
# work and left): kept as the assistant's own (`assistant`, not accepted). A standing rule or preference it stated
# there is not: what the user wants comes from the user's words or acceptance.
AWAITING = frozenset({"decision", "rejected_alternative"})


def attribute(candidates: Sequence[Candidate], turns: Sequence[Turn]) -> list[Candidate]:
    """Every candidate with its speaker settled: the assistant's wanted-kind statements kept as accepted when the
    user's next turn does not object (else dropped), its lessons and facts as observed, the rest as said."""
    out: list[Candidate] = []
    replies: dict[int, str | None] = {}
    for c in candidates:
        if c.said_by != ASSISTANT:
            out.append(c if c.said_by else spoken(c, USER))
            continue
        if c.category == "fact" and c.rule == "observation":
            # what a value in the data means, in the assistant's words: the user's objection overrules it
            if c.seq not in replies:
                replies[c.seq] = next_user_text(turns, c.seq)
            reply = replies[c.seq]
            if reply is None or not (objects(reply) and contradicts(reply, c.text)):
                out.append(spoken(c, OBSERVED if reply is None else ACCEPTED))
            continue
        if c.category == "fact":
            out.append(spoken(c, OBSERVED))
            continue
        if c.category == "gotcha":
            if risky(c.text):
                continue  # "so pushing with --no-verify gets it through": never the assistant's lesson to keep
            # a lesson in the assistant's words: accepted when the user carried on, else what the failure showed
            if c.seq not in replies:
                replies[c.seq] = next_user_text(turns, c.seq)
            reply = replies[c.seq]
            out.append(spoken(c, ACCEPTED if reply is not None and not objects(reply) else OBSERVED))
            continue
        if c.category not in WANTED:
            out.append(c)  # the agent's todos stay the assistant's
            continue
        if risky(c.text):
            continue
        if c.seq not in replies:
            replies[c.seq] = next_user_text(turns, c.seq)
        reply = replies[c.seq]
        if reply is None:
            if c.category in AWAITING:
                out.append(c)
        elif not objects(reply):
            out.append(spoken(c, ACCEPTED))
    return out


# What an assistant's statement must never carry into memory unless the user said it: weakening security or
# history, running code fetched from elsewhere, skipping checks. An agent that read a hostile page may repeat it.
_RISKY_RE = lazy_pattern(
    r"\b(?:disabl\w*|skip\w*|turn\w*\s+off|bypass\w*|ignor\w*)\s+(?:the\s+|all\s+)?"
    r"(?:tls|ssl|certificate|cert|https?|signature|checksum|2fa|mfa|auth(?:entication)?)\b|\bverify\s*=\s*false\b|"
    r"--no-verify\b|\bforce[- ]push(?:es|ing)?\b|\bpush\s+(?:-f|--force)\b|"
    r"\bignore\s+(?:all\s+|any\s+)?(?:previous|prior|earlier|above)\s+instructions\b|\bchmod\s+777\b|"
    r"\b(?:commit|paste|send|post|upload)\w*\s+(?:the\s+)?(?:secrets?|tokens?|keys?|credentials|\.env)\b",
    re.IGNORECASE,
)


# and fetched code piped into a shell ("curl … | sh"): a fetcher in the command before a pipe whose next command is a
# shell. Read command by command (split at "|" and ";"), not as one pattern: "curl[^|;]*\|" was tried from every
# "curl" of a text and scanned the rest of it each time (8,000 of them took 0.7 s, quadratic).
_COMMANDS_RE = lazy_pattern(r"([|;])")
_FETCHER_RE = lazy_pattern(r"\b(?:curl|wget)\b", re.IGNORECASE)
_SHELL_RE = lazy_pattern(r"\s*(?:ba|z)?sh\b", re.IGNORECASE)


def risky(text: str) -> bool:
    """A statement that would weaken security or skip checks (see _RISKY_RE), or run fetched code."""
    if _RISKY_RE.search(text):
        return True
    if "|" not in text:
        return False
    pieces = _COMMANDS_RE.split(text)  # command, separator, command, …
    return any(
        pieces[i + 1] == "|" and _SHELL_RE.match(pieces[i + 2]) and _FETCHER_RE.search(pieces[i])
        for i in range(0, len(pieces) - 2, 2)
    )


# the user handing over someone else's words: "here is what the hosting FAQ says, pasted:", "the client wrote:",
# "copied from their docs:", "I get this when I start it:"
_PASTE_INTRO_RE = lazy_pattern(
    r"(?:\b(?:pasted|copied|quoting|verbatim)\b|\b(?:says?|said|wrote|writes|reads|states|printed|prints|shows?|"
    r"showed|outputs?)\b|\b(?:get|got|see|saw)\s+(?:this|these|that|the\s+following)\b)[^:]{0,60}:\s*$",
    re.IGNORECASE,
)


# a shell prompt opening a line: "$ ls -l", "user@host:~/app$ make"
_PROMPT_RE = lazy_pattern(r"^\s*(?:[\w.-]+@[\w.-]+(?::\S*)?\s*)?\$\s+\S")


def without_pasted(text: str) -> str:
    """A user's message without the text it hands over as someone else's: the lines after an introduction that ends
    in a colon ("the vendor's FAQ says:"), up to the next blank line (the first block, when a blank line follows
    the introduction), and a terminal session, from a line opening on a shell prompt ("$ ls -l") to the next blank
    line. A page, a file or an output pasted into the message is not what the user says ("bin -> /usr/bin" and
    "started as pid 4242" read like the user's mappings)."""
    lines = text.splitlines()
    out: list[str] = []
    pasting = started = False
    for line in lines:
        if not pasting and _PROMPT_RE.match(line):
            pasting = started = True
            out.append("")
            continue
        if pasting:
            if line.strip():
                started = True
                out.append("")
                continue
            if started:
                pasting = started = False
            out.append(line)
            continue
        out.append(line)
        pasting = bool(_PASTE_INTRO_RE.search(line))
    return "\n".join(out)


__all__ = [
    "ACCEPTED",
    "ASSISTANT",
    "OBSERVED",
    "USER",
    "ToolText",
    "attribute",
    "claims_about_user",
    "next_user_text",
    "not_the_speakers",
    "objects",
    "relays_a_source",
    "risky",
    "without_pasted",
]
