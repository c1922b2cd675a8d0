"""The rules that read prose: `*Remember*:` notes, and per message the sentences `rules.classify` finds
durable, with their context joined in (one memory per fact):
- a decision or rejection followed by its reason ("… Because the project has no dependencies.") carries it;
- a choice that follows from the sentence before ("SQLAlchemy is overkill here. Ok, let's stay with sqlite3
  then.") carries that sentence, and a rejection next to the decision it explains becomes part of it: what was
  chosen, what was rejected and why are one memory;
- todos (see `todos`): the user's always, the assistant's only in the span's last turns.
Code blocks, quoted (`>`) lines, indented and log-like lines are never read (see `prose_units`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from codememory.capture.turns import Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import ASSISTANT, USER, Candidate, Statement, entity_names, spoken
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.choices import COUNTERFACTUAL_RE, REASON_RE, is_reason
from codememory.extract.clean import clip, tidy, unquote_message
from codememory.extract.phrasings import WEIGHED_RE
from codememory.extract.rules import classify, is_consequence, usable
from codememory.extract.speakers import ToolText, not_the_speakers, without_pasted
from codememory.extract.todos import text_todos
from codememory.text.remember import extract_remember_notes, without_remember_notes

__all__ = ["classify", "prose_units", "remember_candidates", "sentences", "statement_candidates", "tidy"]

_ASSISTANT_TODO_TAIL = 3  # an assistant's "still need to" counts only in the span's last turns

# ----------------------------------------------------------------------------------------- prose
_FENCE_RE = lazy_pattern(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_SKIP_LINE_RE = lazy_pattern(
    r"^(?:>|\t| {4}|\s*(?:\$ |>>>|E {2,}|File \"|Traceback|at \S+ \(|\[\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}[ T]\d{2}:"
    r"|(?:def|class|import|from \S+ import|const|let|var|function|return|public|private|#include)\b)"
    r"|.*(?:[;{]|\)\s*:)\s*$)"
)
_BULLET_RE = lazy_pattern(r"^\s*(?:[-*+\u2022]|\d{1,2}[.)])\s+")
_HEADING_RE = lazy_pattern(r"^\s*#{1,6}\s+")
SENTENCE_SPLIT_RE = lazy_pattern(r"(?<=[.!?])[\"'\u201d]?\s+(?=[A-Z`\"'(*\u201c])")


def prose_units(text: str) -> list[str]:
    """Paragraphs and bullets of prose: code blocks, quotes, indented and log-like lines removed."""
    text = _FENCE_RE.sub("\n\n", unquote_message(text))
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


_USER_SPLIT_RE = lazy_pattern(r"(?<=[.!?])[\"'\u201d]?\s+(?=[\w`\"'(*\u201c])")
_NO_SPLIT_AFTER_RE = lazy_pattern(
    r"(?:\b(?:e\.g|i\.e|etc|vs|approx|incl|nr|no|ca|z\.b|d\.h|mr|dr|st)|\d|\b[a-z])\.$", re.I
)
# a title is followed by its name, which is capitalised: "approved by dr. Nowak" is one sentence
_TITLE_END_RE = lazy_pattern(r"\b(?:mr|mrs|dr|prof)\.$", re.I)  # not "ms": "a few ms. Then"
_ABBREVIATION_TAIL = 12  # longer than "approx." with the character before it, which "\b" looks at


def user_sentences(unit: str) -> list[str]:
    """A user's paragraph in sentences, whatever the case of the next word (terse users write in lower case:
    "moisture next. raw adc number means nothing to me"), not after an abbreviation, a number or an initial, nor
    after a title before its name."""
    out: list[str] = []
    for piece in _USER_SPLIT_RE.split(unit):
        # only the sentence's tail is looked at: a long chain of joined pieces is not scanned again at each join
        tail = out[-1][-_ABBREVIATION_TAIL:] if out else ""
        if out and (_TITLE_END_RE.search(tail) or (_NO_SPLIT_AFTER_RE.search(tail) and not piece[:1].isupper())):
            out[-1] += " " + piece
        else:
            out.append(piece)
    return out


def sentences(text: str) -> list[str]:
    return [s.strip() for unit in prose_units(text) for s in SENTENCE_SPLIT_RE.split(unit) if s.strip()]


# ------------------------------------------------------------------------------------ statements
_IMPORTANCE = {
    ("user", "decision"): 0.8,
    ("user", "rejected"): 0.7,
    ("user", "convention"): 0.75,
    ("user", "preference"): 0.7,
    ("user", "fact"): 0.6,
    ("assistant", "decision"): 0.65,
    ("assistant", "rejected"): 0.6,
    ("assistant", "convention"): 0.6,
    ("assistant", "preference"): 0.5,
    ("assistant", "fact"): 0.5,
    ("user", "observation"): 0.6,  # a fact about the data: what a value stands for, a file's encoding
    ("assistant", "observation"): 0.5,
    ("user", "gotcha"): 0.65,
    ("assistant", "gotcha"): 0.6,
}
REMEMBER_IMPORTANCE = 0.8
_CHOICES = ("decision", "rejected")
_BAN_LIST_RE = lazy_pattern(r"^\W*no\s+[^,.]+(?:,\s*|\s+and\s+)no\s+", re.IGNORECASE)
_RULES = ("convention", "preference")


def remember_candidates(
    text: str, seq: int, role: str = "user", tool_text: ToolText | None = None
) -> tuple[list[Candidate], list[str]]:
    """`*Remember*:` notes as candidates, and their bodies (so their sentences are not taken twice). The
    assistant's notes are its own statements (accepted or not, see `speakers`), never its claims about the user
    or what a source says."""
    out: list[Candidate] = []
    bodies: list[str] = []
    for note in extract_remember_notes(text):
        body = note.text  # verbatim, as Store.remember_scan stores it: the same note is then a duplicate
        if not body.strip():
            continue
        bodies.append(" ".join(body.split()).lower())
        if role != "user" and not _own(body, tool_text):
            continue
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
                said_by=USER if role == "user" else ASSISTANT,
            )
        )
    return out, bodies


def _own(sentence: str, tool_text: ToolText | None) -> bool:
    """An assistant's sentence that states its own view: not a claim about the user, a relay of a source or a
    copy of a tool's output (speakers)."""
    return not (not_the_speakers(sentence) or (tool_text is not None and tool_text.copies(sentence)))


