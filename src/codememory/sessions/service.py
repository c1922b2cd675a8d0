"""Coding sessions: checkpoints written by the agent's own model, rendered to markdown, searched.

A session is one coding session of one tool. Each checkpoint appends what is new (work completed,
work done, decisions, plan files, references), replaces what is current (work pending, the diff
summary, the files touched), and re-renders `.codememory/sessions/<YYYY-MM-DD_HH-MM>_<tool>_<slug>.md`.
The markdown file is the source of truth: `rebuild` recreates the database rows from the files.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from codememory.core import safe_files
from codememory.core.bounded_input import (
    PLAN_HEADER_MAX_BYTES,
    SESSION_MARKDOWN_MAX_BYTES,
    decode,
    read_upto,
    size_text,
)
from codememory.core.dates import now_utc, parse_when, to_iso
from codememory.core.project import STORE_DIR, store_dir
from codememory.errors import InvalidInput, NotFound, UnsafePath
from codememory.store.sessions import FTS_WEIGHTS, SessionRecord, SessionRow, SessionTables
from codememory.text.privacy import scrub
from codememory.text.query import STOPWORDS, words

STATUSES = ("open", "frozen", "closed")
TRIGGERS = ("manual", "context_limit", "git_commit", "session_end")
CHANGE_TYPES = ("created", "modified", "deleted")
MAX_RESULTS = 5
MIN_RELEVANCE = 0.15  # weighted share of the query's terms matched (goal 10 ... work_summary 3, over 10 per term)
GIT_TIMEOUT_S = 3.0
MAX_ITEM = 2000
MAX_SLUG_WORDS = 4
NONE = "_None._"
SESSION_ID_RE = re.compile(r"^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}_[a-z0-9]+(?:-[a-z0-9]+)*_[a-z0-9]+(?:-[a-z0-9]+)*$")
_URL_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_SECTION_SPLIT = re.compile(r"\n\n---\n\n(?=## )")
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


# --------------------------------------------------------------------------- validation
def session_slug(text: str, what: str = "slug") -> str:
    """'TEI Migration' -> 'tei-migration'; at most four words."""
    slug = "-".join(re.findall(r"[a-z0-9]+", scrub(text).lower()))
    if not slug:
        raise InvalidInput(f"{what} is empty (give a short topic like 'tei-migration')")
    if slug.count("-") >= MAX_SLUG_WORDS:
        raise InvalidInput(f"{what} {text!r} has more than {MAX_SLUG_WORDS} words (e.g. 'tei-migration')")
    return slug


def tool_name(text: str) -> str:
    name = "-".join(re.findall(r"[a-z0-9]+", text.lower()))
    if not name:
        raise InvalidInput(f"tool name {text!r} has no letters or digits")
    return name


def check_session_id(session_id: str) -> str:
    if not SESSION_ID_RE.match(session_id):
        raise InvalidInput(
            f"{session_id!r} is not a session id (expected YYYY-MM-DD_HH-MM_<tool>_<slug>, e.g. "
            "2026-02-23_14-32_cursor_tei-migration)"
        )
    return session_id


def _item(text: str, what: str, limit: int = MAX_ITEM) -> str:
    """One bullet: surrounding space and blank lines dropped (they would break the markdown)."""
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be text")
    if not text.strip():
        raise InvalidInput(f"{what} is empty")
    lines = [line.strip() for line in scrub(text).strip().splitlines() if line.strip()]
    if not lines:
        raise InvalidInput(f"{what} is empty after removing private spans and secrets")
    item = "\n".join(lines)
    if len(item) > limit:
        raise InvalidInput(f"{what} is {len(item):,} characters; the limit is {limit:,}")
    return item


def _items(values: Sequence[str] | None, what: str) -> list[str]:
    return [_item(v, f"{what}[{i}]") for i, v in enumerate(values or [])]


def _line(text: str) -> str:
    return " ".join(text.split())


def safe_path(root: Path, path: str, what: str = "path") -> str:
    """A path inside the project as a relative POSIX path; anything resolving outside the root is refused."""
    if not path or not path.strip():
        raise InvalidInput(f"{what} is empty")
    if any(ch in path for ch in "`\n\r|"):
        raise InvalidInput(f"{what} {path!r} contains a backtick, bar or line break")
    base = root.resolve()
    candidate = Path(path.strip()).expanduser()
    resolved = (candidate if candidate.is_absolute() else base / candidate).resolve()
    try:
        relative = resolved.relative_to(base)
    except ValueError:
        raise InvalidInput(f"{what} {path!r} is outside the project root {base}") from None
    if relative == Path("."):
        raise InvalidInput(f"{what} {path!r} is the project root itself, not a file in it")
    return relative.as_posix()


# --------------------------------------------------------------------------------- git
def _git(root: Path, *args: str) -> str | None:
    import subprocess  # on use: hooks that never run git skip its import

    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            text=True,
            errors="replace",  # a file name that is not UTF-8 (core.quotePath off) must not fail a checkpoint
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def head_sha(root: Path) -> str | None:
    """HEAD's SHA, or None without git, outside a repository, or before the first commit."""
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    sha = out.strip() if out else ""
    return sha if re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def _ours(path: str) -> bool:
    return path == STORE_DIR or path.startswith(STORE_DIR + "/")


