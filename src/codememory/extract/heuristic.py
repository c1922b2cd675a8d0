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
The prose rules are in `statements`, the gotchas in `gotchas`; this module adds the files and todos and puts
them together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from codememory.capture.turns import SessionInfo, Todo, Turn
from codememory.extract.candidate import Candidate, entity_names
from codememory.extract.compress import analyze_tool, relative_path, tool_kind
from codememory.extract.gotchas import gotcha_candidates
from codememory.extract.statements import remember_candidates, statement_candidates, tidy
from codememory.text.privacy import scrub

MAX_FILES_LISTED = 8
FILES_IMPORTANCE = 0.3
_TODO_PRIORITY = {"high": 0.7, "medium": 0.55, "low": 0.4}


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
        out.append(Candidate(text, "todo", importance, seq, entity_names(content), rule="agent_todo"))
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
            out += remember_candidates(scrub(raw), turn.seq)[0]
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
