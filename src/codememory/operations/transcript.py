"""The captured turns behind a memory, a daily-log anchor or a session, as transcripts
(`codememory transcript`, MCP `memory_transcript`).

A reference is one of:
- a memory id (`mem_1a2b3c4d`): the turn named by the memory's source, e.g.
  "opencode session:ses_abc turn:3" (see `Turn.memory_source`; any "<tool> session:S turn:N");
- a daily-log anchor (`<!-- session:ses_abc turn:msg_123 -->`): that turn;
- a session id (`ses_abc`), optionally with a turn (its number, 1 = first, or its id): the session's
  captured turns, or that one.

It resolves to rows of `captured_turns`. Each turn's transcript comes from the source's own record
when codememory can read it (OpenCode's database), else from the turn's entry in the daily log (found
by its anchor), else from the summary stored when it was captured; `origin` says which and
`fallback_reason` why. Everything returned passes through `privacy.scrub`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field

from codememory.capture.daily_log import ANCHOR_RE, MEMORY_DIR
from codememory.capture.opencode_db import OpenCodeDB
from codememory.capture.opencode_turns import SOURCE as OPENCODE
from codememory.core import safe_files
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.model import ID_RE, session_position
from codememory.core.project import STORE_DIR, store_dir
from codememory.core.result import Result
from codememory.errors import InvalidInput, NotFound, OpenCodeDBError
from codememory.service.project_store import Store
from codememory.store.capture import CapturedTurn, CaptureTables
from codememory.text.privacy import scrub

DEFAULT_MAX_TURNS = 10
MAX_REFERENCE = 500
_SOURCE_NAME_RE = lazy_pattern(r"^\s*(?P<source>[A-Za-z][\w.-]*)\s+session[:=]")
_SESSION_ID_RE = lazy_pattern(r"^[^\s<>]+$")
_HEADING_RE = lazy_pattern(r"^#{1,6}\s")


# What the MCP tool and the daemon endpoint take as a reference (one definition for both schemas).
TranscriptReference = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_REFERENCE,
        description="A memory id (mem_1a2b3c4d), a daily-log anchor (<!-- session:ses_abc turn:msg_123 -->) "
        "or a captured session id (ses_abc).",
    ),
]


@dataclass(frozen=True)
class Reference:
    kind: str  # "memory" | "anchor" | "session"
    session_id: str
    turn_id: str | None = None
    seq: int | None = None
    source: str | None = None  # the capture source when the reference names one (a memory's source)
    memory_id: str | None = None

    def describe(self) -> str:
        turn = f" turn {self.turn_id}" if self.turn_id else f" turn {self.seq}" if self.seq is not None else ""
        what = f"session {self.session_id}{turn}"
        return f"memory {self.memory_id} (from {what})" if self.memory_id else what


@dataclass(frozen=True)
class TurnTranscript:
    turn: CapturedTurn
    origin: str  # "opencode" | "daily_log" | "summary"
    text: str
    fallback_reason: str | None = None  # why the source's own record was not used

    def view(self) -> TranscriptTurn:
        """The turn as returned, every text scrubbed (the captured rows and the daily log are untrusted)."""
        t = self.turn
        log_path = f"{STORE_DIR}/{t.log_path}" if _log_name(t.log_path) else None  # relative to the project root
        return TranscriptTurn(
            scrub(t.source),
            scrub(t.session_id),
            scrub(t.turn_id),
            t.seq,
            scrub(t.started_at),
            None if t.ended_at is None else scrub(t.ended_at),
            None if log_path is None else scrub(log_path),
            scrub(self.origin),
            None if self.fallback_reason is None else scrub(self.fallback_reason),
            scrub(self.text),
        )


@dataclass
class TranscriptTurn(Result):
    source: str
    session_id: str
    turn_id: str
    seq: int  # 1 = the session's first captured turn
    started_at: str
    ended_at: str | None
    log_path: str | None  # the daily log with the turn's entry, relative to the project root
    origin: str  # where the transcript comes from: opencode, daily_log or summary
    fallback_reason: str | None  # why not from the coding tool's own record
    transcript: str


@dataclass
class Transcript(Result):
    """`{reference, kind, memory_id, session_id, turns, turns_total, truncated}`: `transcript --json`, MCP
    memory_transcript, the daemon's /memory/transcript."""

    reference: str
    kind: str  # memory, anchor or session
    memory_id: str | None
    session_id: str
    turns: list[TranscriptTurn]
    turns_total: int
    truncated: bool  # more turns were captured than returned