def message_statements(raw: Sequence[str], role: str, tool_text: ToolText | None = None) -> list[Statement]:
    """The statements of one message's sentences (in order), each choice with its reason and the
    sentence it follows from joined in. The assistant's sentences that are not its own view state nothing."""
    found: list[Statement | None] = [
        next(iter(classify(s, role=role)), None) if role == "user" or _own(s, tool_text) else None for s in raw
    ]
    parts: list[list[int]] = [[i] for i in range(len(raw))]  # which sentences each statement spans
    for i in range(len(raw) - 1, 0, -1):
        # a ban list right after a rule spells the rule out ("… stuck on GCC 9, so nothing past C++17. No
        # std::span, no concepts."): one memory
        after, rule = found[i], found[i - 1]
        if after and rule and rule.rule == "convention" and after.rule == "convention" and _BAN_LIST_RE.match(raw[i]):
            parts[i - 1] += parts[i]
            parts[i], found[i] = [], None
    if role == "user":
        _resolve_pronoun_objects(raw, found, parts)
        _resolve_named_versions(raw, found, parts)
    for i, st in enumerate(found):
        if st is None or st.rule not in _CHOICES:
            continue
        # the sentence before: a rejection it settles, or what a "… then" / "So …" follows from
        j = i - 1
        if j >= 0 and (found[j] is None or found[j].rule in _CHOICES) and parts[j]:  # type: ignore[union-attr]
            before = found[j]
            # "A unique constraint on …. I thought about a Redis lock, but …": the choice, then what it beat
            weighed = before is None and st.rule == "rejected" and bool(WEIGHED_RE.search(raw[i]))
            joins = (before is not None and before.rule in _CHOICES and (st.rule != before.rule)) or (
                before is None and (is_consequence(raw[i]) or weighed) and usable(tidy(raw[j]))
            )
            if joins:
                parts[i] = parts[j] + parts[i]
                parts[j] = []
                found[j] = None
                st = Statement(st.text, "decision", "decision", True) if weighed else _joined(st, before)
                found[i] = st
        # the sentence after: its reason, or the alternative it was chosen over ("The usual X would …")
        k = i + 1
        if st.rule == "decision" and k < len(raw) and found[k] is None and COUNTERFACTUAL_RE.match(tidy(raw[k])):
            parts[i] = parts[i] + [k]
            parts[k] = []
            continue
        # "X rather than Y" names what it beat but not why: the sentence that explains still belongs to it
        unexplained = not st.has_reason or (st.rule == "decision" and not REASON_RE.search(tidy(raw[i])))
        if unexplained and k < len(raw) and found[k] is None and (is_reason(raw[k]) or _explains(raw[k], raw[i])):
            parts[i] = parts[i] + [k]
            parts[k] = []
            found[i] = Statement(st.text, st.category, st.rule, True)
    out: list[Statement] = []
    for i, st in enumerate(found):
        if st is None or not parts[i]:
            continue
        text = " ".join(tidy(raw[n]) for n in parts[i]) if len(parts[i]) > 1 else st.text
        out.append(Statement(clip(text), st.category, st.rule, st.has_reason))
    return out


