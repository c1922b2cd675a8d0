"""What `apt-get install chromium` does to a machine that does not have it yet, with and without recommended
packages: simulated (`apt-get -s`), so nothing is installed.

On a machine where Chromium is already installed, apt cannot show what installing it did. This rebuilds the dpkg
status as it was before: the packages the install added are taken out, and those it upgraded get their old version
back, both read from the install's entry in /var/log/apt/history.log. apt then simulates the install against that
status file. Run as a user who can read the dpkg status (root here).

    python3 benchmarks/research/apt_chromium.py
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

HISTORY = Path("/var/log/apt/history.log")
STATUS = Path("/var/lib/dpkg/status")


def status_before(install_entry: str) -> str:
    added = {m.group(1) for m in re.finditer(r"([a-z0-9.+-]+):\w+ \(", _field(install_entry, "Install"))}
    upgraded = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"([a-z0-9.+-]+):\w+ \(([^,]+), ([^)]+)\)", _field(install_entry, "Upgrade"))
    }
    kept = []
    for paragraph in STATUS.read_text().strip("\n").split("\n\n"):
        name = re.search(r"^Package: (.*)$", paragraph, re.M)
        if name is None or name.group(1) in added:
            continue
        if name.group(1) in upgraded:  # its version, and the versions its dependencies asked for, as before
            for old, new in upgraded.values():
                paragraph = paragraph.replace(new, old)
        kept.append(paragraph)
    return "\n\n".join(kept) + "\n"


def _field(entry: str, name: str) -> str:
    found = re.search(rf"^{name}: (.*)$", entry, re.M)
    return found.group(1) if found else ""


def main() -> None:
    entries = [
        e for e in HISTORY.read_text().split("\n\n") if re.search(r"^Commandline: apt-get install .*chromium", e, re.M)
    ]
    if not entries:
        raise SystemExit(f"no apt-get install of chromium in {HISTORY}")
    with tempfile.NamedTemporaryFile("w", suffix=".status") as status:
        status.write(status_before(entries[0]))
        status.flush()
        for flags in ([], ["--no-install-recommends"]):
            done = subprocess.run(
                ["apt-get", "-s", "-o", f"Dir::State::status={status.name}", "install", *flags, "chromium"],
                capture_output=True,
                text=True,
                check=True,
            )
            summary = next(line for line in done.stdout.splitlines() if "newly installed" in line)
            upgraded = [line.split()[1] for line in done.stdout.splitlines() if re.match(r"Inst \S+ \[", line)]
            print(f"apt-get install {' '.join(flags) or '(recommends too)'} chromium: {summary}")
            if upgraded:
                print(f"  upgraded: {', '.join(upgraded)}")


if __name__ == "__main__":
    main()
