"""The git queries of the staleness check (service/staleness.py), each one `git` process over the whole batch.

Why the git program and not a library: the check needs git's rename detection over history (`log -M`) and a
search of the working tree (`grep -w -F`), answered exactly as the user's own `git` would. GitPython only wraps
this same program (and costs its import); pygit2 needs libgit2 and has no grep; dulwich is pure Python, with no
grep and rename detection far slower on a long history. sessions/git.py already runs git the same way.

What reaches git from a store is untrusted (a committed `.codememory/`): no path or symbol read from a memory is
ever put in git's arguments. Paths go in on stdin to `cat-file --batch-check` as `<sha>:./<path>` (an object
name: git looks it up inside that commit's tree, and cannot be made to open a file), symbols on stdin to
`grep -f -` as fixed strings, and a path is refused before that unless it is relative, free of `..`, control
characters and a leading `-` (`safe_path`). The only values in argv are fixed options and SHAs checked to be
hex. Git's own variables that could point it at another repository (GIT_DIR, ...) are dropped."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from codememory.core.lazy_pattern import lazy_pattern
from codememory.errors import GitError

GIT_TIMEOUT_S = 120.0
MAX_SUBJECT = 300
_SHA_RE = lazy_pattern(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SYMBOL_RE = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_CONTROL_RE = lazy_pattern(r"[\x00-\x1f\x7f\u2028\u2029]")
_DROP_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)
# The store's own folder is not code: its daily logs mention every symbol a session talked about.
_NOT_CODE = ":(exclude).codememory"


def is_sha(value: object) -> bool:
    return isinstance(value, str) and _SHA_RE.fullmatch(value) is not None


def safe_path(name: str) -> str | None:
    """`name` as a path relative to the project that git and the file system may be asked about, else None:
    no absolute path, `~`, drive, `..`, `.git`, control character, leading `-`, or empty part."""
    if not name or len(name) > MAX_SUBJECT or _CONTROL_RE.search(name) or "\\" in name:
        return None
    path = name[2:] if name.startswith("./") else name
    path = path.rstrip("/")
    if not path or path.startswith(("/", "~", "-")) or ":" in path.split("/", 1)[0]:
        return None
    parts = path.split("/")
    if any(p in ("", ".", "..") or p.startswith("-") or p.lower() == ".git" for p in parts):
        return None
    return path


def safe_symbol(name: str) -> str | None:
    """A code name worth searching for (an identifier, dotted or `::` path, 3 to 100 characters), else None."""
    return name if 3 <= len(name) <= 100 and _SYMBOL_RE.fullmatch(name) else None


def git_env() -> dict[str, str]:
    """The environment git runs in: none of the variables that could point it elsewhere, no prompt, no pager."""
    env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
    env.update({"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_PAGER": "cat"})
    return env


def _git(root: Path, args: Sequence[str], stdin: str | None = None, ok: Sequence[int] = (0,)) -> str:
    import subprocess  # on use: the hooks never run a check

    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=root,
            input=stdin,
            capture_output=True,
            text=True,
            errors="surrogateescape",
            timeout=GIT_TIMEOUT_S,
            check=False,
            env=git_env(),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {args[0]}: {exc}") from None
    if done.returncode not in ok:
        raise GitError(f"git {args[0]} exited {done.returncode}: {done.stderr.strip()[:200]}")
    return done.stdout


def head(root: Path) -> str:
    """HEAD's SHA; GitError outside a repository or before the first commit."""
    try:
        out = _git(root, ["rev-parse", "--verify", "-q", "HEAD"]).strip()
    except GitError as exc:
        if "not a git repository" in str(exc):
            raise GitError(
                f"{root} is not in a git repository: staleness compares memories with the code's history"
            ) from None
        raise
    if not is_sha(out):
        raise GitError(f"the git repository at {root} has no commit yet")
    return out


