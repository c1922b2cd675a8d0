"""`codememory trust`: trust a project's committed config.toml so that all of its settings apply, take that trust
back, or only show which of its settings apply and which are ignored (codememory.core.trust decides who may set
what; codememory.core.config.resolve_config applies it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codememory.core import trust
from codememory.core.config import CONFIG_NAME, ProjectSetting, Resolved, resolve_config
from codememory.core.project import store_dir
from codememory.core.result import Result
from codememory.errors import InvalidInput


@dataclass
class TrustReport(Result):
    """`trust --json` (also with --show and --revoke): the file, its trust now, what was done, and each of its
    settings with what became of it."""

    config: str  # the file's resolved path (as given when there is no file)
    exists: bool
    sha256: str | None  # of the bytes read; None without a file
    trust: str  # "absent", "trusted", "changed" (since trusted) or "untrusted"
    trusted_at: str | None
    action: str | None  # "trusted", "already trusted", "revoked", "was not trusted"; None for --show
    settings: list[ProjectSetting]


def _report(path: Path, resolved: Resolved, action: str | None) -> TrustReport:
    project = resolved.project
    return TrustReport(
        config=str(project.resolved if project else path),
        exists=project is not None,
        sha256=project.digest if project else None,
        trust=resolved.trust_state,
        trusted_at=trust.trusted_at(project) if project else None,
        action=action,
        settings=resolved.settings,
    )


def show_trust(root: Path) -> TrustReport:
    """The project's config.toml as it applies now."""
    folder = store_dir(root)
    return _report(folder / CONFIG_NAME, resolve_config(folder), None)


def trust_config(root: Path) -> TrustReport:
    """Record the file's current content as trusted (InvalidInput when there is no file)."""
    folder = store_dir(root)
    path = folder / CONFIG_NAME
    project = resolve_config(folder).project
    if project is None:
        raise InvalidInput(f"{path} does not exist: nothing to trust")
    action = "trusted" if trust.trust(project) else "already trusted"
    return _report(path, resolve_config(folder), action)  # what applies now


def revoke_trust(root: Path) -> TrustReport:
    """Forget the trust given to the file (whatever its content)."""
    folder = store_dir(root)
    path = folder / CONFIG_NAME
    action = "revoked" if trust.revoke(path.resolve()) else "was not trusted"
    return _report(path, resolve_config(folder), action)
