"""Durable memories from a session's turns without any model (DESIGN.md principle 2).

Rules, tuned for precision over recall:
- `*Remember*: …` notes (codememory.text.remember), in user or assistant text, always kept.
- Decisions ("we decided to…", "let's go with…"), with "use X instead of Y" also giving a rejected
  alternative; rejected alternatives ("don't use…", "avoid…", "instead of X, …"); conventions and
  preferences ("always…", "never…", "prefer…", "I'd rather…"); pending work ("TODO: …", "still need to…").
  Only the user's statements count, except the assistant's explicit "we decided / we agreed / we rejected",
  convention statements and (in the span's last turns only) its "still need to" lines: an assistant
  narrates plans that are not decisions.
- Skipped: questions, hypotheticals ("if…", "maybe", "could", "what if"), negated or open decisions
  ("we haven't decided"), statements about a pronoun ("let's go with that"), fenced and indented code,
  quoted (`>`) lines, pasted log lines, and anything in tool input or output.
- Gotchas: a shell command that failed (an error line, a failing test summary or a non-zero exit) and
  the same command succeeding later in that turn or the next one, with the edits or commands in between
  as the fix ("`pytest` failed with ImportError: …; fixed by editing src/app.py.").
- Pending todos: the agent's own todo list (OpenCode's `todo` table) when given, pending items only.
- Files touched: one fact memory per extracted span listing the most-touched files.

Every text is scrubbed before it is looked at; every candidate names the turn (`seq`) it came from.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from codememory.capture.turns import SessionInfo, Todo, Turn
from codememory.extract.compress import ToolOutcome, analyze_tool, relative_path, tool_kind
from codememory.text.privacy import scrub
from codememory.text.remember import extract_remember_notes, without_remember_notes

MAX_FILES_LISTED = 8
_ASSISTANT_TODO_TAIL = 3  # an assistant's "still need to" counts only in the span's last turns


@dataclass(frozen=True)
class Candidate:
    """A memory proposed by an extractor, before the store's dedup."""

    text: str
    category: str
    importance: float
    seq: int  # the turn it came from
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    expires_at: datetime | None = None
    rule: str = ""  # which rule produced it: remember, decision, rejected, convention, preference, gotcha, ...


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


def _entities(text: str) -> tuple[str, ...]:
    from codememory.text.entities import extract_entities

    return tuple(e.name for e in extract_entities(text, limit=8))


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
GOTCHA_IMPORTANCE = 0.7
FILES_IMPORTANCE = 0.3
_TODO_PRIORITY = {"high": 0.7, "medium": 0.55, "low": 0.4}


def _remember(text: str, seq: int) -> tuple[list[Candidate], list[str]]:
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
                entities=_entities(body),
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
                Candidate(f"TODO: {body}", "todo", _IMPORTANCE[(role, "todo")], seq, _entities(body), rule="todo")
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
                out.append(Candidate(s, "todo", _IMPORTANCE[(role, "todo")], seq, _entities(s), rule="todo"))
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
            notes, bodies = _remember(text, turn.seq)
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
                            Candidate(st.text, st.category, importance, turn.seq, _entities(st.text), rule=st.rule)
                        )
            if role == "user" or turn.seq > last_seq - _ASSISTANT_TODO_TAIL:
                out += _todos_in(text, turn.seq, role, units)
    return out


