"""The rules that read prose: `*Remember*:` notes, decisions (with the rejected alternative of "use X instead
of Y"), rejected alternatives, conventions, preferences and pending work, from what the user says and (for
explicit "we decided / we agreed / we rejected", conventions and late "still need to" lines) the assistant.
Questions, hypotheticals, open decisions, statements about a pronoun, code, quotes and log lines are skipped
(see `heuristic` for the whole rule set)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from codememory.capture.turns import Turn
from codememory.extract.candidate import Candidate, entity_names
from codememory.text.privacy import scrub
from codememory.text.remember import extract_remember_notes, without_remember_notes

_ASSISTANT_TODO_TAIL = 3  # an assistant's "still need to" counts only in the span's last turns


# ----------------------------------------------------------------------------------------- prose
_FENCE_RE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_SKIP_LINE_RE = re.compile(
    r"^(?:>|\t| {4}|\s*(?:\$ |>>>|E {2,}|File \"|Traceback|at \S+ \(|\[\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}[ T]\d{2}:"
    r"|(?:def|class|import|from \S+ import|const|let|var|function|return|public|private|#include)\b)"
    r"|.*(?:[;{]|\)\s*:)\s*$)"
)
_BULLET_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s+")
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(*])")
_FILLER_RE = re.compile(
    r"^(?:ok(?:ay)?|so|also|and|but|alright|right|great|cool|well|yes|yeah|yep|good|perfect|thanks|"
    r"thank you|hmm|actually|note|fyi|btw|one more thing|important)\b[,!.:]?\s+",
    re.IGNORECASE,
)
_EMPHASIS_RE = re.compile(r"\*\*|__")


def prose_units(text: str) -> list[str]:
    """Paragraphs and bullets of prose: code blocks, quotes, indented and log-like lines removed."""
    text = _FENCE_RE.sub("\n\n", text)
    units: list[str] = []
    current: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or _SKIP_LINE_RE.match(line):
            if current:
                units.append(" ".join(current))
                current = []
            continue
        if _BULLET_RE.match(line) or _HEADING_RE.match(line):
            if current:
                units.append(" ".join(current))
            current = [_HEADING_RE.sub("", _BULLET_RE.sub("", line)).strip()]
            continue
        current.append(line.strip())
    if current:
        units.append(" ".join(current))
    return [u for u in units if u]


def sentences(text: str) -> list[str]:
    return [s.strip() for unit in prose_units(text) for s in _SENTENCE_SPLIT_RE.split(unit) if s.strip()]


def tidy(sentence: str) -> str:
    """A statement as memory text: no filler opening, no emphasis, capitalised, ends with a full stop."""
    s = " ".join(_EMPHASIS_RE.sub("", sentence).split())
    while True:
        stripped = _FILLER_RE.sub("", s, count=1)
        if stripped == s:
            break
        s = stripped
    s = s.strip(" -–—:")
    if not s:
        return ""
    s = s[0].upper() + s[1:]
    if s[-1].isalnum() or s[-1] in "`)\"'":
        s += "."
    return s


# ------------------------------------------------------------------------------------ statements
_PRONOUN = (
    r"(?:it|that|this|these|those|them|they|one|ones|both|either|neither|whichever|yours|your\s+\w+|option\s*\w*|"
    r"the\s+(?:first|second|third|last|former|latter|other|above|below)(?:\s+\w+)?)"
)
_PRONOUN_OBJECT_RE = re.compile(
    rf"^\s*{_PRONOUN}\s*(?:[.,;!]|$|\s+(?:one|approach|option|instead|then|for now)\b)", re.I
)
_PRONOUN_SUBJECT_RE = re.compile(
    r"^(?:it|that|this|these|those|they|he|she)\b(?!\s+(?:project|repo|repository|codebase|module|package|file|"
    r"function|class|service|app|library|team|api|endpoint|table|test))",
    re.IGNORECASE,
)
_QUESTION_START_RE = re.compile(
    r"^(?:what|why|how|which|who|where|when|should|shall|could|can|would|will|do|does|did|is|are|was|were|"
    r"have|has)\b[^.!]*$",
    re.IGNORECASE,
)
_HYPOTHETICAL_RE = re.compile(
    r"^(?:if|what if|suppose|supposing|imagine|assuming|in case|unless|whether|perhaps|maybe)\b"
    r"|\b(?:could|might|maybe|perhaps|probably|possibly|not sure|unsure|wonder(?:ing)?|hypothetical(?:ly)?|"
    r"alternatively|in theory|what if|or should|either way|would(?!\s+(?:rather|prefer|like)\b)|"
    r"was thinking|thinking about|considering|(?:one|another)\s+option|(?<!not\s)an\s+option)\b",
    re.IGNORECASE,
)
_OPEN_DECISION_RE = re.compile(
    r"\b(?:haven'?t|have not|hasn'?t|didn'?t|did not|not yet|undecided|not decided|still deciding|"
    r"not going (?:to|with)|won'?t)\b",
    re.IGNORECASE,
)

_X = r"(?P<x>[^.;!?]+?)"
_Y = r"(?P<y>[^,.;!?]+?)"
_INSTEAD_RE = re.compile(
    r"\b(?:use|using|go with|going with|switch(?:ed|ing)? to|chose|choose|pick(?:ed)?|migrat(?:e|ed|ing) to|"
    r"mov(?:e|ed|ing) to|stick with|prefer|stay with|keep)\s+"
    r"(?P<x>[^,.;!?]+?),?\s+(?:instead of|rather than|not)\s+"
    r"(?P<y>[^,.;!?]+?)(?:\s+(?P<why>(?:because|since|as|due to|so that)\b[^.;!?]+))?\s*(?:[.;!]|$)",
    re.IGNORECASE,
)
_INSTEAD_LEAD_RE = re.compile(
    r"^instead of\s+(?P<y>[^,]+?),\s*(?P<x>(?:we|let'?s|i|use|just)\b[^.;!?]+)", re.IGNORECASE
)
_DECISION_RE = re.compile(
    r"\b(?:we(?:'ve| have)?\s+decided\s+(?:to|on|that)|i(?:'ve| have)?\s+decided\s+(?:to|on|that)|"
    r"decided\s+to\s+go\s+with|(?:the\s+)?decision(?:\s+is)?\s*:|we\s+agreed\s+(?:to|on|that)|agreed\s*:|"
    r"let'?s\s+(?:go|stick|stay)\s+with|let'?s\s+switch\s+to|we(?:'ll|\s+will)\s+go\s+with|"
    r"we(?:'re|\s+are)\s+going\s+with|we\s+chose|we(?:'re|\s+are)\s+switching\s+to|the\s+plan\s+is\s+to|"
    r"going\s+forward,?|from\s+now\s+on,?)\s+" + _X + r"\s*(?:[.;!]|$)",
    re.IGNORECASE,
)
_LETS_USE_RE = re.compile(
    r"\blet'?s\s+use\s+(?P<x>[^.;!?]+?)(?:\s+(?:for|as|throughout|everywhere|from now on)\b[^.;!?]*)?\s*(?:[.;!]|$)",
    re.IGNORECASE,
)
_ASSISTANT_DECISION_RE = re.compile(
    r"\b(?:we(?:'ve| have)?\s+decided\s+(?:to|on|that)|(?:the\s+)?decision(?:\s+is)?\s*:|we\s+agreed\s+(?:to|on|that))"
    r"\s+" + _X + r"\s*(?:[.;!]|$)",
    re.IGNORECASE,
)
_REJECT_RE = re.compile(
    r"(?:^|\b(?:we|you|please|so|and|but|i)\s+)(?:don'?t|do\s+not|stop|no\s+longer)\s+"
    r"(?:use|using|add|adding|introduce|pull\s+in|depend\s+on|rely\s+on|go\s+with)\s+(?P<y>[^,.;!?]+?)"
    r"(?:\s+(?:because|since|as|due to|it|they|for)\b[^.;!?]*)?\s*(?:[.;!]|$)"
    r"|(?:^|\b(?:we|you|please|should|must|let'?s|always|to)\s+)avoid\s+(?P<y2>[^,.;!?]+?)"
    r"(?:\s+(?:because|since|as|due to|it|they)\b[^.;!?]*)?\s*(?:[.;!]|$)"
    r"|\bwe\s+(?:rejected|ruled\s+out|dropped|abandoned|gave\s+up\s+on)\s+(?P<y3>[^.;!?]+?)\s*(?:[.;!]|$)"
    r"|^(?P<y4>[^,.;!?]{2,60}?)\s+(?:is|was)\s+(?:not\s+an\s+option|ruled\s+out|a\s+dead\s+end|rejected)\b"
    r"|\bdecided\s+(?:not\s+to\s+(?:use|add|adopt|go\s+with)|against(?:\s+using)?)\s+(?P<y5>[^,.;!?]+)",
    re.IGNORECASE,
)
_ASSISTANT_REJECT_RE = re.compile(
    r"\bwe\s+(?:rejected|ruled\s+out|dropped|abandoned|gave\s+up\s+on)\s+" + _Y + r"(?:\s|[.;!,]|$)", re.IGNORECASE
)
_NOT_VERBS = (
    r"been|mind|had|has|was|were|is|are|did|do|does|worked|works|seen|happened|happens|knew|know|thought|"
    r"really|ever|once|before|again|got|get|gets|came|fails?|failed|breaks?|broke|shows?|showed|seems?|made|"
    r"returns?|printed|prints|liked"
)
_CONVENTION_RE = re.compile(
    rf"(?:^|[,:]\s*|\b(?:we|you|should|must|please|to|and|then|but|i\s+want\s+you\s+to|make\s+sure\s+to|"
    rf"remember\s+to)\s+)"
    rf"(?:always|never)\s+(?!(?:{_NOT_VERBS})\b)\w+"
    r"|\b(?:the|our|project'?s?|repo'?s?|codebase'?s?)\s+convention\s+is\b|\bby\s+convention\b"
    r"|^prefer\s+\w+",
    re.IGNORECASE,
)
_ASSISTANT_CONVENTION_RE = re.compile(
    r"\b(?:the|this|our)\s+(?:project'?s?|repo(?:sitory)?'?s?|codebase'?s?)\s+convention\s+is\b|\bby\s+convention\b",
    re.IGNORECASE,
)
_PREFERENCE_RE = re.compile(
    r"^(?:personally,?\s+)?i(?:'d|\s+would)?\s+(?:really\s+)?(?:prefer|rather|like\s+it\s+when|like\s+to|"
    r"always\s+want|want\s+you\s+to\s+always|want\s+you\s+to\s+never|hate\s+it\s+when|don'?t\s+like)\b"
    r"|^my\s+preference\s+is\b",
    re.IGNORECASE,
)
_TODO_LINE_RE = re.compile(r"^\s*(?:[-*+]\s+)?(?:TODO|FIXME)\b\s*[:\-–]\s*(?P<x>\S.{3,})$", re.MULTILINE)
_TODO_RE = re.compile(
    r"\b(?:(?:we|i|you)\s+)?still\s+(?:need|needs|have|has)\s+to\s+\w+"
    r"|\b(?:remaining\s+work|next\s+steps?|left\s+to\s+do|not\s+done\s+yet)\s*:\s*\S",
    re.IGNORECASE,
)


def _clause(text: str) -> str:
    return " ".join(text.split()).strip(" ,:-–—")


def _usable(sentence: str) -> bool:
    words = sentence.split()
    return (
        3 <= len(words) <= 60
        and len(sentence) <= 400
        and not sentence.rstrip().endswith("?")
        and not _QUESTION_START_RE.match(sentence)
    )


@dataclass(frozen=True)
class _Statement:
    text: str
    category: str
    rule: str


def classify(sentence: str, *, role: str = "user") -> list[_Statement]:
    """The memories one prose sentence states (often none). `role`: "user" or "assistant"."""
    s = tidy(sentence)
    if not s or not _usable(s) or _PRONOUN_SUBJECT_RE.match(s):
        return []
    hypothetical = bool(_HYPOTHETICAL_RE.search(s))
    user = role == "user"
    out: list[_Statement] = []
    if user and not hypothetical:
        m = _INSTEAD_RE.search(s) or _INSTEAD_LEAD_RE.match(s)
        if m and not _PRONOUN_OBJECT_RE.match(m.group("x")) and not _PRONOUN_OBJECT_RE.match(m.group("y")):
            x, y = _clause(m.group("x")), _clause(m.group("y"))
            why = m.groupdict().get("why")
            if m.re is _INSTEAD_LEAD_RE:
                rejected = f"Rejected {y} (instead: {x})."
            else:
                rejected = f"Rejected {y} in favour of {x}" + (f" ({_clause(why)})" if why else "") + "."
            out.append(_Statement(s, "decision", "decision"))
            out.append(_Statement(rejected[0].upper() + rejected[1:], "rejected_alternative", "rejected"))
            return out
    if hypothetical and not _PREFERENCE_RE.match(s):
        return []
    if user:
        if _PREFERENCE_RE.match(s):
            return [_Statement(s, "preference", "preference")]
        m = _REJECT_RE.search(s)
        if m:
            target = next((g for g in m.group("y", "y2", "y3", "y4", "y5") if g), "")
            if target and not _PRONOUN_OBJECT_RE.match(target):
                return [_Statement(s, "rejected_alternative", "rejected")]
            return []
        m = _DECISION_RE.search(s)
        if m and not _OPEN_DECISION_RE.search(s) and not _PRONOUN_OBJECT_RE.match(m.group("x")):
            if re.match(r"(?:always|never)\b", m.group("x"), re.IGNORECASE):
                return [_Statement(s, "convention", "convention")]  # "from now on, always ..."
            return [_Statement(s, "decision", "decision")]
        if _CONVENTION_RE.search(s):
            return [_Statement(s, "convention", "convention")]
        m = _LETS_USE_RE.search(s)
        if m and not _OPEN_DECISION_RE.search(s) and not _PRONOUN_OBJECT_RE.match(m.group("x")):
            if re.search(r"\bto\s+\w+", m.group("x")):
                return []  # "let's use grep to find the bug": a tool for a step, not a decision
            return [_Statement(s, "decision", "decision")]
        return []
    if _ASSISTANT_CONVENTION_RE.search(s):
        return [_Statement(s, "convention", "convention")]
    m = _ASSISTANT_REJECT_RE.search(s)
    if m and not _PRONOUN_OBJECT_RE.match(m.group("y")):
        return [_Statement(s, "rejected_alternative", "rejected")]
    m = _ASSISTANT_DECISION_RE.search(s)
    if m and not _OPEN_DECISION_RE.search(s) and not _PRONOUN_OBJECT_RE.match(m.group("x")):
        return [_Statement(s, "decision", "decision")]
    return []


_IMPORTANCE = {
    ("user", "decision"): 0.8,
    ("user", "rejected"): 0.7,
    ("user", "convention"): 0.75,
    ("user", "preference"): 0.7,
    ("user", "todo"): 0.6,
    ("assistant", "decision"): 0.65,
    ("assistant", "rejected"): 0.6,
    ("assistant", "convention"): 0.6,
    ("assistant", "todo"): 0.5,
}
REMEMBER_IMPORTANCE = 0.8


def remember_candidates(text: str, seq: int) -> tuple[list[Candidate], list[str]]:
    """`*Remember*:` notes as candidates, and their bodies (so their sentences are not taken twice)."""
    out: list[Candidate] = []
    bodies: list[str] = []
    for note in extract_remember_notes(text):
        body = note.text  # verbatim, as Store.remember_scan stores it: the same note is then a duplicate
        if not body.strip():
            continue
        bodies.append(" ".join(body.split()).lower())
        kinds = classify(body)
        category = kinds[0].category if kinds else "note"
        out.append(
            Candidate(
                text=body,
                category=category,
                importance=REMEMBER_IMPORTANCE,
                seq=seq,
                entities=entity_names(body),
                tags=tuple(note.tags),
                expires_at=note.expires_at,
                rule="remember",
            )
        )
    return out, bodies


def _todos_in(text: str, seq: int, role: str, units: Sequence[str]) -> list[Candidate]:
    out: list[Candidate] = []
    for m in _TODO_LINE_RE.finditer(_FENCE_RE.sub("\n", text)):
        body = tidy(m.group("x"))
        if body and not body.rstrip(".").endswith("?"):
            out.append(
                Candidate(f"TODO: {body}", "todo", _IMPORTANCE[(role, "todo")], seq, entity_names(body), rule="todo")
            )
    for unit in units:
        for sentence in _SENTENCE_SPLIT_RE.split(unit):
            s = tidy(sentence)
            if (
                s
                and _usable(s)
                and _TODO_RE.search(s)
                and not _HYPOTHETICAL_RE.search(s)
                and not _PRONOUN_SUBJECT_RE.match(s)
            ):
                out.append(Candidate(s, "todo", _IMPORTANCE[(role, "todo")], seq, entity_names(s), rule="todo"))
    return out


def statement_candidates(turns: Sequence[Turn]) -> list[Candidate]:
    """Remember notes, decisions, rejected alternatives, conventions, preferences and textual todos."""
    out: list[Candidate] = []
    last_seq = max((t.seq for t in turns), default=0)
    for turn in turns:
        texts = [("user", turn.user_text)] + [("assistant", a) for a in turn.assistant_texts]
        for role, raw in texts:
            text = scrub(raw)
            if not text.strip():
                continue
            notes, bodies = remember_candidates(text, turn.seq)
            out += notes
            # the prose around a note still counts ("We decided X. *Remember*: Y."); the note itself not again
            rest = without_remember_notes(text)
            units = [u for u in prose_units(rest) if not any(u.lower() in b or b in u.lower() for b in bodies)]
            for unit in units:
                for sentence in _SENTENCE_SPLIT_RE.split(unit):
                    if any(sentence.lower().strip() in b for b in bodies):
                        continue
                    for st in classify(sentence, role=role):
                        importance = _IMPORTANCE[(role, st.rule)]
                        out.append(
                            Candidate(st.text, st.category, importance, turn.seq, entity_names(st.text), rule=st.rule)
                        )
            if role == "user" or turn.seq > last_seq - _ASSISTANT_TODO_TAIL:
                out += _todos_in(text, turn.seq, role, units)
    return out