# --------------------------------------------------------------------------- references
def _turn_selector(turn: str | int | None) -> tuple[str | None, int | None]:
    """(turn id, seq) from a --turn value: digits are a turn number, anything else a turn id."""
    if turn is None or turn == "":
        return None, None
    text = str(turn).strip()
    if text.lstrip("-").isdigit():
        seq = int(text)
        if seq < 1:
            raise InvalidInput(f"turn numbers start at 1, got {seq}")
        return None, seq
    if not _SESSION_ID_RE.match(text):
        raise InvalidInput(f"not a turn number or turn id: {scrub(text)[:80]!r}")
    return text, None


def _from_memory(store: Store, memory_id: str) -> Reference:
    memory = store.get(memory_id, touch=False)
    session, seq = session_position(memory.source)
    if session is None:
        shown = repr(memory.source) if memory.source else "none"
        raise InvalidInput(f"memory {memory_id} does not come from a captured session turn (its source is {shown})")
    named = _SOURCE_NAME_RE.match(memory.source or "")
    return Reference("memory", session, seq=seq, source=named.group("source") if named else None, memory_id=memory_id)


def parse_reference(store: Store, reference: str, turn: str | int | None = None) -> Reference:
    """What `reference` names (see the module docstring). Raises InvalidInput for what it cannot be."""
    text = reference.strip()
    if not text:
        raise InvalidInput("give a memory id, a daily-log anchor or a session id")
    if len(text) > MAX_REFERENCE:
        raise InvalidInput(f"reference is {len(text):,} characters; a memory id, anchor or session id is shorter")
    turn_id, seq = _turn_selector(turn)
    session_ref = not ID_RE.match(text) and not ANCHOR_RE.search(text) and _SESSION_ID_RE.match(text)
    if (turn_id or seq) and not session_ref:
        raise InvalidInput("--turn / turn goes with a session id; a memory id or an anchor names its turn already")
    if ID_RE.match(text):
        return _from_memory(store, text)
    if text.startswith("mem_") and not (turn_id or seq):  # meant as a memory id: say so, as show and forget do
        raise InvalidInput(f"not a memory id (expected mem_ and 8 hex digits): {scrub(text)[:80]}")
    if anchor := ANCHOR_RE.search(text):
        return Reference("anchor", anchor.group(1), turn_id=anchor.group(2))
    if session_ref:
        return Reference("session", text, turn_id=turn_id, seq=seq)
    session, position = session_position(text)  # a memory's source pasted as is
    if session is not None and "session" in text:
        named = _SOURCE_NAME_RE.match(text)
        return Reference("session", session, seq=position, source=named.group("source") if named else None)
    raise InvalidInput(
        "not a memory id (mem_ and 8 hex digits), a daily-log anchor (<!-- session:ID turn:ID -->) "
        f"or a session id: {scrub(text)[:80]!r}"
    )


# ------------------------------------------------------------------------------ turns
def _sources(tables: CaptureTables, preferred: str | None) -> list[str]:
    known = sorted(tables.counts().by_source)
    if preferred in known:
        return [preferred, *(s for s in known if s != preferred)]  # a source name is a hint, not a filter
    return known


def captured_turns(tables: CaptureTables, ref: Reference) -> list[CapturedTurn]:
    """The captured turns `ref` names, in session order (the first source that has them)."""
    for source in _sources(tables, ref.source):
        turns = [
            t
            for t in tables.turns(source, ref.session_id)
            if (ref.turn_id is None or t.turn_id == ref.turn_id) and (ref.seq is None or t.seq == ref.seq)
        ]
        if turns:
            return turns
    raise NotFound(f"no captured turn for {ref.describe()} in this project")


# ------------------------------------------------------------------------- transcripts
_LOG_PATH_RE = lazy_pattern(rf"^{MEMORY_DIR}/[A-Za-z0-9][A-Za-z0-9_.-]{{0,200}}\.md$")
MAX_LOG_READ = 64_000_000


