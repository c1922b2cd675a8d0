"""`codememory init` for coding assistants: MCP server, hooks and rule block, installed and removed idempotently.
This module plans and applies; what to edit for each assistant is in its spec (codememory.assistants), the edits
are built from it in `files`, and how a file is edited is in `edits`.

Everything is planned first (every file read and parsed, every new content computed in memory), then written.
If any file we would touch is malformed (invalid JSON/TOML, unexpected shape) the whole init/uninstall stops
before writing anything and names the file: nothing is half-written.

Guarantees:
- JSON files are merged: every key we do not own is kept; ours are recognisable (a server named `codememory`
  whose command runs codememory; hook commands `codememory-hook <assistant> <event>`).
- Files committed with the project name `codememory` and `codememory-hook` as found on PATH, never this machine's
  paths (a teammate's checkout must work); only the user's own files (Codex's config.toml) hold the absolute path.
- Before the first change to a file that already existed, a copy is kept as `<file>.codememory-backup`.
- Re-running changes nothing when nothing needs changing (files stay byte-identical; action "unchanged").
- `uninstall` removes exactly our entries. When the file is what init made of the backup, the backup's bytes
  are restored; files we created are deleted; backups are deleted. The store (your memories) is kept.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from codememory import assistants
from codememory.assistants.spec import Assistant, HookJson, McpJson, PluginFile
from codememory.errors import InvalidInput, SetupError
from codememory.install.edits import FileOp, _Skip, shape_error
from codememory.install.files import CLI, HOOK, Commands, file_ops

ASSISTANTS = assistants.KEYS
BACKUP_SUFFIX = ".codememory-backup"


@dataclass
class Step:
    assistant: str
    file: str
    # added: our entries were not there (new or existing file); updated: ours were there and were replaced;
    # unchanged: nothing to do (file not written); skipped: not done (see reason); removed: ours taken out.
    action: str
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class _Write:
    path: Path
    content: str | None  # None: delete the file
    backup: bool = False  # copy the existing file to <file>.codememory-backup first
    restore_backup: bool = False  # replace the file by its backup (content ignored)
    drop_backup: bool = False


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)
    writes: list[_Write] = field(default_factory=list)


# ---------------------------------------------------------------------------------------- environment
def codememory_command() -> str:
    """The absolute path of the installed `codememory` script, else the name: for files of the user's own."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in ("codememory", "codememory.exe") and argv0.is_file():
        return str(argv0.absolute())
    found = shutil.which(CLI)
    if found:
        return str(Path(found).absolute())
    beside = Path(sys.executable).parent / CLI
    if beside.is_file():
        return str(beside)
    return CLI


def runs_by_name(spec: Assistant) -> bool:
    """Its committed files name codememory's commands (to be found on PATH when the assistant runs them)."""
    named = (HookJson, McpJson, PluginFile)
    return any(isinstance(f, named) and f.place.committed for f in spec.files)


def path_warnings(chosen: list[str], local_cli: str) -> list[str]:
    """What stops the assistants from finding codememory by name: nothing on PATH, or another install first there.
    The project's files name the commands, not this machine's paths, so a teammate's checkout works too; a
    codememory in a virtualenv that is not on the PATH the assistant runs with is then not found."""
    if not any(runs_by_name(_spec(k)) for k in chosen):
        return []
    missing = [name for name in (CLI, HOOK) if shutil.which(name) is None]
    here = Path(local_cli).parent if os.path.isabs(local_cli) else None
    if missing:
        hint = f'add {here} to PATH (e.g. export PATH="{here}:$PATH")' if here else "put its folder on PATH"
        return [
            f"{' and '.join(missing)} not found on PATH: the assistants run codememory by name, so its hooks and "
            f"MCP server will not start. Install it for your user (pipx install codememory, or uv tool install "
            f"codememory), or {hint} in the shell you start the assistants from."
        ]
    found = Path(shutil.which(CLI) or CLI).absolute()
    if here is not None and found.parent != here and found.resolve().parent != Path(local_cli).resolve().parent:
        return [f"the codememory on PATH is {found}, not this one ({local_cli}): the assistants will run that one."]
    return []


def detect(root: Path) -> list[str]:
    """Assistants installed: their CLI is on PATH or their project folder/file exists."""
    found = []
    for spec in assistants.REGISTRY:
        if any(shutil.which(c) for c in spec.clis) or any((root / m).exists() for m in spec.marks):
            found.append(spec.key)
    return found


