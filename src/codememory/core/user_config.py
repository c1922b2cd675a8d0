"""Changing settings in the user's own `~/.config/codememory/config.toml` (`codememory init --extract-with`): the file
is the user's, so it is edited in place, keeping their comments, order and every other setting (tomlkit), and a link
to it (a dotfile manager's) is followed to the file it names. A project's committed config is never written here."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codememory.core.config import CONFIG_NAME, Config, check_layout
from codememory.core.paths import config_dir
from codememory.errors import InvalidInput


def user_config_path() -> Path:
    return config_dir() / CONFIG_NAME


@dataclass
class SectionEdit:
    """An edit of one `[section]` of the user's config, read and checked before anything is written (`apply` writes
    it). `changed`: the file would be different."""

    path: Path
    document: Any  # tomlkit's document, edited
    changed: bool

    @classmethod
    def plan(cls, section: str, values: Mapping[str, Any], remove: Iterable[str] = ()) -> SectionEdit:
        """Set `values` and remove the keys `remove` in `[section]` (created when missing); InvalidInput when the file
        cannot be read, is not TOML, or would not be a config codememory reads."""
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        path = user_config_path()
        try:
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            document = tomlkit.parse(text)
        except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
            raise InvalidInput(f"cannot read {path}: {exc}") from None
        table = document.get(section)
        if table is None:
            table = tomlkit.table()
            document.add(section, table)
        elif not isinstance(table, dict):
            raise InvalidInput(f"{path}: [{section}] is not a table")
        changed = not path.exists()
        for key, value in values.items():
            changed = changed or table.get(key) != value
            table[key] = value
        for key in remove:
            if key in table and key not in values:
                del table[key]
                changed = True
        check_layout(document.unwrap(), Config())
        return cls(path, document, changed)

    def apply(self) -> None:
        """Write the edited file: atomically, through a link to the file it names, keeping the file's mode."""
        import tomlkit

        if not self.changed:
            return
        target = self.path.resolve() if self.path.is_symlink() else self.path
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), mode)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(tomlkit.dumps(self.document))
            os.chmod(tmp, mode)  # the umask narrowed what os.open was given
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