# ---------------------------------------------------------------------------------------- gotchas
_RUNNER_PREFIXES = (
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("hatch", "run"),
    ("pdm", "run"),
    ("python", "-m"),
    ("python3", "-m"),
    ("npx",),
    ("bunx",),
    ("pnpx",),
    ("sudo",),
    ("time",),
    ("exec",),
)
_TWO_WORD = frozenset(
    {"npm", "yarn", "pnpm", "bun", "cargo", "go", "make", "dotnet", "mvn", "gradle", "./gradlew", "git", "docker",
     "kubectl", "deno", "mix", "bundle", "rake", "just", "task", "nox", "tox", "terraform", "helm", "swift"}
)  # fmt: skip
_ENV_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def command_key(command: str) -> str:
    """What makes two commands "the same" for gotchas: `cd x && uv run pytest -x tests/a.py` -> `pytest`,
    `npm run test -- --watch=false` -> `npm run`, `npm test` -> `npm test`."""
    segment = re.split(r"&&|\|\||;|\|", command)
    parts = [p.strip() for p in segment if p.strip()]
    main = next((p for p in parts if not re.match(r"^(?:cd|export|source|\.)\s", p)), parts[0] if parts else "")
    try:
        tokens = shlex.split(main)
    except ValueError:
        tokens = main.split()
    while tokens and _ENV_ASSIGN_RE.match(tokens[0]):
        tokens = tokens[1:]
    changed = True
    while changed and tokens:
        changed = False
        for prefix in _RUNNER_PREFIXES:
            if tuple(tokens[: len(prefix)]) == prefix and len(tokens) > len(prefix):
                tokens = tokens[len(prefix) :]
                changed = True
    if not tokens:
        return ""
    head = tokens[0].rsplit("/", 1)[-1] if tokens[0].startswith(("/", "~")) else tokens[0]
    if head in _TWO_WORD and len(tokens) > 1 and not tokens[1].startswith("-"):
        return f"{head} {tokens[1]}"
    return head


_CAUSE_RE = re.compile(
    r"\b(?:the\s+(?:problem|issue|cause|bug|error)\s+(?:was|is)|caused\s+by|turns\s+out|root\s+cause|"
    r"because\s+(?:the|it|we|of))\b",
    re.IGNORECASE,
)


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def gotcha_candidates(turns: Sequence[Turn], root: str | None = None) -> list[Candidate]:
    """A failed shell command followed by the same command succeeding, in the same or the next turn."""
    calls: list[tuple[int, Turn, ToolOutcome]] = []
    for index, turn in enumerate(turns):
        for call in turn.tool_calls:
            calls.append((index, turn, analyze_tool(call, root)))
    out: list[Candidate] = []
    used: set[int] = set()
    for i, (turn_index, _turn, failed) in enumerate(calls):
        if i in used or failed.kind != "shell" or not failed.failed or not failed.target:
            continue
        if not (failed.error or failed.summary or failed.exit_code):
            continue
        key = command_key(failed.target)
        if not key:
            continue
        last_failure = i
        for j in range(i + 1, len(calls)):
            later_index, later_turn, later = calls[j]
            if later_index > turn_index + 1:
                break
            if later.kind != "shell" or command_key(later.target or "") != key:
                continue
            if later.failed:
                last_failure = j
                used.add(j)
                continue
            fix = _fix_between(calls[last_failure + 1 : j])
            if fix:
                out.append(
                    _gotcha(calls[last_failure][2], fix, turns[calls[last_failure][0] : later_index + 1], later_turn)
                )
            used.add(j)
            break
    return out


def _fix_between(between: Sequence[tuple[int, Turn, ToolOutcome]]) -> str | None:
    files: list[str] = []
    commands: list[str] = []
    for _, _, o in between:
        if o.failed or not o.target:
            continue
        if o.kind in ("edit", "write") and o.target not in files:
            files.append(o.target)
        elif o.kind == "shell" and o.target not in commands:
            commands.append(o.target)
    parts = []
    if commands:
        parts.append("running " + _join([f"`{_short_command(c)}`" for c in commands[:2]]))
    if files:
        shown = files[:3] + ([f"{len(files) - 3} more files"] if len(files) > 3 else [])
        parts.append("editing " + _join(shown))
    return " and ".join(parts) or None


def _short_command(command: str, limit: int = 80) -> str:
    command = " ".join(command.split())
    return command if len(command) <= limit else command[: limit - 1] + "…"


def _gotcha(failure: ToolOutcome, fix: str, span: Sequence[Turn], fixed_in: Turn) -> Candidate:
    what = failure.error or failure.summary or (f"exit code {failure.exit_code}" if failure.exit_code else "an error")
    text = f"`{_short_command(failure.target or '')}` failed with {what.rstrip('.')}; fixed by {fix}."
    for turn in span:
        for raw in turn.assistant_texts:
            cause = next((tidy(s) for s in sentences(scrub(raw)) if _CAUSE_RE.search(s) and not s.endswith("?")), "")
            if cause and len(text) + len(cause) < 400:
                text = f"{text} {cause}"
                break
        else:
            continue
        break
    return Candidate(text, "gotcha", GOTCHA_IMPORTANCE, fixed_in.seq, _entities(text), rule="gotcha")