def files_touched(root: Path, since: str) -> list[tuple[str, str]] | None:
    """Files changed since `since` (committed or not) plus untracked files, relative to the project
    root, as (path, change_type); None when git cannot tell."""
    diff = _git(root, "diff", "--name-status", "--no-renames", "--relative", since, "--")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard")
    if diff is None or untracked is None:
        return None
    kinds = {"A": "created", "D": "deleted"}
    found: dict[str, str] = {}
    for line in diff.splitlines():
        status, _, path = line.partition("\t")
        if path and not _ours(path):
            found[path] = kinds.get(status[:1], "modified")
    for path in untracked.splitlines():
        if path and not _ours(path):
            found[path] = "created"
    return sorted(found.items(), key=lambda pc: (CHANGE_TYPES.index(pc[1]), pc[0]))


def _with_touched(files: list[tuple[str, str]] | None, touched: Sequence[str]) -> list[tuple[str, str]] | None:
    """Git's (path, change type) list plus the journaled paths it does not have (None: neither knows)."""
    paths = [p for p in dict.fromkeys(str(t).strip() for t in touched) if p and not _ours(p)]
    if not paths:
        return files
    found = dict(files or [])
    for path in paths:
        found.setdefault(path, "modified")
    return sorted(found.items(), key=lambda pc: (CHANGE_TYPES.index(pc[1]), pc[0]))


def _line_counts(root: Path, since: str, files: Sequence[tuple[str, str]]) -> tuple[int, int]:
    added = removed = 0
    counted: set[str] = set()
    for line in (_git(root, "diff", "--numstat", "--no-renames", "--relative", since, "--") or "").splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            counted.add(parts[2])
            if parts[0].isdigit() and parts[1].isdigit() and not _ours(parts[2]):
                added += int(parts[0])
                removed += int(parts[1])
    for path, change in files:  # untracked new files: every line is added
        if change == "created" and path not in counted:
            data = _head_of_regular_file(root / path, 1_000_000)
            if data is None:
                continue
            if b"\0" not in data:
                added += data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    return added, removed


def _count(n: int, what: str) -> str:
    return f"{n} file{'' if n == 1 else 's'} {what}"


def diff_stat_line(root: Path, since: str, files: Sequence[tuple[str, str]]) -> str:
    """'3 files modified, 2 files created. +187 / -43 lines.'"""
    if not files:
        return "No file changes since the session started."
    counts = {kind: sum(1 for _, c in files if c == kind) for kind in CHANGE_TYPES}
    parts = [_count(counts["modified"], "modified"), _count(counts["created"], "created")]
    if counts["deleted"]:
        parts.append(_count(counts["deleted"], "deleted"))
    added, removed = _line_counts(root, since, files)
    return f"{', '.join(parts)}. +{added} / -{removed} lines."


# ---------------------------------------------------------------------------- markdown
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


def _write_atomically(path: Path, text: str) -> None:
    safe_files.write_atomic(path, text)


