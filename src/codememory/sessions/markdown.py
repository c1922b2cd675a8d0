"""A session's markdown file (`.codememory/sessions/<YYYY-MM-DD_HH-MM>_<tool>_<slug>.md`): rendering it from the
store's record, parsing it back (the file is the source of truth for `rebuild`), and where it lives."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from codememory.core import safe_files
from codememory.core.bounded_input import SESSION_MARKDOWN_MAX_BYTES, decode, size_text
from codememory.core.dates import to_iso
from codememory.core.lazy_pattern import lazy_pattern
from codememory.errors import InvalidInput
from codememory.sessions.git import CHANGE_TYPES
from codememory.store.sessions import SessionRecord, SessionRow

STATUSES = ("open", "frozen", "closed")
NONE = "_None._"
SESSION_ID_RE = lazy_pattern(r"^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}_[a-z0-9]+(?:-[a-z0-9]+)*_[a-z0-9]+(?:-[a-z0-9]+)*$")
MARKDOWN_NAME_RE = lazy_pattern(r"^sessions/[A-Za-z0-9][A-Za-z0-9_.-]{0,200}\.md$")
_SECTION_SPLIT = lazy_pattern(r"\n\n---\n\n(?=## )")
_FRONT_KEYS = (
    "session_id",
    "tool",
    "project",
    "started_at",
    "git_sha_start",
    "git_sha_end",
    "trigger",
    "slug",
    "status",
    "ended_at",
    "updated_at",
)
_COMPLETED = "### ✅ Work Completed"
_PENDING = "### 🔲 Work To Be Completed"


def check_session_id(session_id: str) -> str:
    if not SESSION_ID_RE.match(session_id):
        raise InvalidInput(
            f"{session_id!r} is not a session id (expected YYYY-MM-DD_HH-MM_<tool>_<slug>, e.g. "
            "2026-02-23_14-32_cursor_tei-migration)"
        )
    return session_id


def _bullets(items: Sequence[str]) -> str:
    return "\n".join("- " + item.replace("\n", "\n  ") for item in items) if items else NONE


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(record: SessionRecord) -> str:
    """The session's markdown file, in the seed's format (frontmatter, then sections separated by ---)."""
    r = record.row
    values = {
        "session_id": r.id,
        "tool": r.tool,
        "slug": r.slug,
        "project": r.project,
        "started_at": r.started_at,
        "git_sha_start": r.git_sha_start,
        "git_sha_end": r.git_sha_end,
        "trigger": r.trigger,
        "status": r.status,
        "ended_at": r.ended_at,
        "updated_at": r.updated_at,
    }
    front = "".join(f"{k}: {values[k]}\n" if values[k] else f"{k}:\n" for k in _FRONT_KEYS)
    groups = [
        f"### {kind.capitalize()}\n" + "\n".join(f"- `{p}`" for p, c in record.files if c == kind)
        for kind in CHANGE_TYPES
        if any(c == kind for _, c in record.files)
    ]
    if record.plan_files:
        plans = "| File | Description |\n|------|-------------|\n" + "\n".join(
            f"| `{p['path']}` | {_cell(p.get('header') or '')} |" for p in record.plan_files
        )
    else:
        plans = NONE
    references = (
        "\n".join(f"- [{ref.get('title') or ref['url']}]({ref['url']})" for ref in record.references)
        if record.references
        else NONE
    )
    sections = [
        "## Goal\n" + (r.goal or NONE),
        f"## Todos\n\n{_COMPLETED}\n{_bullets(record.completed)}\n\n{_PENDING}\n{_bullets(record.pending)}",
        "## Files Touched\n\n" + ("\n\n".join(groups) if groups else NONE),
        "## Git Diff Summary\n" + (record.diff_summary or NONE),
        "## Work Done\n\n" + _bullets(record.summary),
        "## Plan Files\n\n" + plans,
        "## Architecture Decisions\n\n" + _bullets(record.decisions),
        "## References\n\n" + references,
    ]
    return f"---\n{front}---\n\n" + "\n\n---\n\n".join(sections) + "\n"


def _parse_bullets(body: str) -> list[str]:
    items: list[str] = []
    for line in body.splitlines():
        if line.startswith("- "):
            items.append(line[2:].strip())
        elif line.strip() and line.strip() != NONE and items:
            items[-1] += "\n" + line.strip()
    return items


def _subsections(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    current = None
    for line in body.splitlines():
        if line.startswith("### "):
            current = line
            out[current] = ""
        elif current is not None:
            out[current] += line + "\n"
    return out


def parse(text: str, markdown_path: str) -> SessionRecord:
    """A session back from its markdown file (for rebuild). Raises InvalidInput when it is not one."""
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n") or "\n---\n" not in text[3:]:
        raise InvalidInput("no frontmatter (the file must start with a --- block)")
    head, _, body = text[4:].partition("\n---\n")
    meta: dict[str, str | None] = {}
    for line in head.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip()] = value.strip() or None
    session_id = meta.get("session_id") or ""
    check_session_id(session_id)
    for key in ("tool", "started_at"):
        if not meta.get(key):
            raise InvalidInput(f"frontmatter has no {key}")
    status = meta.get("status") or "open"
    if status not in STATUSES:
        raise InvalidInput(f"unknown status {status!r}")
    try:
        started_at = to_iso(datetime.fromisoformat(str(meta["started_at"]).replace("Z", "+00:00")))
    except ValueError:
        raise InvalidInput(f"started_at {meta['started_at']!r} is not an ISO timestamp") from None
    sections: dict[str, str] = {}
    for chunk in _SECTION_SPLIT.split("\n\n" + body.strip("\n")):
        chunk = chunk.strip("\n")
        if chunk.startswith("## "):
            title, _, rest = chunk.partition("\n")
            sections[title[3:].strip()] = rest.strip("\n")
    goal = sections.get("Goal", "").strip()
    row = SessionRow(
        id=session_id,
        project=meta.get("project") or "",
        tool=str(meta["tool"]),
        slug=meta.get("slug") or session_id.split("_", 3)[3],
        started_at=started_at,
        updated_at=meta.get("updated_at") or started_at,
        ended_at=meta.get("ended_at"),
        trigger=meta.get("trigger"),
        git_sha_start=meta.get("git_sha_start"),
        git_sha_end=meta.get("git_sha_end"),
        status=status,
        markdown_path=markdown_path,
        goal=None if goal in ("", NONE) else goal,
    )
    record = SessionRecord(row)
    todos = _subsections(sections.get("Todos", ""))
    record.completed = _parse_bullets(todos.get(_COMPLETED, ""))
    record.pending = _parse_bullets(todos.get(_PENDING, ""))
    for title, block in _subsections(sections.get("Files Touched", "")).items():
        kind = title[4:].strip().lower()
        if kind in CHANGE_TYPES:
            record.files += [(item.strip("`"), kind) for item in _parse_bullets(block)]
    diff = sections.get("Git Diff Summary", "").strip()
    record.diff_summary = None if diff in ("", NONE) else diff
    record.summary = _parse_bullets(sections.get("Work Done", ""))
    record.decisions = _parse_bullets(sections.get("Architecture Decisions", ""))
    for line in sections.get("Plan Files", "").splitlines():
        m = re.match(r"^\| `(.*)` \| (.*?) ?\|$", line)
        if m:
            record.plan_files.append({"path": m.group(1), "header": m.group(2).strip().replace("\\|", "|")})
    for line in sections.get("References", "").splitlines():
        m = re.match(r"^- \[(.*)\]\((.*)\)$", line)
        if m:
            record.references.append({"url": m.group(2), "title": m.group(1)})
    return record


MARKDOWN_NAME_RE = lazy_pattern(r"^sessions/[A-Za-z0-9][A-Za-z0-9_.-]{0,200}\.md$")


def markdown_path_of(row: SessionRow) -> str:
    """The row's markdown file relative to `.codememory/`: its stored `markdown_path` when that is a plain
    file name in `sessions/` (a rebuild keeps the names of the files it read), else `sessions/<id>.md`
    from the validated id. The stored value comes from a database anyone may have committed: a value
    like `../../x` must never become a path we read, return or overwrite."""
    if MARKDOWN_NAME_RE.match(row.markdown_path) and ".." not in row.markdown_path:
        return row.markdown_path
    try:
        return f"sessions/{check_session_id(row.id)}.md"
    except InvalidInput:  # an id we never write: a harmless name in sessions/, so one bad row never breaks a list
        return "sessions/invalid-" + hashlib.sha256(row.id.encode("utf-8", "replace")).hexdigest()[:16] + ".md"


def read_session_file(path: Path) -> str:
    """A session's markdown, never through a link, bad bytes as U+FFFD; over the cap is an error, not a cut."""
    raw = safe_files.read_bytes(path, SESSION_MARKDOWN_MAX_BYTES + 1)
    if len(raw) > SESSION_MARKDOWN_MAX_BYTES:
        raise InvalidInput(f"{path.name} is over the {size_text(SESSION_MARKDOWN_MAX_BYTES)} limit")
    return decode(raw)
