"""What the hooks keep per assistant session (a Claude Code `session_id`, a Cursor `conversation_id`), in
`.codememory/journal/`, and the codememory session it maps to.

- `<assistant>-<session>.jsonl`: the files the assistant wrote or edited, one JSON line per edit. The sessions core
  derives a session's files from `git diff` at each checkpoint and has no row for individual edits; an append-only
  file costs no database write lock on every edit and survives a `sessions rebuild`.
- `<assistant>-<session>.json`: state: the codememory session id it maps to, whether it is closed, and, per
  transcript file, the byte offset already scanned for `*Remember*:` notes (nothing is read twice).
- `<assistant>-<session>.injected.json`: the lines the hooks injected into this session's context
  (codememory.operations.hook_injected), so none is injected twice. A file of its own: the prompt hooks write it
  while a Stop hook may be rewriting the state file, and neither must undo the other's write.

Only the standard library and codememory's safe file I/O are imported at the top: an edit hook only appends a line.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory.assistants import REGISTRY
from codememory.core import safe_files

if TYPE_CHECKING:
    from codememory.operations.hook_injected import Injected
    from codememory.service.project_store import Store

STORE_DIR = ".codememory"
MAX_STATE_BYTES = 4_000_000  # a session's state file (transcript cursors); a bigger one is not ours
MAX_JOURNAL_BYTES = 16_000_000  # the edits journal read back at session end
# The assistant's session id in the environment of the processes it starts (Claude Code 2.1.154+ gives it
# to stdio MCP servers): the MCP server's checkpoint then writes into the hooks' session.
SESSION_ENV = {a.key: a.session_env for a in REGISTRY if a.session_env}
OPEN_WITHIN = 6 * 3600  # seconds: an open hook session untouched for longer is one whose end was never seen


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:120] or "unknown"


def _open_session(path: Path) -> str | None:
    """The codememory session a hook state file maps to, while it is open."""
    try:
        state = json.loads(safe_files.read_text(path, MAX_STATE_BYTES))
    except (OSError, ValueError):
        return None
    session = state.get("session") if isinstance(state, dict) else None
    return session if isinstance(session, str) and not state.get("closed") else None


def hook_session(root: Path, env: Mapping[str, str], *, now: float | None = None) -> str | None:
    """The open codememory session the hooks keep for the assistant session named in `env`, if any; else, for an
    assistant that names no session to the MCP servers it starts (Codex, Gemini CLI, Copilot CLI), the only session
    its hooks hold open in this project now (opened or written in the last OPEN_WITHIN seconds). Two or more open at
    once (two assistants at work in one project): None, never a guess."""
    for assistant, var in SESSION_ENV.items():
        raw = env.get(var, "").strip()
        if raw:
            session = _open_session(root / STORE_DIR / "journal" / f"{assistant}-{safe_name(raw)}.json")
            if session is not None:
                return session
    folder = root / STORE_DIR / "journal"
    try:
        if not safe_files.check_dir(folder):
            return None
    except OSError:  # a link where the folder should be: not ours
        return None
    since = (time.time() if now is None else now) - OPEN_WITHIN
    found: set[str] = set()
    for path in folder.glob("*.json"):
        if path.name.endswith(".injected.json"):
            continue
        try:
            recent = path.stat().st_mtime >= since
        except OSError:
            continue
        session = _open_session(path) if recent else None
        if session is not None:
            found.add(session)
    return found.pop() if len(found) == 1 else None


class Journal:
    """One assistant session's journal and state files in a project."""

    def __init__(self, root: Path, assistant: str, raw_session_id: str) -> None:
        self.root = root
        self.key = f"{assistant}-{safe_name(raw_session_id)}"
        self.raw_session_id = raw_session_id

    @property
    def folder(self) -> Path:
        folder = self.root / STORE_DIR / "journal"
        if not safe_files.check_dir(folder):
            safe_files.make_dirs(folder)
            safe_files.create_exclusive(folder / ".gitignore", "# codememory hook journals: local only.\n*\n")
        return folder

    @property
    def path(self) -> Path:
        return self.folder / f"{self.key}.jsonl"

    @property
    def state_path(self) -> Path:
        return self.folder / f"{self.key}.json"

    def load_state(self) -> dict[str, Any]:
        try:
            state = json.loads(safe_files.read_text(self.state_path, MAX_STATE_BYTES))
        except (OSError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def save_state(self, state: dict[str, Any]) -> None:
        safe_files.write_atomic(self.state_path, json.dumps(state, sort_keys=True))

    # --------------------------------------------------------------- injected
    @property
    def injected_path(self) -> Path:
        return self.folder / f"{self.key}.injected.json"

    def load_injected(self) -> Injected:
        """What this session's context already holds from the hooks; empty when there is no (usable) record."""
        from codememory.operations.hook_injected import MAX_BYTES, Injected

        try:
            raw = safe_files.read_bytes(self.injected_path, MAX_BYTES + 1)
            data = json.loads(raw) if len(raw) <= MAX_BYTES else None  # a bigger one is not ours
        except (OSError, ValueError):  # missing, a link, not JSON: start afresh
            return Injected()
        return Injected.from_json(data)

    def save_injected(self, injected: Injected) -> None:
        safe_files.write_atomic(self.injected_path, json.dumps(injected.to_json(), separators=(",", ":")))

    # ---------------------------------------------------------------- session
    @contextlib.contextmanager
    def session_lock(self) -> Iterator[None]:
        """Held while this assistant session's codememory session is looked up or created: an assistant may run two
        hooks at once (Copilot CLI starts SessionStart and UserPromptSubmit together), and both would create it."""
        try:
            import fcntl
        except ImportError:  # no flock (Windows): the race stays possible there
            yield
            return
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.folder / f"{self.key}.lock", flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def ensure_session(self, store: Store, tool: str, goal: str | None = None) -> str:
        """The codememory session this assistant session maps to, created (or reopened) when needed. The
        first prompt's text becomes its goal (SessionStart, which comes before any prompt, has none)."""
        with self.session_lock():
            return self._ensure_session(store, tool, goal)

    def _ensure_session(self, store: Store, tool: str, goal: str | None) -> str:
        state = self.load_state()
        session_id = state.get("session")
        if goal and not (isinstance(session_id, str) and state.get("goal")):  # every prompt after the first has one
            from codememory.text.privacy import scrub

            goal = " ".join(scrub(goal).split())[:300]  # cut after scrubbing: no half secret survives
        else:
            goal = ""
        if isinstance(session_id, str):
            changes: dict[str, Any] = {}
            if state.get("closed"):
                changes["status"] = "open"
            if goal and not state.get("goal"):
                changes["goal"] = goal
            if not changes:
                return session_id
            result = store.checkpoint(tool=tool, session_id=session_id, **changes)
        else:
            fields: dict[str, Any] = {"slug": f"hook {safe_name(self.raw_session_id)[:8]}"}
            if goal:
                fields["goal"] = goal
            result = store.checkpoint(tool=tool, **fields)
        state.update(session=result.session_id, closed=False)
        if goal:
            state["goal"] = True
        self.save_state(state)
        return result.session_id

    def close_session(self, store: Store, tool: str) -> None:
        """Close the session, with the files the journal saw written."""
        state = self.load_state()
        if not isinstance(state.get("session"), str):
            self.ensure_session(store, tool)
            state = self.load_state()
        store.checkpoint(
            tool=tool,
            session_id=state["session"],
            status="closed",
            trigger="session_end",
            touched=self.journaled_paths(),
        )
        state["closed"] = True
        self.save_state(state)

    # ------------------------------------------------------------------ edits
    def journaled_paths(self) -> list[str]:
        """Project-relative paths the PostToolUse / afterFileEdit hooks recorded for this session."""
        try:
            lines = safe_files.read_text(self.path, MAX_JOURNAL_BYTES, errors="replace").splitlines()
        except OSError:
            return []
        out: list[str] = []
        for line in lines:
            try:
                path = json.loads(line).get("path")
            except (ValueError, AttributeError):
                continue  # a line cut by a crash
            if isinstance(path, str) and path and not os.path.isabs(path):
                out.append(path)
        return out

    def record_files(self, paths: list[str], event: str, cwd: object) -> None:
        """Append the edited `paths` (relative to `cwd`, the payload's, else the project) as project-relative ones."""
        from codememory.text.privacy import scrub

        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        lines = []
        for path in paths:
            p = Path(path)
            absolute = p if p.is_absolute() else Path(str(cwd or self.root)) / p
            try:
                rel = absolute.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                rel = str(absolute)  # outside the project: kept as given
            lines.append(json.dumps({"at": stamp, "event": event, "path": scrub(rel)}, ensure_ascii=False))
        if lines:
            safe_files.append_bytes(self.path, ("\n".join(lines) + "\n").encode("utf-8", "backslashreplace"))