_MARKDOWN_NAME_RE = re.compile(r"^sessions/[A-Za-z0-9][A-Za-z0-9_.-]{0,200}\.md$")


def markdown_path_of(row: SessionRow) -> str:
    """The row's markdown file relative to `.codememory/`: its stored `markdown_path` when that is a plain
    file name in `sessions/` (a rebuild keeps the names of the files it read), else `sessions/<id>.md`
    from the validated id. The stored value comes from a database anyone may have committed: a value
    like `../../x` must never become a path we read, return or overwrite."""
    if _MARKDOWN_NAME_RE.match(row.markdown_path) and ".." not in row.markdown_path:
        return row.markdown_path
    try:
        return f"sessions/{check_session_id(row.id)}.md"
    except InvalidInput:  # an id we never write: a harmless name in sessions/, so one bad row never breaks a list
        return "sessions/invalid-" + hashlib.sha256(row.id.encode("utf-8", "replace")).hexdigest()[:16] + ".md"


# ------------------------------------------------------------------------------ search
_KNOWN_TOOLS = {"claude-code": ("claude code", "claude-code", "claude"), "cursor": ("cursor",)}
_KNOWN_TOOLS |= {name: (name,) for name in ("antigravity", "opencode", "codex")}
_SESSION_STOPWORDS = STOPWORDS | {"session", "sessions", "last", "did", "worked", "working"}
_PATH_EXTENSIONS = {
    *"py pyi ts tsx js jsx mjs go rs java kt rb php c h cc cpp hpp cs swift sql sh".split(),
    *"toml yaml yml json md rst txt html css scss vue ini cfg lock xml proto tf gradle".split(),
}
_MONTH_NAMES = "january february march april may june july august september october november december".split()
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, start=1)} | {
    name[:3]: i for i, name in enumerate(_MONTH_NAMES, start=1) if name != "may"
}
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


@dataclass
class SessionQuery:
    """What a session search asks for: content terms, path fragments, and the filters found in it."""

    terms: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    after: str | None = None
    before: str | None = None
    tool: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"terms": self.terms, "paths": self.paths, "after": self.after, "before": self.before, "tool": self.tool}