def parse_assistants(value: str | None, root: Path) -> list[str]:
    """`--assistants`: None → detected; 'all'; 'none'; or a comma-separated list of names or aliases."""
    if value is None:
        return detect(root)
    value = value.strip().lower()
    if value == "all":
        return list(ASSISTANTS)
    if value in ("none", ""):
        return []
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if assistants.find(n) is None]
    if unknown:
        raise InvalidInput(f"unknown assistant {', '.join(unknown)!s}: choose from {', '.join(ASSISTANTS)}, all, none")
    keys = {spec.key for n in names if (spec := assistants.find(n)) is not None}
    return [k for k in ASSISTANTS if k in keys]


# ------------------------------------------------------------------------------------------ planner
def _display(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


class _View:
    """Files as planned so far: later steps see earlier steps' results (AGENTS.md is shared)."""

    def __init__(self) -> None:
        self.content: dict[Path, str | None] = {}

    def read(self, path: Path) -> str | None:
        if path not in self.content:
            try:
                self.content[path] = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                self.content[path] = None
            except (OSError, UnicodeDecodeError) as exc:
                raise SetupError(f"{path}: cannot be read ({exc}); nothing was changed") from exc
        return self.content[path]


def _parse(op: FileOp, text: str | None) -> Any:
    if op.kind == "json":
        if text is None or not text.strip():
            return {}
        data = json.loads(text)
        if not isinstance(data, dict):
            raise shape_error("the top level is not an object")
        return data
    if op.kind == "toml" and text:
        tomllib.loads(text)
    return text or ""


def _render(op: FileOp, data: Any) -> str:
    if op.kind == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if op.kind == "toml":
        tomllib.loads(data)  # never write a config.toml Codex cannot read
    return str(data)


def _empty(op: FileOp, data: Any) -> bool:
    return data == {} if op.kind == "json" else not str(data).strip()


def _spec(key: str) -> Assistant:
    spec = assistants.find(key)
    if spec is None:
        raise InvalidInput(f"unknown assistant {key!r}: choose from {', '.join(ASSISTANTS)}")
    return spec


def plan(
    root: Path,
    chosen: list[str],
    *,
    uninstall: bool = False,
    exe: str | None = None,
    other_projects: int = 0,
) -> Plan:
    """Compute every step and every file change; raises SetupError (writing nothing) on a malformed file.

    `other_projects`: how many other projects are registered; on uninstall the user-level Codex MCP server
    (one entry serves every project: `codememory mcp` finds the project from its working folder) is kept
    while there are any. `exe`: this machine's codememory, for the user's own files (default: this install).
    """
    commands = Commands(exe or codememory_command())
    result = Plan()
    view = _View()
    for assistant in chosen:
        ops, skipped = file_ops(_spec(assistant), root, commands)
        result.steps.extend(Step(assistant, s.file, "skipped", s.reason) for s in skipped)
        for op in ops:
            shown = _display(op.path, root)
            if uninstall and op.shared and other_projects:
                reason = f"user-level; still serves {other_projects} other registered project(s)"
                result.steps.append(Step(assistant, shown, "skipped", reason))
                continue
            text = view.read(op.path)
            try:
                data = _parse(op, text)
                refused = op.refuse(text) if op.refuse is not None and text and not uninstall else None
                if refused:
                    raise _Skip(refused)
                if uninstall:
                    step, write = _plan_uninstall(op, shown, text, data)
                elif op.retired:
                    retired = _plan_retire(op, shown, text, data)
                    if retired is None:
                        continue
                    step, write = retired
                else:
                    step, write = _plan_install(op, shown, text, data)
            except _Skip as skip:
                result.steps.append(Step(assistant, shown, "skipped", str(skip)))
                continue
            except (ValueError, tomllib.TOMLDecodeError) as exc:
                kind = {"json": "JSON", "toml": "TOML", "text": "text"}[op.kind]
                raise SetupError(
                    f"{op.path}: cannot be updated, invalid {kind} ({exc}); fix it and run "
                    "`codememory init` again. Nothing was changed."
                ) from exc
            result.steps.append(step)
            if write is not None:
                result.writes.append(write)
                view.content[op.path] = (
                    None
                    if write.content is None and not write.restore_backup
                    else _backup_path(op.path).read_text(encoding="utf-8")
                    if write.restore_backup
                    else write.content
                )
    return result


def _backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def _plan_install(op: FileOp, shown: str, text: str | None, data: Any) -> tuple[Step, _Write | None]:
    new = _render(op, op.install(data))
    if text is not None and (new == text or (op.kind == "json" and json.loads(new) == data)):
        return Step(op.assistant, shown, "unchanged", f"{op.what} already installed"), None
    # the file as it is on disk, not as planned so far: a file an earlier step creates has no original to keep
    backup = op.backup and text is not None and op.path.exists() and not os.path.lexists(_backup_path(op.path))
    reason = op.what + (f"; backup: {_backup_path(op.path).name}" if backup else "")
    action = "added" if text is None or op.strip(data) == data else "updated"
    return Step(op.assistant, shown, action, reason), _Write(op.path, new, backup=backup)


def _plan_uninstall(op: FileOp, shown: str, text: str | None, data: Any) -> tuple[Step, _Write | None]:
    if text is None:
        return Step(op.assistant, shown, "unchanged", "not present"), None
    backup = _backup_path(op.path)
    has_backup = backup.exists()
    stripped = op.strip(data)
    if _same(op, stripped, data):  # nothing of ours here (an earlier step may have restored the file already)
        drop = _Write(op.path, text, drop_backup=True) if has_backup else None
        return Step(op.assistant, shown, "unchanged", f"{op.what} not installed"), drop
    if has_backup:
        original_text = backup.read_text(encoding="utf-8")
        try:
            original = _parse(op, original_text)
            # Nothing of the user's changed since: the file differs from what init made of the backup at most in our
            # own entries (an older init may have written them differently, e.g. by an absolute path).
            untouched = _same(op, op.strip(op.install(original)), stripped)
        except (ValueError, tomllib.TOMLDecodeError, _Skip):
            untouched = False
        if untouched:
            return Step(op.assistant, shown, "removed", f"{op.what}: original restored from backup"), _Write(
                op.path, None, restore_backup=True
            )
    if not has_backup and _empty(op, stripped):
        return Step(op.assistant, shown, "removed", f"{op.what}: file created by init deleted"), _Write(op.path, None)
    return Step(op.assistant, shown, "removed", op.what), _Write(op.path, _render(op, stripped), drop_backup=has_backup)


def _plan_retire(op: FileOp, shown: str, text: str | None, data: Any) -> tuple[Step, _Write | None] | None:
    """Install for an entry another one replaces: ours is taken out exactly as uninstall takes it (the backup
    restored when the file is what init made of it); nothing to report when the file does not exist."""
    if text is None:
        return None
    step, write = _plan_uninstall(op, shown, text, data)
    if step.action == "removed":
        step.reason = f"{op.what}: {op.retired}"
    else:
        step.reason = f"no {op.what}: {op.retired}"
    return step, write


def _same(op: FileOp, a: Any, b: Any) -> bool:
    return bool(a == b)


# ------------------------------------------------------------------------------------------- writing
def apply(result: Plan) -> None:
    """Write the planned changes (each file atomically; backups before the first change)."""
    for write in result.writes:
        path, backup = write.path, _backup_path(write.path)
        if write.restore_backup:
            os.replace(backup, path)
            _prune_dirs(path.parent)
            continue
        if write.backup and path.exists() and not os.path.lexists(backup):
            _write_new(backup, path.read_bytes())
            shutil.copystat(path, backup)
        if write.content is None:
            path.unlink(missing_ok=True)
            _prune_dirs(path.parent)
        elif not path.exists() or path.read_text(encoding="utf-8") != write.content:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.codememory-tmp")
            _write_new(tmp, write.content.encode("utf-8"))
            if path.exists():
                shutil.copymode(path, tmp)
            os.replace(tmp, path)
        if write.drop_backup:
            backup.unlink(missing_ok=True)


def _write_new(path: Path, data: bytes) -> None:
    """Create `path` (O_EXCL, never through a link: a clone may commit `settings.json.codememory-backup ->
    ~/.bashrc` to have our JSON, its keys included, written over the user's shell start-up file)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def _prune_dirs(folder: Path) -> None:
    """Remove an assistant folder init may have created, only when it is now empty."""
    for spec in assistants.REGISTRY:
        nested = folder.name in spec.subfolders and folder.parent.name in spec.folders
        if nested and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
            break
    ours = any(folder.name in a.folders or folder in [u.path() for u in a.user_folders] for a in assistants.REGISTRY)
    if ours and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