def commits_known(root: Path, shas: Iterable[str]) -> dict[str, int]:
    """The commit time of each SHA that names a commit of this repository (a rewritten history loses some)."""
    wanted = [s for s in dict.fromkeys(shas) if is_sha(s)]
    if not wanted:
        return {}
    out = _git(root, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], "".join(f"{s}\n" for s in wanted))
    commits = [line.split()[0] for line in out.splitlines() if line.endswith(" commit")]
    if not commits:
        return {}
    times = _git(root, ["log", "--no-walk=unsorted", "--format=%H %ct", "--stdin"], "".join(f"{c}\n" for c in commits))
    found: dict[str, int] = {}
    for line in times.splitlines():
        sha, _, when = line.partition(" ")
        if is_sha(sha) and when.isdigit():
            found[sha] = int(when)
    return found


def exist_at(root: Path, pairs: Sequence[tuple[str, str]]) -> list[bool]:
    """For each (commit, path relative to `root`): whether the path (a file or a folder) was in that commit.
    Every path must have passed `safe_path`, every commit `is_sha`."""
    if not pairs:
        return []
    for sha, path in pairs:
        if not is_sha(sha) or safe_path(path) != path:
            raise ValueError(f"unsafe object name {sha}:{path!r}")
    lines = _git(root, ["cat-file", "--batch-check=%(objecttype)"], "".join(f"{s}:./{p}\n" for s, p in pairs))
    answers = lines.splitlines()
    if len(answers) != len(pairs):
        raise GitError("git cat-file answered a different number of lines")
    return [a in ("blob", "tree", "commit") for a in answers]


@dataclass(frozen=True)
class Removal:
    """A path deleted (`new` None) or renamed to `new` in `commit`; `order` 0 is the newest commit."""

    order: int
    commit: str
    time: int
    old: str
    new: str | None


def removals(root: Path, since: Sequence[str] = ()) -> list[Removal]:
    """Every deletion and rename (git's rename detection) under `root` in HEAD's history, newest first; `since`:
    commits whose history is left out (the check needs only what happened after the oldest memory's commit)."""
    args = ["log", "-z", "--format=%x01%H %ct", "--name-status", "-M", "--diff-filter=DR", "--relative", "HEAD"]
    exclude = [s for s in since if is_sha(s)]
    if exclude:
        args += ["--not", *exclude]
    out = _git(root, [*args, "--"])
    found: list[Removal] = []
    for order, chunk in enumerate(c for c in out.split("\x01") if c.strip()):
        tokens = chunk.split("\x00")
        sha, _, when = tokens[0].strip().partition(" ")
        if not is_sha(sha):
            continue
        i = 1
        while i < len(tokens):
            status = tokens[i].strip()
            if status.startswith("R") and i + 2 < len(tokens):
                found.append(Removal(order, sha, int(when or 0), tokens[i + 1], tokens[i + 2]))
                i += 3
            elif status.startswith("D") and i + 1 < len(tokens):
                found.append(Removal(order, sha, int(when or 0), tokens[i + 1], None))
                i += 2
            else:
                i += 1
    return found


def symbols_in(root: Path, symbols: Iterable[str], commit: str | None = None) -> set[str]:
    """Which of `symbols` occur as whole words in the code: the working tree (tracked and untracked files, not
    ignored ones) or, with `commit`, that commit's tree. Every symbol must pass `safe_symbol`."""
    wanted = sorted({s for s in symbols if safe_symbol(s) == s})
    if not wanted:
        return set()
    args = ["grep", "-o", "-h", "-w", "-F", "-I", "--no-color", "-f", "-"]
    if commit is None:
        args.append("--untracked")
    elif is_sha(commit):
        args.append(commit)
    else:
        raise ValueError("not a commit SHA")
    # `-o` prints one match per place, so a symbol inside a longer one (`Foo` in `Foo.bar`) is only seen once
    # the longer one is no longer asked for: ask again for what is still missing until a round finds nothing.
    present: set[str] = set()
    while wanted:
        out = _git(root, [*args, "--", ".", _NOT_CODE], "".join(f"{s}\n" for s in wanted), ok=(0, 1))  # 1: none
        found = set(out.splitlines()) & set(wanted)
        if not found:
            break
        present |= found
        wanted = [s for s in wanted if s not in found]
    return present
