"""Reading and writing files under a project's `.codememory/` without following symbolic links.

`.codememory/` may be committed, so every name in it was chosen by whoever pushed last: a committed
`logs/hooks.log -> ~/.bashrc` would make a plain `open(..., "a")` append to the user's shell start-up
file. Every function here walks from the folder that holds `.codememory` down to the file one
component at a time with `O_NOFOLLOW` (`openat` on the previous folder's descriptor), so a link at
`.codememory` itself, at any folder below it, or at the file is refused with `UnsafePath` before
anything is read or written. Folders above `.codememory` belong to the user and are followed as usual.

A path with no `.codememory` component (a cache folder a test points elsewhere) is checked from its
own folder down: only the file itself must not be a link.

A name from the folder shown in an error goes through `core.safe_text.printable_line`, so it stays one inert line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from codememory.core.project import STORE_DIR
from codememory.core.safe_text import printable_line
from codememory.errors import UnsafePath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO someone left in the folder must not hang; it is then refused as not a file.
_FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def _refusal(shown: Path, what: str) -> UnsafePath:
    why = f"; codememory never follows links inside {STORE_DIR}/ (a clone could point them anywhere)"
    return UnsafePath(f"refusing to use {shown}: it is {what}{why if 'link' in what else ''}. Remove it and try again")


def _split(path: Path) -> tuple[Path, tuple[str, ...]]:
    """(the folder the walk starts from, the names from there down to the file). The walk starts above
    the innermost `.codememory` so that the store folder itself is checked too."""
    absolute = Path(os.path.abspath(path))
    parts = absolute.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == STORE_DIR:
            return Path(*parts[:i]), parts[i:]
    return absolute.parent, (absolute.name,)


def _check_link(dir_fd: int, name: str, shown: Path) -> None:
    """Raise UnsafePath when `name` in `dir_fd` is a link or not a regular file or folder."""
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise _refusal(shown, "a symbolic link")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise _refusal(shown, "not a regular file or folder")


def _open_dir(dir_fd: int, name: str, shown: Path, create: bool) -> int:
    try:
        return _open_dir_once(dir_fd, name, shown)
    except FileNotFoundError:
        if not create:
            raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=dir_fd)
    return _open_dir_once(dir_fd, name, shown)


def _open_dir_once(dir_fd: int, name: str, shown: Path) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        _check_link(dir_fd, name, shown)
        if exc.errno == errno.ENOTDIR:
            raise _refusal(shown, "a file where a folder should be") from None
        raise


@contextlib.contextmanager
def _parent(path: Path, *, create: bool = False) -> Iterator[tuple[int, str, Path]]:
    """A descriptor of the file's folder, reached without following links below the start, and the
    file's name in it."""
    start, names = _split(path)
    if create:
        start.mkdir(parents=True, exist_ok=True)
    fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        shown = start
        for name in names[:-1]:
            shown = shown / name
            next_fd = _open_dir(fd, name, shown, create)
            os.close(fd)
            fd = next_fd
        yield fd, names[-1], shown / names[-1]
    finally:
        os.close(fd)


def open_fd(path: Path, flags: int, mode: int = 0o644, *, create_dirs: bool = False) -> int:
    """`os.open` of a regular file, refusing a link at it or at any folder from `.codememory` down."""
    with _parent(path, create=create_dirs) as (dir_fd, name, shown):
        try:
            fd = os.open(name, flags | _FILE_FLAGS, mode, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.EEXIST):  # EEXIST: O_EXCL met a name, followed nothing
                _check_link(dir_fd, name, shown)
            raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _refusal(shown, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_dirs(folder: Path) -> None:
    """Create `folder` (and the folders above it, from `.codememory` down) without following links."""
    with _parent(folder / "_", create=True):
        pass


def check_dir(folder: Path) -> bool:
    """True when `folder` exists and is reached without links (False when it does not exist)."""
    try:
        with _parent(folder / "_"):
            return True
    except FileNotFoundError:
        return False


def remove_files(folder: Path, should_remove: Callable[[str], bool]) -> None:
    """Delete the regular files directly in `folder` whose names `should_remove` picks (best effort), reaching the
    folder without following links: a committed link there never makes us delete anything elsewhere."""
    try:
        with _parent(folder / "_") as (dir_fd, _name, _shown):
            for name in os.listdir(dir_fd):
                if should_remove(name):
                    with contextlib.suppress(OSError):
                        if stat.S_ISREG(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                            os.unlink(name, dir_fd=dir_fd)
    except (OSError, UnsafePath):
        return


def open_read(path: Path) -> BinaryIO:
    return os.fdopen(open_fd(path, os.O_RDONLY), "rb")


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The file's bytes (at most `limit`)."""
    with open_read(path) as f:
        return f.read() if limit is None else f.read(limit)


def read_text(path: Path, limit: int | None = None, *, errors: str = "strict") -> str:
    return read_bytes(path, limit).decode("utf-8", errors)


def append_bytes(path: Path, data: bytes, *, sync: bool = False, mode: int = 0o644, create_dirs: bool = True) -> int:
    """Append `data` with one O_APPEND descriptor (the whole of it, retrying short writes); returns the
    file's size afterwards."""
    fd = open_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode, create_dirs=create_dirs)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_file(path: Path, *, mode: int = 0o644) -> Iterator[BinaryIO]:
    """A binary file that replaces `path` all at once when the block ends without an error: a new
    temporary file (O_EXCL, never a link) in the same folder, fsynced, renamed over the file. A link at
    the file's name is refused, not replaced."""
    with _parent(path, create=True) as (dir_fd, name, shown):
        _check_link(dir_fd, name, shown)
        tmp = f".{name}.{os.urandom(6).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FILE_FLAGS, mode, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise


def write_atomic(path: Path, data: bytes | str, *, mode: int = 0o644) -> None:
    """Replace the file's content all at once (see `atomic_file`)."""
    with atomic_file(path, mode=mode) as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def create_exclusive(path: Path, data: bytes | str, *, mode: int = 0o644) -> bool:
    """Write a new file only when nothing (not even a dangling link) has that name; False if it exists."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd = open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode, create_dirs=True)
    except FileExistsError:
        return False
    try:
        os.write(fd, payload)
    finally:
        os.close(fd)
    return True


def check_sqlite_files(db: Path) -> None:
    """Before SQLite opens `db`: neither the store folder, nor the database, nor the side files SQLite
    creates next to it (`-wal`, `-shm`, `-journal`) may be links; SQLite would follow them and write
    its journal over whatever they point to."""
    with _parent(db) as (dir_fd, name, shown):
        for suffix in ("", *SQLITE_SIDE_FILES):
            _check_link(dir_fd, name + suffix, shown.with_name(name + suffix))
            if suffix == "":
                with contextlib.suppress(FileNotFoundError):
                    if stat.S_ISDIR(os.lstat(name, dir_fd=dir_fd).st_mode):
                        raise _refusal(shown, "a folder, not a database file")


def inside(folder: Path, relative: str, what: str = "path") -> Path:
    """`folder / relative` for a relative path taken from data (the database, a markdown file), refused
    unless it stays inside `folder` by its own names: not absolute, no `..`, no empty or odd parts.
    Links are then refused when the file is opened."""
    parts = PurePosixPath(relative).parts if relative else ()
    if (
        not parts
        or relative.startswith("/")
        or any(p in ("", ".", "..") or "\\" in p or "\0" in p for p in parts)
        or relative != PurePosixPath(*parts).as_posix()
    ):
        raise UnsafePath(f"{what} {printable_line(relative)!r} does not stay inside {folder}")
    return folder.joinpath(*parts)