def _month_range(month: int, year: int | None, now: datetime) -> tuple[datetime, datetime]:
    if year is None:
        year = now.year if month <= now.month else now.year - 1  # "in december" said in march: last december
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def extract_filters(query: str, tools: Sequence[str], now: datetime | None = None) -> SessionQuery:
    """Split a natural-language session query into dates ("last week", "yesterday", "in january",
    "before march 15", "since 2026-01-02"), a tool ("in cursor", "claude code session"), file paths
    (a token with '/' or a known extension) and the remaining content words."""
    now = now or now_utc()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    text = " " + " ".join(query.split()) + " "
    lowered = text.lower()
    parsed = SessionQuery()
    after: datetime | None = None
    before: datetime | None = None

    def cut(m: re.Match[str]) -> None:
        nonlocal text, lowered
        text = text[: m.start()] + " " * (m.end() - m.start()) + text[m.end() :]
        lowered = text.lower()

    number = r"(\d+|" + "|".join(_NUMBERS) + ")"
    if m := re.search(rf"\b(?:last|past)\s+{number}\s+(day|week|month|year)s?\b", lowered):
        amount = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]
        after = now - timedelta(days=amount * _UNIT_DAYS[m.group(2)])
        cut(m)
    elif m := re.search(r"\b(last|past|this)\s+(day|week|month|year)\b", lowered):
        unit = m.group(2)
        if m.group(1) != "this":
            after = now - timedelta(days=_UNIT_DAYS[unit])
        elif unit == "week":
            after = today - timedelta(days=today.weekday())
        elif unit == "month":
            after = today.replace(day=1)
        elif unit == "year":
            after = today.replace(month=1, day=1)
        else:
            after = today
        cut(m)
    elif m := re.search(r"\b(yesterday|today)\b", lowered):
        after = today - timedelta(days=1) if m.group(1) == "yesterday" else today
        before = after + timedelta(days=1)
        cut(m)
    month_names = "|".join(sorted(_MONTHS, key=len, reverse=True))
    if after is None and (
        m := re.search(rf"\b(?:in|during)\s+({month_names})\b(?:\s+(\d{{4}}))?", lowered)
        or re.search(rf"\b({month_names})\s+(\d{{4}})\b", lowered)
    ):
        after, before = _month_range(_MONTHS[m.group(1)], int(m.group(2)) if m.group(2) else None, now)
        cut(m)
    for word in ("before", "after", "since"):
        m = re.search(rf"\b{word}\s+(\S+(?:\s+\S+){{0,2}})", lowered)
        if not m:
            continue
        following = m.group(1).split()
        for n in range(len(following), 0, -1):  # the longest run of words that reads as a date
            try:
                when = parse_when(" ".join(following[:n]), now=now, what=word)
            except InvalidInput:
                continue
            if word == "before":
                before = when
            else:
                after = when
            span = re.search(rf"\b{word}\s+" + r"\s+".join(map(re.escape, following[:n])), lowered)
            if span:
                cut(span)
            break
    names: dict[str, tuple[str, ...]] = dict(_KNOWN_TOOLS)
    for tool in tools:
        names.setdefault(tool, (tool,))
    for tool, aliases in names.items():
        for alias in sorted(aliases, key=len, reverse=True):
            a = re.escape(alias)
            m = (
                re.search(rf"\b(?:in|with|from|using|via|by)\s+{a}\b(?:\s+sessions?\b)?", lowered)
                or re.search(rf"\b{a}\s+sessions?\b", lowered)
                or (re.search(rf"(?<![\w-]){a}(?![\w-])", lowered) if "-" in alias else None)
            )
            if m:
                parsed.tool = tool
                cut(m)
                break
        if parsed.tool:
            break
    rest: list[str] = []
    for token in text.split():
        bare = token.strip("'\"`,;:()[]{}?!")
        ext = bare.rsplit(".", 1)[-1].lower() if "." in bare else ""
        if bare and ("/" in bare.strip("/") or (ext in _PATH_EXTENSIONS and len(bare) > len(ext) + 1)):
            parsed.paths.append(bare.strip("/"))
        else:
            rest.append(token)
    parsed.terms = list(dict.fromkeys(w for w in words(" ".join(rest)) if w not in _SESSION_STOPWORDS))
    parsed.after = to_iso(after) if after else None
    parsed.before = to_iso(before) if before else None
    return parsed


# ------------------------------------------------------------------------------- core
_WEIGHT_LABEL = {"goal": "goal", "todos": "todos", "file_paths": "files", "decisions": "decisions"}