# ------------------------------------------------------------------------------ files and todos
def touched_files(turns: Iterable[Turn], root: str | None = None) -> list[str]:
    """Files written or edited, the most-touched first (then first touched first)."""
    counts: dict[str, int] = {}
    for turn in turns:
        seen: dict[str, None] = {}  # in the order the turn touched them
        for call in turn.tool_calls:
            if tool_kind(call.tool) not in ("write", "edit"):
                continue
            o = analyze_tool(call, root)
            if o.target and not o.failed:
                seen[o.target] = None
        for path in turn.files:
            seen[relative_path(path, root)] = None
        for path in seen:
            counts[path] = counts.get(path, 0) + 1
    order = {p: i for i, p in enumerate(counts)}
    return sorted(counts, key=lambda p: (-counts[p], order[p]))


def files_candidate(turns: Sequence[Turn], session: SessionInfo | None) -> Candidate | None:
    if not turns:
        return None
    root = session.project_root if session else None
    files = [scrub(f) for f in touched_files(turns, root)]
    files = [f for f in files if f.strip()]
    if not files:
        return None
    first, last = turns[0].seq, turns[-1].seq
    source = session.source if session else turns[0].source
    name = f"{source} session {turns[0].session_id}"
    title = scrub(session.title or "").strip() if session else ""
    if title:
        name += f' "{" ".join(title.split())[:80]}"'
    span = f"turn {first}" if first == last else f"turns {first}-{last}"
    shown = files[:MAX_FILES_LISTED]
    more = f" and {len(files) - len(shown)} more" if len(files) > len(shown) else ""
    text = f"Files changed in {name} ({span}): {', '.join(shown)}{more}."
    return Candidate(text, "fact", FILES_IMPORTANCE, last, tuple(shown), rule="files")


def todo_candidates(todos: Iterable[Todo], seq: int) -> list[Candidate]:
    out = []
    for todo in todos:
        if todo.status not in ("pending", "in_progress"):
            continue
        content = " ".join(scrub(todo.content).split())
        if not content:
            continue
        importance = _TODO_PRIORITY.get(todo.priority, _TODO_PRIORITY["medium"])
        text = tidy(f"Pending: {content}")
        out.append(Candidate(text, "todo", importance, seq, _entities(content), rule="agent_todo"))
    return out


# ------------------------------------------------------------------------------------- together
def explicit_candidates(
    turns: Sequence[Turn], session: SessionInfo | None = None, todos: Iterable[Todo] = ()
) -> list[Candidate]:
    """What needs no judgement, kept even when a model extracts: remember notes, the agent's pending
    todos and the files touched."""
    out: list[Candidate] = []
    for turn in turns:
        for raw in (turn.user_text, *turn.assistant_texts):
            out += _remember(scrub(raw), turn.seq)[0]
    return unique(out + _span_end_candidates(turns, session, todos))


def heuristic_candidates(
    turns: Sequence[Turn], session: SessionInfo | None = None, todos: Iterable[Todo] = ()
) -> list[Candidate]:
    """Every rule of this module over a span of turns, in turn order, without repeats."""
    turns = sorted(turns, key=lambda t: t.seq)
    root = session.project_root if session else None
    out = statement_candidates(turns) + gotcha_candidates(turns, root)
    return unique(out + _span_end_candidates(turns, session, todos))


def _span_end_candidates(turns: Sequence[Turn], session: SessionInfo | None, todos: Iterable[Todo]) -> list[Candidate]:
    """The agent's pending todos and the files touched, attributed to the span's last turn."""
    if not turns:
        return []
    out = todo_candidates(todos, turns[-1].seq)
    files = files_candidate(turns, session)
    return [*out, files] if files else out


def unique(candidates: Iterable[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for c in candidates:
        key = " ".join(c.text.lower().split())
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
