"""What git knows about where a store's files came from: whether `memory.db` is tracked (it arrived with the
repository), and who last committed each memory file of the text form.

Only git is asked, never the files: a memory file may claim any `entered_by`, and a committed store any row. The
commit author is what the committer typed into git, so it is shown as who pushed it, not proven; it is still the
name a teammate can be asked about. Git runs with the environment of git_history.py (nothing pointing it elsewhere)
and with `core.fsmonitor` off (a repository's own config must not start a program for a read); every argument is a
fixed option or a path this module builds. Any failure (no git, not a repository, a timeout) means "git does not
know", never an error for the caller.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from codememory.core.project import STORE_DIR
from codememory.core.provenance import git_author
from codememory.service.git_history import git_env

LOG_TIMEOUT_S = 10.0
_SAFE = ["-c", "core.fsmonitor=false", "-c", "core.quotepath=off"]
_COMMIT = "\x01"  # starts each commit's line in the log below


def _run(root: Path, args: list[str], timeout: float = 5.0) -> tuple[int, str] | None:
    import subprocess  # on use: opening a store that needs no answer from git never imports it

    try:
        done = subprocess.run(
            ["git", *_SAFE, *args],
            cwd=root,
            capture_output=True,
            text=True,
            errors="surrogateescape",
            timeout=timeout,
            check=False,
            env=git_env(),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode, done.stdout


def is_tracked(root: Path, relative: str) -> bool:
    """Whether git tracks `relative` (a path under the project this module names itself): True means the file
    came with the repository. False when it is not tracked, or git cannot tell."""
    found = _run(root, ["ls-files", "--error-unmatch", "--", relative])
    return found is not None and found[0] == 0


def committed_copy(root: Path, relative: str, dest: Path) -> bool:
    """Write the version of `relative` that git checked out (the index's: what a clone, pull or checkout put there)
    to `dest`; False when git has none or cannot say."""
    import subprocess

    try:
        with open(dest, "wb") as out:
            done = subprocess.run(
                ["git", *_SAFE, "cat-file", "blob", f":{relative}"],
                cwd=root,
                stdout=out,
                stderr=subprocess.DEVNULL,
                timeout=LOG_TIMEOUT_S,
                check=False,
                env=git_env(),
            )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def user_email(root: Path) -> str | None:
    """The address this clone commits as (`git config user.email`), or None."""
    found = _run(root, ["config", "--get", "user.email"])
    return found[1].strip() or None if found is not None and found[0] == 0 else None


def changed_here(root: Path, folder: str) -> set[str]:
    """Files under `folder` that differ from the last commit or are not committed at all (their content was not
    written by a commit's author)."""
    found = _run(root, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", folder])
    if found is None or found[0] != 0:
        return set()
    out: set[str] = set()
    entries = found[1].split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        if len(entry) > 3:
            out.add(entry[3:])
            if entry[:1] in ("R", "C"):
                i += 1  # a rename's old path follows
        i += 1
    return out


def last_authors(root: Path, paths: Collection[str]) -> dict[str, str | None]:
    """For each of `paths` (relative to the project, under the text form's folder): the author of the last commit
    that touched it, as git_author shows one; None when git does not know (not committed, not a repository). One
    `git log` over the folder, stopped as soon as every path is found; a path changed in the working tree since its
    last commit has no author (someone here wrote it, not that commit's author)."""
    out: dict[str, str | None] = dict.fromkeys(paths)
    if not paths:
        return out
    folder = f"{STORE_DIR}/memories"
    wanted = set(paths) - changed_here(root, folder)
    if not wanted:
        return out
    import subprocess

    try:
        proc = subprocess.Popen(
            ["git", *_SAFE, "log", "--no-renames", "--format=" + _COMMIT + "%ae%x00%an", "--name-only", "--", folder],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            errors="surrogateescape",
            env=git_env(),
        )
    except OSError:
        return out
    import threading

    timer = threading.Timer(LOG_TIMEOUT_S, proc.kill)  # a log that takes too long leaves the rest unknown
    timer.start()
    author: str | None = None
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            if line.startswith(_COMMIT):
                email, _, name = line[1:].partition("\0")
                author = git_author(email, name)
            elif line in wanted:
                wanted.discard(line)
                out[line] = author
                if not wanted:
                    break
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    return out
