"""What one assistant session's transcript already holds from the hooks, so nothing is injected twice.

Claude Code and Codex keep every hook's `additionalContext` in the transcript, so a memory injected at session
start or with an earlier prompt is still in front of the model: injecting it again only piles up copies (claude-mem
users counted 88 of one block in a session). `Injected` maps each line the hooks put into this session's context
to a hash of its exact text: a memory's id, or one of the session-start block's own lines (`start:last`, the last
session's goal; `start:hint`, the pointer to the MCP tools). A line is injected again only when its text changed
(the memory was edited or re-categorised: the hash is of the rendered line, which is what the model saw).

After a compaction the transcript no longer holds what was injected: the hooks clear the set then
(codememory.operations.hook_events), so the session-start block and the memories the next prompts find are shown
once more.

The state lives in `.codememory/journal/<assistant>-<session>.injected.json` (codememory.operations.hook_journal),
a file anyone with write access to the project could have put there: it is read with a size limit, without
following links (core.safe_files), and every entry is checked; anything unexpected is dropped, which at worst shows
a memory once more. Only the standard library is imported: this is loaded by the hook on every prompt and edit.
"""

from __future__ import annotations

from typing import Any

from codememory.core.lazy_pattern import lazy_pattern

VERSION = 1
MAX_LINES = 1000  # lines remembered per session; past it, the oldest are forgotten (and could be shown again)
MAX_BYTES = 200_000  # the state file; MAX_LINES entries take ~45 bytes each
START_LAST = "start:last"
START_HINT = "start:hint"
_KEY_RE = lazy_pattern(r"mem_[0-9a-f]{8}|start:(?:last|hint)")
_DIGEST_RE = lazy_pattern(r"[0-9a-f]{16}")


def digest(line: str) -> str:
    """A short hash of the exact text injected: enough to tell a changed line from the same one."""
    import hashlib  # here: its OpenSSL binding costs an edit hook, which never hashes, ~2 ms to import

    return hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Injected:
    """The lines already in one assistant session's context: key (memory id or `start:*`) -> digest of the line,
    oldest first. `changed` says whether it differs from what was loaded (then it is worth saving)."""

    def __init__(self, lines: dict[str, str] | None = None) -> None:
        self.lines: dict[str, str] = dict(lines or {})
        self.changed = False

    def __len__(self) -> int:
        return len(self.lines)

    def fresh(self, key: str, line: str) -> bool:
        """True when `line` is not in the context yet: never injected, or injected with other text."""
        return self.lines.get(key) != digest(line)

    def add(self, key: str, line: str) -> None:
        if not _KEY_RE.fullmatch(key):
            return  # never written, so never read back: a line we cannot name is shown again next time
        self.lines.pop(key, None)  # to the newest end
        self.lines[key] = digest(line)
        while len(self.lines) > MAX_LINES:
            del self.lines[next(iter(self.lines))]
        self.changed = True

    def clear(self) -> None:
        if self.lines:
            self.lines.clear()
        self.changed = True  # saved even when empty: a compaction must also undo a save still to come

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "lines": [[key, value] for key, value in self.lines.items()]}

    @classmethod
    def from_json(cls, data: object) -> Injected:
        """The state in `data` (from the state file or the daemon's answer), keeping only well-formed entries:
        `{"version": 1, "lines": [[key, digest], ...]}`, at most MAX_LINES (the newest)."""
        lines: dict[str, str] = {}
        raw = data.get("lines") if isinstance(data, dict) and data.get("version") == VERSION else None
        for entry in raw[-MAX_LINES:] if isinstance(raw, list) else []:
            if not (isinstance(entry, list) and len(entry) == 2):
                continue
            key, value = entry
            if not (isinstance(key, str) and isinstance(value, str)):
                continue
            if _KEY_RE.fullmatch(key) and _DIGEST_RE.fullmatch(value):
                lines.pop(key, None)
                lines[key] = value
        return cls(lines)
