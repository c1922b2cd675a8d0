"""HEAD's commit read from the repository's files, without running git: a memory records the commit it was
written at (staleness is judged against it), and a hook writing memories must not pay for a git process.

Handles a `.git` folder or a `.git` file (worktrees, submodules: `gitdir: <path>`), a symbolic HEAD (`ref:
refs/heads/main`) resolved through the loose ref file or `packed-refs` (in the common folder for a worktree),
and a detached HEAD. Anything else (no repository, an unborn branch, a ref it cannot read) gives None: the
memory then simply has no commit. Nothing is written, and nothing here follows a ref name out of the git
folder (a ref with `..` or an absolute path is refused)."""

from __future__ import annotations

from pathlib import Path

from codememory.core.lazy_pattern import lazy_pattern

_SHA_RE = lazy_pattern(r"[0-9a-f]{40}|[0-9a-f]{64}")
_REF_RE = lazy_pattern(r"refs/[A-Za-z0-9._/+@-]{1,240}")
_MAX_READ = 64 * 1024  # HEAD, a ref, the gitdir pointer; packed-refs is read in full below
_MAX_PACKED = 32 * 1024 * 1024
_MAX_DEPTH = 40  # folders walked up from the project to find .git


def _read(path: Path, limit: int = _MAX_READ) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def git_dir(start: Path) -> Path | None:
    """The git folder of the repository holding `start` (its `.git` folder, or where a `.git` file points)."""
    here = start
    for _ in range(_MAX_DEPTH):
        dot = here / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            text = _read(dot) or ""
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                target = target if target.is_absolute() else here / target
                return target if target.is_dir() else None
            return None
        if here.parent == here:
            return None
        here = here.parent
    return None


def _common_dir(gdir: Path) -> Path:
    text = _read(gdir / "commondir")
    if not text or not text.strip():
        return gdir
    common = Path(text.strip())
    return common if common.is_absolute() else gdir / common


def _packed(common: Path, ref: str) -> str | None:
    text = _read(common / "packed-refs", _MAX_PACKED)
    for line in (text or "").splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _SHA_RE.fullmatch(sha):
            return sha
    return None


def head_commit(start: Path) -> str | None:
    """HEAD's SHA for the repository holding `start`, or None (no repository, no commit yet, unreadable)."""
    gdir = git_dir(start)
    if gdir is None:
        return None
    head = (_read(gdir / "HEAD") or "").strip()
    if _SHA_RE.fullmatch(head):
        return head
    if not head.startswith("ref:"):
        return None
    ref = head[4:].strip()
    if not _REF_RE.fullmatch(ref) or ".." in ref or "//" in ref:
        return None
    for folder in (gdir, _common_dir(gdir)):  # a worktree keeps its HEAD's branch in the common folder
        loose = (_read(folder / ref) or "").strip()
        if _SHA_RE.fullmatch(loose):
            return loose
    return _packed(_common_dir(gdir), ref)