def _head_of_regular_file(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of a plain file in the work tree; None for a link (a committed link to /dev/zero
    or a FIFO would hang or flood us), anything that is not a regular file, or an unreadable one."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read(limit)


def _read_session_file(path: Path) -> str:
    """A session's markdown, never through a link, bad bytes as U+FFFD; over the cap is an error, not a cut."""
    raw = safe_files.read_bytes(path, SESSION_MARKDOWN_MAX_BYTES + 1)
    if len(raw) > SESSION_MARKDOWN_MAX_BYTES:
        raise InvalidInput(f"{path.name} is over the {size_text(SESSION_MARKDOWN_MAX_BYTES)} limit")
    return decode(raw)


class Sessions:
    """The sessions of one project store."""

    def __init__(self, tables: SessionTables, root: Path) -> None:
        self.tables = tables
        self.root = root

    @property
    def folder(self) -> Path:
        return store_dir(self.root)

    def markdown_file(self, row: SessionRow) -> Path:
        return safe_files.inside(self.folder, markdown_path_of(row), "markdown_path")

    def absolute(self, row: SessionRow) -> str:
        return str(self.markdown_file(row))

    def _get(self, session_id: str) -> SessionRecord:
        record = self.tables.get(check_session_id(session_id))
        if record is None:
            raise NotFound(f"no session with id {session_id}")
        return record

    # ------------------------------------------------------------------ writes
    def checkpoint(
        self,
        *,
        tool: str,
        session_id: str | None = None,
        slug: str | None = None,
        goal: str | None = None,
        work_completed: Sequence[str] | None = None,
        work_pending: Sequence[str] | None = None,
        work_summary: Sequence[str] | None = None,
        decisions: Sequence[str] | None = None,
        plan_files: Sequence[Mapping[str, Any]] | None = None,
        references: Sequence[Mapping[str, Any]] | None = None,
        status: str | None = None,
        trigger: str | None = None,
        key_changes: str | None = None,
        touched: Sequence[str] | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Create or update a session and re-render its markdown file.

        Files touched are those git shows changed since the session started, plus `touched` (paths the
        assistant's hooks saw it write, e.g. outside git or written and reverted), as "modified" unless
        git knows better.

        The session is `session_id` when given (it must exist), else the newest open session of this
        tool with this slug, else a new one (which needs a slug). work_completed, work_summary,
        decisions, plan_files and references are appended; work_pending replaces the pending list.
        """
        if status is not None and status not in STATUSES:
            raise InvalidInput(f"unknown status {status!r}; choose one of: {', '.join(STATUSES)}")
        if trigger is not None and trigger not in TRIGGERS:
            raise InvalidInput(f"unknown trigger {trigger!r}; choose one of: {', '.join(TRIGGERS)}")
        tool = tool_name(tool)
        clean_goal = _item(goal, "goal", 1000) if goal is not None else None
        completed = _items(work_completed, "work_completed")
        pending = _items(work_pending, "work_pending")
        summary = _items(work_summary, "work_summary")
        decided = _items(decisions, "decisions")
        plans = [self._plan_file(p, f"plan_files[{i}]") for i, p in enumerate(plan_files or [])]
        refs = [self._reference(r, f"references[{i}]") for i, r in enumerate(references or [])]
        note = _item(key_changes, "key_changes", 1000) if key_changes is not None else None
        when = now or now_utc()
        stamp = to_iso(when)

        row: SessionRow | None
        if session_id is not None:
            row = self._get(session_id).row
            if slug is not None and session_slug(slug) != row.slug:
                raise InvalidInput(f"session {row.id} has slug {row.slug!r}; a slug cannot change")
        else:
            if slug is None:
                raise InvalidInput("slug is required to start a session (or pass the session_id of an open one)")
            row = self.tables.open_session(tool, session_slug(slug))
        new = row is None
        if row is None:
            assert slug is not None
            row = self._new_row(tool, session_slug(slug), when)
        previous = self.tables.get(row.id) if not new else None
        row.updated_at = stamp
        if clean_goal is not None:
            row.goal = clean_goal
        if trigger is not None:
            row.trigger = trigger
        elif status == "closed":
            row.trigger = "session_end"
        elif row.trigger is None:
            row.trigger = "manual"
        if status is not None:
            row.status = status
            if status == "open":
                row.ended_at = row.git_sha_end = None
            else:
                row.ended_at, row.git_sha_end = stamp, head_sha(self.root)

        files = files_touched(self.root, row.git_sha_start) if row.git_sha_start else None
        files = _with_touched(files, touched or ())
        replace = ["work_pending"] if work_pending is not None else []
        chunks = [("work_completed", c) for c in completed] + [("work_pending", c) for c in pending]
        chunks += [("work_summary", c) for c in summary] + [("decision", d) for d in decided]
        chunks += [("plan_file", _json(p)) for p in plans] + [("reference", _json(r)) for r in refs]
        old_note = previous.diff_summary.partition("\n")[2] if previous and previous.diff_summary else ""
        note_text = f"Key changes: {note}" if note else old_note
        if files is not None and row.git_sha_start:
            diff = diff_stat_line(self.root, row.git_sha_start, files) + (f"\n{note_text}" if note_text else "")
            replace.append("diff_summary")
            chunks.append(("diff_summary", diff))
        elif note:
            replace.append("diff_summary")
            chunks.append(("diff_summary", note_text))

        def write(record: SessionRecord) -> None:
            _write_atomically(self.markdown_file(record.row), render(record))

        record = self.tables.checkpoint(
            row, new=new, chunks=chunks, replace=replace, files=files, now=stamp, finish=write
        )
        return {
            "session_id": record.row.id,
            "markdown_path": self.absolute(record.row),
            "status": record.row.status,
            "created": new,
            "files_touched": len(record.files),
        }

    def _new_row(self, tool: str, slug: str, when: datetime) -> SessionRow:
        prefix = when.astimezone().strftime("%Y-%m-%d_%H-%M")
        session_id, n = f"{prefix}_{tool}_{slug}", 1
        while self.tables.exists(session_id) or os.path.lexists(self.folder / "sessions" / f"{session_id}.md"):
            n += 1
            session_id = f"{prefix}_{tool}_{slug}-{n}"
        return SessionRow(
            id=session_id,
            project=self.root.name,
            tool=tool,
            slug=slug,  # the id may carry a -2 suffix; the slug that finds the session does not
            started_at=to_iso(when),
            updated_at=to_iso(when),
            git_sha_start=head_sha(self.root),
            markdown_path=f"sessions/{session_id}.md",
        )

    def _plan_file(self, value: Mapping[str, Any], what: str) -> dict[str, str]:
        if not isinstance(value, Mapping) or not isinstance(value.get("path"), str):
            raise InvalidInput(f"{what} needs a path")
        path = safe_path(self.root, value["path"], f"{what}.path")
        header = value.get("header")
        if header is None:  # the file's first heading, when it exists (in its first PLAN_HEADER_MAX_BYTES)
            try:
                with (self.root / path).open("rb") as f:
                    head = decode(read_upto(f, PLAN_HEADER_MAX_BYTES)[0])
                header = next((line for line in head.splitlines() if line.startswith("#")), "")
            except OSError:
                header = ""
        return {"path": path, "header": _line(scrub(str(header)))}

    def _reference(self, value: Mapping[str, Any], what: str) -> dict[str, str]:
        if not isinstance(value, Mapping) or not isinstance(value.get("url"), str) or not value["url"].strip():
            raise InvalidInput(f"{what} needs a url (https://... or a path in the project)")
        url = scrub(value["url"]).strip()
        if not url:
            raise InvalidInput(f"{what}.url is empty after removing private spans and secrets")
        if not _URL_RE.match(url):
            url = safe_path(self.root, url, f"{what}.url")
        elif any(ch.isspace() for ch in url) or (")" in url and "(" not in url):
            raise InvalidInput(f"{what}.url {url!r} is not a valid URL")
        title = _line(scrub(str(value.get("title") or ""))) or url
        return {"url": url, "title": title.replace("](", "] (")}

    def rebuild(self) -> dict[str, Any]:
        """Recreate every session row from the markdown files in .codememory/sessions/."""
        records: list[SessionRecord] = []
        errors: list[dict[str, str]] = []
        seen: set[str] = set()
        folder = self.folder / "sessions"
        # a link at .codememory or sessions/ refuses the whole rebuild (it would otherwise empty the table)
        for path in sorted(folder.glob("*.md")) if safe_files.check_dir(folder) else []:
            relative = f"sessions/{path.name}"
            try:
                if not _MARKDOWN_NAME_RE.match(relative):
                    raise InvalidInput(f"{path.name!r} is not a session file name")
                # the markdown may come from a commit (untrusted): scrubbed like anything else stored
                record = parse(scrub(_read_session_file(path)), relative)
            except (InvalidInput, OSError, UnicodeDecodeError) as exc:
                errors.append({"file": str(path), "error": str(exc)})
                continue
            if record.row.id in seen:
                errors.append({"file": str(path), "error": f"duplicate session id {record.row.id}"})
                continue
            seen.add(record.row.id)
            records.append(record)
        self.tables.replace_all(records)
        return {"sessions": len(records), "errors": errors}

    # ------------------------------------------------------------------- reads
    def _summary(self, row: SessionRow) -> dict[str, Any]:
        return {
            "session_id": row.id,
            "goal": row.goal,
            "date": row.started_at[:10],
            "started_at": row.started_at,
            "updated_at": row.updated_at,
            "tool": row.tool,
            "status": row.status,
            "markdown_path": self.absolute(row),
        }

    def recent(self, *, limit: int = 10, tool: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
        if status is not None and status not in STATUSES:
            raise InvalidInput(f"unknown status {status!r}; choose one of: {', '.join(STATUSES)}")
        if limit < 1:
            raise InvalidInput("limit must be at least 1")
        rows = self.tables.rows(tool=tool_name(tool) if tool else None, status=status, limit=limit)
        return [self._summary(r) for r in rows]

    def files(self, session_id: str) -> list[dict[str, str]]:
        return [{"path": p, "change_type": c} for p, c in self._get(session_id).files]

    def show(self, session_id: str) -> dict[str, Any]:
        record = self._get(session_id)
        try:
            markdown = _read_session_file(self.markdown_file(record.row))
        except UnsafePath:
            raise  # a committed link where the file should be: refused, never read
        except (OSError, InvalidInput):  # gone, unreadable or oversized: the session as the store has it
            markdown = render(record)
        return {**self._summary(record.row), "files": self.files(session_id), "markdown": markdown}

    def search(
        self, query: str, *, limit: int = MAX_RESULTS, tool: str | None = None, now: datetime | None = None
    ) -> dict[str, Any]:
        """Weighted keyword search: up to 5 sessions above the relevance threshold, best first, each
        with its markdown_path (not the content). Dates, a tool and paths in the query filter it."""
        if limit < 1:
            raise InvalidInput("limit must be at least 1")
        limit = min(limit, MAX_RESULTS)
        parsed = extract_filters(query, self.tables.tools(), now)
        if tool:
            parsed.tool = tool_name(tool)
        rows = {r.id: r for r in self.tables.rows(tool=parsed.tool, after=parsed.after, before=parsed.before)}
        matched: dict[str, dict[str, list[str]]] = {sid: {} for sid in rows}
        score: dict[str, float] = dict.fromkeys(rows, 0.0)
        for term in parsed.terms:
            for sid, columns in self.tables.columns_matching(f'"{term}"').items():
                if sid in rows:
                    score[sid] += max(FTS_WEIGHTS[c] for c in columns)
                    labels = [_WEIGHT_LABEL.get(c, "work done") for c in columns]
                    matched[sid][term] = sorted(labels)
        for fragment in parsed.paths:
            for sid in self.tables.sessions_with_path(fragment):
                if sid in rows:
                    score[sid] += FTS_WEIGHTS["file_paths"]
                    matched[sid][fragment] = ["files"]
        n_terms = len(parsed.terms) + len(parsed.paths)
        if not n_terms and not (parsed.after or parsed.before or parsed.tool):
            return {"results": [], "query": parsed.to_dict()}  # nothing to look for
        bm25 = self.tables.bm25(" OR ".join(f'"{t}"' for t in parsed.terms)) if parsed.terms else {}
        if n_terms:
            relevance = {sid: s / (10.0 * n_terms) for sid, s in score.items()}
            kept = [sid for sid, r in relevance.items() if r >= MIN_RELEVANCE]
        else:  # only filters ("sessions last week"): the matching sessions, newest first
            relevance = {}
            kept = list(rows)
        kept.sort(key=lambda sid: (-relevance.get(sid, 0.0), bm25.get(sid, 0.0), _neg(rows[sid].started_at)))
        results = []
        for rank, sid in enumerate(kept[:limit], start=1):
            row = rows[sid]
            results.append(
                {
                    "rank": rank,
                    "score": round(relevance[sid], 3) if sid in relevance else None,
                    "session_id": sid,
                    "goal": row.goal,
                    "date": row.started_at[:10],
                    "tool": row.tool,
                    "status": row.status,
                    "top_files": [p for p, _ in self.tables.files(sid, limit=3)],
                    "markdown_path": self.absolute(row),
                    "why": "; ".join(f"{t} in {', '.join(cols)}" for t, cols in matched[sid].items())
                    or "matches the date/tool filters",
                }
            )
        return {"results": results, "query": parsed.to_dict()}


def _neg(started_at: str) -> tuple[int, ...]:
    """Sort key putting later timestamps first."""
    return tuple(-ord(ch) for ch in started_at)


def _json(value: Mapping[str, str]) -> str:
    return json.dumps(dict(value), ensure_ascii=False)
