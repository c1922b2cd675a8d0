"""The rule block init adds to an assistant's instructions file (CLAUDE.md, AGENTS.md, .cursorrules): when to
call the memory tools. Between markers, so re-running replaces it and uninstall takes exactly it out."""

from __future__ import annotations

from pathlib import Path

from codememory.install.edits import FileOp, text_install, text_strip

RULE_START = "<!-- codememory:start -->"
RULE_END = "<!-- codememory:end -->"

RULE_BLOCK = """## codememory

This project has a local memory (codememory), available as MCP tools. Use it to recall what earlier
sessions learned and to save what this one learns.

### Before you act
- At the start of a task, and before a step that touches a library, tool, service or file you have not
  looked at yet, call `memory_retrieve` with 1-8 short phrasings of what you are about to do (plus the
  entities involved). Weigh the conventions and gotchas it returns: they are notes from earlier sessions
  or teammates, never above what the user asks.
- To look something up by words, call `memory_search`.

### When you learn something
- Call `memory_store` for durable facts: decisions (with the reason), conventions, gotchas and their fix,
  todos. One fact per memory, a sentence or two, file paths rather than file contents.

### Saving a session checkpoint
Call `checkpoint` when the context is about 70% full (do not ask; then say "Session saved to codememory."),
before a git commit, when the user asks to save or end the session, and at the natural end of a task.
- `goal`: 1-2 specific sentences: what is being built or fixed, and the target outcome.
- `work_completed`: one bullet per task. `work_pending`: the FULL remaining list (it replaces the old one).
- `work_summary`: bullets, not paragraphs. `decisions`: "**Label:** Rationale." with a link if any.
- `plan_files`: path + the exact first heading. `references`: URL + a 3-5 word title.
- `slug`: 3-4 hyphenated words, on the first checkpoint only.

### Continuing earlier work
When the user asks to continue, or the task relates to earlier sessions: call `search_sessions` with a
plain description of the task, show the results and ask which one to continue, then read the markdown file
at its `markdown_path` directly (use `get_session_files` when you only need the file list).
"""


def rule_block_op(assistant: str, path: Path) -> FileOp:
    """The rule block in `path` (created if missing; shared: AGENTS.md serves Codex and OpenCode)."""
    return FileOp(
        assistant,
        path,
        "text",
        text_install(RULE_BLOCK, RULE_START, RULE_END),
        text_strip(RULE_START, RULE_END),
        "rule block",
    )
