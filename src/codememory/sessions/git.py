"""The git state a session records: HEAD's SHA, the files changed since the session started, the diff's size."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from codememory.core.project import STORE_DIR

CHANGE_TYPES = ("created", "modified", "deleted")
GIT_TIMEOUT_S = 3.0


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


def ours(path: str) -> bool:
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
        if path and not ours(path):
            found[path] = kinds.get(status[:1], "modified")
    for path in untracked.splitlines():
        if path and not ours(path):
            found[path] = "created"
    return sorted(found.items(), key=lambda pc: (CHANGE_TYPES.index(pc[1]), pc[0]))


def with_touched(files: list[tuple[str, str]] | None, touched: Sequence[str]) -> list[tuple[str, str]] | None:
    """Git's (path, change type) list plus the journaled paths it does not have (None: neither knows)."""
    paths = [p for p in dict.fromkeys(str(t).strip() for t in touched) if p and not ours(p)]
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
            if parts[0].isdigit() and parts[1].isdigit() and not ours(parts[2]):
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
