"""Coding sessions: checkpoints written by the agent's own model, rendered to markdown, searched.

A session is one coding session of one tool. Each checkpoint appends what is new (work completed,
work done, decisions, plan files, references), replaces what is current (work pending, the diff
summary, the files touched), and re-renders `.codememory/sessions/<YYYY-MM-DD_HH-MM>_<tool>_<slug>.md`.
The markdown file is the source of truth: `rebuild` recreates the database rows from the files.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from codememory.core import safe_files
from codememory.core.bounded_input import PLAN_HEADER_MAX_BYTES, check_query, decode, read_upto
from codememory.core.dates import now_utc, to_iso
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.project import store_dir
from codememory.errors import InvalidInput, NotFound, UnsafePath
from codememory.sessions.filters import extract_filters
from codememory.sessions.git import diff_stat_line, files_touched, head_sha, with_touched
from codememory.sessions.markdown import (
    MARKDOWN_NAME_RE,
    STATUSES,
    check_session_id,
    markdown_path_of,
    parse,
    read_session_file,
    render,
)
from codememory.store.sessions import FTS_WEIGHTS, SessionRecord, SessionRow, SessionTables
from codememory.text.privacy import scrub

TRIGGERS = ("manual", "context_limit", "git_commit", "session_end")
MAX_RESULTS = 5
MIN_RELEVANCE = 0.15  # weighted share of the query's terms matched (goal 10 ... work_summary 3, over 10 per term)
MAX_ITEM = 2000
MAX_SLUG_WORDS = 4
# A session id is <date>_<time>_<tool>_<slug>[-n], and a file name under sessions/: these keep it within the 200
# characters a stored session id may have (store/rows.py) and any file system's name limit.
MAX_SLUG_CHARS = 80
MAX_TOOL_CHARS = 40
_URL_RE = lazy_pattern(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_WEIGHT_LABEL = {"goal": "goal", "todos": "todos", "file_paths": "files", "decisions": "decisions"}


def session_slug(text: str, what: str = "slug") -> str:
    """'TEI Migration' -> 'tei-migration'; at most four words."""
    slug = "-".join(re.findall(r"[a-z0-9]+", scrub(text).lower()))
    if not slug:
        raise InvalidInput(f"{what} is empty (give a short topic like 'tei-migration')")
    if slug.count("-") >= MAX_SLUG_WORDS:
        raise InvalidInput(f"{what} {_shown(text)} has more than {MAX_SLUG_WORDS} words (e.g. 'tei-migration')")
    if len(slug) > MAX_SLUG_CHARS:
        raise InvalidInput(f"{what} {_shown(text)} is longer than {MAX_SLUG_CHARS} characters (e.g. 'tei-migration')")
    return slug


def tool_name(text: str) -> str:
    name = "-".join(re.findall(r"[a-z0-9]+", text.lower()))
    if not name:
        raise InvalidInput(f"tool name {_shown(text)} has no letters or digits")
    if len(name) > MAX_TOOL_CHARS:
        raise InvalidInput(f"tool name {_shown(text)} is longer than {MAX_TOOL_CHARS} characters (e.g. 'cursor')")
    return name


def _shown(text: str) -> str:
    """A value quoted in an error: its start only (a slug or a tool name of thousands of characters)."""
    return repr(text) if len(text) <= 60 else repr(text[:57]) + "..."


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

    def absolute(self, row: SessionRow) -> str | None:
        """The session file's absolute path, handed to agents to read; None when the file there is a link (or not a
        regular file) or does not resolve inside `.codememory/sessions/`: a committed link would send the agent's own
        Read tool, which follows links, to any file on the machine. A file not written yet keeps its path."""
        path = self.markdown_file(row)
        sessions = self.folder / "sessions"
        try:
            if os.path.islink(sessions) or os.path.islink(self.folder):
                return None
            st = os.lstat(path)
        except FileNotFoundError:
            return str(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or not path.resolve().is_relative_to(sessions.resolve()):
            return None
        return str(path)

    def record(self, session_id: str) -> SessionRecord:
        """Everything the store holds of one session (what its markdown file shows)."""
        return self._get(session_id)

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
        files = with_touched(files, touched or ())
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
            safe_files.write_atomic(self.markdown_file(record.row), render(record))

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
                if not MARKDOWN_NAME_RE.match(relative):
                    raise InvalidInput(f"{path.name!r} is not a session file name")
                # the markdown may come from a commit (untrusted): scrubbed like anything else stored
                record = parse(scrub(read_session_file(path)), relative)
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
            markdown = read_session_file(self.markdown_file(record.row))
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
        check_query(query)
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