# a short rule whose object is a bare pronoun ("Don't spend my B2 money on them.") names nothing on its own
# ("keep it dependency-free" is about the project: "it" counts only after a preposition, "depend on it")
_PRONOUN_OBJECT_RE = lazy_pattern(
    r"\b(?:them|those|these)\b(?!\s*(?:'s|is|was|are)\b)|\b(?:on|to|with|for|in|of|from|into|about)\s+it\b", re.I
)
_PRONOUN_LEAD_RE = lazy_pattern(r"^\W*(?:it|they|those|these|that|this)(?:'s|'re|\s)", re.IGNORECASE)
SHORT_RULE_WORDS = 8
MAX_REFERENT_SENTENCES = 2


def _resolve_pronoun_objects(raw: Sequence[str], found: list[Statement | None], parts: list[list[int]]) -> None:
    """A user's short rule about "them" / "it" carries the sentences before it that say what they are ("the backup
    includes /srv/media, … 2 TB of films. They're all ripped from our own DVDs. Don't spend my B2 money on them."),
    back to the first that does not itself open on a pronoun; none usable: the rule is dropped."""
    for i, st in enumerate(found):
        if st is None or st.rule == "todo" or not parts[i] or len(raw[i].split()) > SHORT_RULE_WORDS:
            continue
        if not _PRONOUN_OBJECT_RE.search(raw[i]):
            continue
        before: list[int] = []
        j = i - 1
        while j >= 0 and len(before) < MAX_REFERENT_SENTENCES and parts[j] == [j] and found[j] is None:
            before.insert(0, j)
            if not _PRONOUN_LEAD_RE.match(raw[j]) and usable(tidy(raw[j])):
                break
            j -= 1
        if before and not _PRONOUN_LEAD_RE.match(raw[before[0]]):
            parts[i] = before + parts[i]
            for n in before:
                parts[n] = []
        else:
            found[i] = None


# "the Scala version is not up for discussion" after "Spark 3.5.0 on EMR 7.0, Scala 2.12.": which version it is
_THE_VERSION_RE = lazy_pattern(r"\bthe\s+(?P<name>[A-Za-z][\w.+-]*)\s+version\b", re.IGNORECASE)


