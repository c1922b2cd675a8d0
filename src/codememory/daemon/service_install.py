"""`codememory daemon install|uninstall`: the user service that runs `codememory daemon run` at login (a
systemd user unit on Linux, a launchd agent on macOS), enabled and started when the service manager is
reachable, else written with the commands to run."""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codememory.core.env_switches import switched_on
from codememory.core.paths import ensure_state_dir, xdg_home
from codememory.core.result import Result
from codememory.daemon.files import OUT_NAME
from codememory.daemon.lifecycle import stop
from codememory.errors import DaemonError

SERVICE_NAME = "codememory.service"
LAUNCHD_LABEL = "dev.codememory.daemon"
# A switch (core.env_switches): never call systemctl/launchctl, install only writes the file.
ENV_NO_SERVICE_MANAGER = "CODEMEMORY_NO_SERVICE_MANAGER"


def console_script() -> Path:
    """The absolute path of the installed `codememory` console script (what the service runs)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in ("codememory", "codememory.exe") and argv0.is_file():
        return argv0.absolute()
    sibling = Path(sys.executable).parent / "codememory"
    if sibling.is_file():
        return sibling.absolute()
    found = shutil.which("codememory")
    if found:
        return Path(found).absolute()
    raise DaemonError("cannot find the `codememory` console script (install codememory with pip or pipx first)")


def _service_env() -> dict[str, str]:
    """The XDG locations of this shell, so the service uses the same settings, store registry and state."""
    names = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")
    return {n: os.environ[n] for n in names if os.environ.get(n) and os.path.isabs(os.environ[n])}


def _systemd_quote(word: str, *, exec_line: bool) -> str:
    word = word.replace("%", "%%")
    if exec_line:
        word = word.replace("$", "$$")
    if word and all(c.isalnum() or c in "/._-+:=,@" for c in word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_unit(program: Sequence[str], env: dict[str, str]) -> str:
    exec_start = " ".join(_systemd_quote(w, exec_line=True) for w in program)
    lines = [
        "# Written by `codememory daemon install`; remove with `codememory daemon uninstall`.",
        "[Unit]",
        "Description=codememory daemon (local memory for AI coding agents)",
        "StartLimitIntervalSec=120",
        "StartLimitBurst=5",
        "",
        "[Service]",
        "Type=simple",
        f"ExecStart={exec_start}",
        "Restart=on-failure",
        "RestartSec=5",
        "TimeoutStopSec=20",
    ]
    lines += [f"Environment={_systemd_quote(f'{k}={v}', exec_line=False)}" for k, v in sorted(env.items())]
    lines += ["", "[Install]", "WantedBy=default.target", ""]
    return "\n".join(lines)


def launchd_plist(program: Sequence[str], env: dict[str, str], out_path: Path) -> bytes:
    plist: dict[str, Any] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": list(program),
        "RunAtLoad": True,
        # Restarted when it fails, not after `codememory daemon stop` (a clean exit).
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(out_path),
        "StandardErrorPath": str(out_path),
    }
    if env:
        plist["EnvironmentVariables"] = dict(sorted(env.items()))
    return plistlib.dumps(plist)


def systemd_unit_path() -> Path:
    return xdg_home("XDG_CONFIG_HOME", ".config") / "systemd" / "user" / SERVICE_NAME


def launchd_plist_path() -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"


def _manager_skipped() -> bool:
    return switched_on(ENV_NO_SERVICE_MANAGER)


def _systemd_usable() -> bool:
    if _manager_skipped() or not shutil.which("systemctl") or not Path("/run/systemd/system").is_dir():
        return False
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return True
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    return Path(runtime, "bus").exists()


def _launchctl_usable() -> bool:
    return not _manager_skipped() and shutil.which("launchctl") is not None


def _platform() -> str:
    if sys.platform == "darwin":
        return "launchd"
    if sys.platform.startswith("linux"):
        return "systemd"
    raise DaemonError(
        "service install supports Linux (systemd) and macOS (launchd); elsewhere run `codememory daemon start`"
    )


def _run_manager(commands: Sequence[Sequence[str]], *, check: bool = True) -> None:
    for cmd in commands:
        try:
            done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            if check:
                raise DaemonError(f"`{shlex.join(cmd)}` failed: {exc}") from None
            continue
        if done.returncode != 0 and check:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise DaemonError(f"`{shlex.join(cmd)}` failed: {detail[-1] if detail else f'exit {done.returncode}'}")


def _write_if_changed(path: Path, content: bytes) -> str:
    try:
        if path.read_bytes() == content:
            return "unchanged"
        action = "updated"
    except FileNotFoundError:
        action = "added"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(content)
    os.replace(tmp, path)
    return action


@dataclass(frozen=True)
class ServiceInstalled(Result):
    """`codememory daemon install`: the service file, whether it was added, updated or unchanged, whether the
    service manager enabled it (else `run_yourself`: the commands to run), and the hand-started daemon it
    replaced."""

    service: str  # "systemd" or "launchd"
    file: str
    action: str  # "added", "updated" or "unchanged"
    enabled: bool
    stopped_pid: int | None
    run_yourself: list[str]


@dataclass(frozen=True)
class ServiceRemoved(Result):
    """`codememory daemon uninstall`: `action` "removed", or "unchanged" when no service was installed."""

    service: str
    file: str
    action: str
    run_yourself: list[str]  # what is left to run when the service manager could not be reached


def install_service() -> ServiceInstalled:
    """Write the user service (systemd unit / launchd agent) that runs `codememory daemon run` at login, and
    enable + start it when the service manager is reachable; otherwise say which commands to run."""
    kind = _platform()
    program = [str(console_script()), "daemon", "run"]
    env = _service_env()
    if kind == "systemd":
        path = systemd_unit_path()
        content = systemd_unit(program, env).encode("utf-8")
        commands = [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", SERVICE_NAME]]
        usable = _systemd_usable()
    else:
        path = launchd_plist_path()
        content = launchd_plist(program, env, ensure_state_dir() / OUT_NAME)
        commands = [["launchctl", "load", "-w", str(path)]]
        usable = _launchctl_usable()
    action = _write_if_changed(path, content)
    stopped = None
    if usable:
        result = stop()  # one daemon per user: the service takes over from a hand-started one
        stopped = result.pid if result.was_running else None
        if kind == "launchd":
            _run_manager([["launchctl", "unload", str(path)]], check=False)
        _run_manager(commands)
    return ServiceInstalled(
        service=kind,
        file=str(path),
        action=action,
        enabled=usable,
        stopped_pid=stopped,
        run_yourself=[] if usable else [shlex.join(c) for c in commands],
    )


def uninstall_service() -> ServiceRemoved:
    """Stop and disable the user service and remove its file (nothing to do when it is not installed)."""
    kind = _platform()
    path = systemd_unit_path() if kind == "systemd" else launchd_plist_path()
    if not path.exists():
        return ServiceRemoved(service=kind, file=str(path), action="unchanged", run_yourself=[])
    if kind == "systemd":
        before = [["systemctl", "--user", "disable", "--now", SERVICE_NAME]]
        after = [["systemctl", "--user", "daemon-reload"]]
        usable = _systemd_usable()
    else:
        before = [["launchctl", "unload", "-w", str(path)]]
        after = [["launchctl", "remove", LAUNCHD_LABEL]]
        usable = _launchctl_usable()
    if usable:
        _run_manager(before, check=False)
    path.unlink()
    if kind == "systemd":  # what `enable` linked (disable removes it too; without systemctl we do)
        wanted = path.parent / "default.target.wants" / SERVICE_NAME
        if wanted.is_symlink():
            wanted.unlink()
    if usable:
        _run_manager(after, check=False)
    return ServiceRemoved(
        service=kind,
        file=str(path),
        action="removed",
        run_yourself=[] if usable else [shlex.join(c) for c in after],
    )