def _log_name(log_path: str | None) -> str | None:
    """The file name of a stored log_path when it is a daily log (`memory/<name>.md`); the value comes
    from a database anyone may have committed, so anything else is not a path we read or return."""
    if log_path and _LOG_PATH_RE.match(log_path) and ".." not in log_path:
        return log_path.split("/", 1)[1]
    return None


def daily_log_entry(folder: Path, turn: CapturedTurn) -> str | None:
    """The turn's entry (its `### HH:MM` heading, anchor and bullets) from the daily log it was written
    to, else from any daily log in `folder` (a log may have been renamed or merged); None if gone."""
    name = _log_name(turn.log_path)
    recorded = folder / name if name else None
    candidates = [recorded] if recorded else []
    candidates += sorted(p for p in folder.glob("*.md") if p != recorded)
    for path in candidates:
        entry = _entry_in(path, turn.session_id, turn.turn_id)
        if entry is not None:
            return entry
    return None


def _entry_in(path: Path, session_id: str, turn_id: str) -> str | None:
    try:
        lines = safe_files.read_text(path, MAX_LOG_READ, errors="replace").splitlines()
    except OSError:  # gone, or a link (never followed)
        return None
    for i, line in enumerate(lines):
        anchor = ANCHOR_RE.search(line)
        if anchor and anchor.groups() == (session_id, turn_id):
            start = i - 1 if i > 0 and lines[i - 1].startswith("### ") else i
            end = next((j for j in range(i + 1, len(lines)) if _HEADING_RE.match(lines[j])), len(lines))
            return "\n".join(lines[start:end]).strip() + "\n"
    return None


class _Readers:
    """OpenCode's database, found once per call and only when an OpenCode turn needs it."""

    def __init__(self, configured: str, env: Mapping[str, str]) -> None:
        self.configured = configured
        self.env = env
        self._opencode: OpenCodeDB | None = None
        self._tried = False

    def opencode(self) -> OpenCodeDB | None:
        if not self._tried:
            self._tried = True
            self._opencode = OpenCodeDB.discover(self.env, configured=self.configured)
        return self._opencode

    def close(self) -> None:
        if self._opencode is not None:
            self._opencode.close()


def _from_source(readers: _Readers, turn: CapturedTurn) -> tuple[str | None, str | None]:
    """(transcript, None) from the source's own record, or (None, why not)."""
    if turn.source != OPENCODE:
        return None, f"codememory cannot read {turn.source} transcripts"
    reader = readers.opencode()
    if reader is None:
        return None, "no OpenCode database found"
    try:
        text = reader.transcript(turn.session_id, turn.turn_id)
    except OpenCodeDBError as exc:
        return None, str(exc)
    if text is None:
        return None, f"the turn is no longer in OpenCode's database ({reader.path})"
    return text, None


def transcript_of(readers: _Readers, log_folder: Path, turn: CapturedTurn) -> TurnTranscript:
    text, why = _from_source(readers, turn)
    if text is not None:
        return TurnTranscript(turn, turn.source, scrub(text))
    entry = daily_log_entry(log_folder, turn)
    if entry is not None:
        return TurnTranscript(turn, "daily_log", scrub(entry), why)
    reason = f"{why}; its daily-log entry is gone too"
    return TurnTranscript(turn, "summary", scrub(turn.summary), reason)


def transcript(
    store: Store,
    reference: str,
    *,
    turn: str | int | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    env: Mapping[str, str] = os.environ,
) -> Transcript:
    """The transcripts behind `reference` (see the module docstring), at most `max_turns` of them (the
    session's first ones; ask for a turn by number for the others).

    Raises InvalidInput for a malformed reference and NotFound when nothing captured matches it."""
    if max_turns < 1:
        raise InvalidInput("max_turns must be at least 1")
    ref = parse_reference(store, reference, turn)
    found = captured_turns(CaptureTables(store.db), ref)
    readers = _Readers(store.config.capture.opencode_db, env)
    try:
        shown = [transcript_of(readers, store_dir(store.root) / MEMORY_DIR, t) for t in found[:max_turns]]
    finally:
        readers.close()
    return Transcript(
        scrub(reference.strip()),
        ref.kind,
        ref.memory_id,
        scrub(ref.session_id),
        [t.view() for t in shown],
        len(found),
        len(found) > len(shown),
    )