def _resolve_named_versions(raw: Sequence[str], found: list[Statement | None], parts: list[list[int]]) -> None:
    """A user's rule about "the X version" carries the sentence just before it that gives X's version number."""
    for i, st in enumerate(found):
        m = _THE_VERSION_RE.search(raw[i]) if st is not None and i and parts[i] == [i] else None
        if m is None or re.search(rf"{re.escape(m.group('name'))}\s+v?\d+(?:\.\d+)+", raw[i], re.I):
            continue  # no rule about a version, or it says the number itself
        j = i - 1
        if (
            parts[j] == [j]
            and found[j] is None
            and re.search(rf"\b{re.escape(m.group('name'))}\s+v?\d+(?:\.\d+)+", raw[j], re.I)
        ):
            parts[i] = [j, i]
            parts[j] = []


_EXPLAINS_RE = lazy_pattern(
    r"\b(?:so|because|since|would|could\s+never|can'?t|cannot|won'?t|never|otherwise|which\s+means|means)\b", re.I
)
_NAME_RE = lazy_pattern(r"[A-Za-z][\w.:/-]*[A-Z0-9_.:/-][\w.:/-]*|[a-z]{5,}")


def _explains(sentence: str, choice: str) -> bool:
    """A sentence after a choice that goes on about what it chose or turned down, with a cause or a consequence
    ("… rather than minAvailable: 1. The HPA will be allowed down to one replica, and with minAvailable: 1 a node
    drain could never evict that last pod, so …")."""
    s = tidy(sentence)
    if not usable(s) or s.endswith("?") or not _EXPLAINS_RE.search(s):
        return False
    named = {w.lower() for w in _NAME_RE.findall(choice)} & {w.lower() for w in _NAME_RE.findall(s)}
    return any(any(ch.isdigit() or ch in ".:_/" or ch.isupper() for ch in w) or len(w) >= 6 for w in named)


def _joined(st: Statement, before: Statement | None) -> Statement:
    if before is None:
        return Statement(st.text, st.category, st.rule, True)
    if "decision" in (st.rule, before.rule):
        return Statement(st.text, "decision", "decision", True)
    return Statement(st.text, st.category, st.rule, True)


def statement_candidates(turns: Sequence[Turn]) -> list[Candidate]:
    """Remember notes, decisions, rejected alternatives, conventions, preferences, facts and textual todos."""
    out: list[Candidate] = []
    last_seq = max((t.seq for t in turns), default=0)
    tool_text = ToolText.of(turns)
    for turn in turns:
        texts = [("user", turn.user_text)] + [("assistant", a) for a in turn.assistant_texts]
        for role, raw in texts:
            text = scrub(raw) if role != "user" else without_pasted(scrub(raw))
            if not text.strip():
                continue
            who = USER if role == "user" else ASSISTANT
            notes, bodies = remember_candidates(text, turn.seq, role, tool_text)
            out += notes
            # the prose around a note still counts ("We decided X. *Remember*: Y."); the note itself not again
            rest = without_remember_notes(text)
            units = [u for u in prose_units(rest) if not any(u.lower() in b or b in u.lower() for b in bodies)]
            split = user_sentences if role == "user" else SENTENCE_SPLIT_RE.split
            raw_sentences = [
                s
                for unit in units
                for s in split(unit)
                if s.strip() and not any(s.lower().strip() in b for b in bodies)
            ]
            for st in message_statements(raw_sentences, role, tool_text):
                if role != "user" and st.category in _RULES and tool_text.derives(st.text):
                    continue  # a rule the assistant restates from a page or a file is the page's, not the user's
                importance = _IMPORTANCE[(role, st.rule)]
                entities = entity_names(st.text)
                out.append(Candidate(st.text, st.category, importance, turn.seq, entities, rule=st.rule, said_by=who))
            if role == "user" or turn.seq > last_seq - _ASSISTANT_TODO_TAIL:
                todos = text_todos(units, _FENCE_RE.sub("\n", rest), turn.seq, role)
                out += [spoken(c, who) for c in todos if role == "user" or _own(c.text, tool_text)]
    return out
