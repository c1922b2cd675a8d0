"""The documentation: every repository file that the code or the docs name exists (a comment saying "documented in
docs/search.md" is only worth something if docs/search.md is there, and a module renamed in a move leaves no reader
looking for its old name); the site builds with `mkdocs build --strict`, offline, every page in its navigation and
every link and anchor resolved; and the docs stand alone, naming nothing outside the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "codememory"

# What is scanned: the package's code and text, the README, the docs.
SOURCES = [
    *sorted(PACKAGE.rglob("*.py")),
    *sorted(PACKAGE.rglob("*.md")),
    REPO / "README.md",
    *sorted((REPO / "docs").rglob("*.md")),
]

# A file name with one of these extensions, possibly after folders. Not preceded by `/`, `.`, `~`, `<`, … so
# that `~/.config/x.toml`, `.codememory/memory/x.md`, `../shared/DESIGN.md` and URLs are never read as paths of
# this repository.
_PATH = re.compile(r"(?<![\w./~<>*$@:\\-])((?:[\w-]+/)*[\w.-]*[\w-]\.(?:md|py|txt|js|ts|toml|json|jsonl|sh))(?![\w/])")
# Top-level folders of this repository: a path starting with one of them is relative to its root.
REPO_FOLDERS = {"docs", "benchmarks", "integrations", "scripts", "tests", "src"}
# A path starting with a folder of the package (`data/background.txt`, `daemon/hook_api.py`) is relative to it.
PACKAGE_FOLDERS = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}

# Paths and names that stand for something else, each for a reason:
EXAMPLES = {
    # what a user's project or an agent's tool call looks like (query syntax, entity extraction, summaries)
    "src/auth/oauth.py",
    "src/react/app.py",
    "src/x.py",
    "src/a.py",
    "src/app.py",
    "src/auth.py",
    "src/auth.ts",
    "tests/test_x.py",
    "tests/a.py",
    "auth.py",
    # a user's project's changelog and release notes, and a module named like one (use detection's account rule)
    "CHANGELOG.md",
    "release-notes.md",
    "news.py",
    # a tool's name in the vocabulary of technical entities, not a file
    "coverage.py",
}
NOT_OURS = {
    # written into the user's project by `codememory init`
    "agents.md",
    "claude.md",
    "gemini.md",
    # notes kept outside the repository, named bare in some code comments (never in the docs: see below)
    "design.md",
    "facts.md",
}


def _references(path: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        found += [(number, m.group(1)) for m in _PATH.finditer(line)]
    return found


def _module_names() -> set[str]:
    return {p.name for p in PACKAGE.rglob("*") if p.is_file()}


def _exists(reference: str, modules: set[str]) -> bool | None:
    """True/False for a path of this repository, None for a name that is not one (or not ours)."""
    if reference in EXAMPLES or reference.lower() in NOT_OURS or "YYYY" in reference:
        return None
    first, _, rest = reference.partition("/")
    if rest:
        if first in REPO_FOLDERS:
            return (REPO / reference).is_file()
        if first in PACKAGE_FOLDERS:
            return (PACKAGE / reference).is_file()
        return None  # a folder of some other tree (`plugin/codememory.js` of an installed copy, …)
    if reference.endswith(".py"):
        return reference in modules  # a module named on its own: somewhere in the package
    if reference.endswith(".md"):
        return (REPO / reference).is_file() or reference in modules or (REPO / "docs" / reference).is_file()
    return None  # config.toml, opencode.json, …: files of other programs


def test_every_repository_file_the_code_and_the_docs_name_exists() -> None:
    modules = _module_names()
    missing = [
        f"{source.relative_to(REPO)}:{number}: {reference}"
        for source in SOURCES
        for number, reference in _references(source)
        if _exists(reference, modules) is False
    ]
    assert missing == [], "named but not in the repository:\n" + "\n".join(missing)


def test_the_check_sees_paths_and_module_names() -> None:
    """The scan above must not pass by matching nothing: it finds the references it is meant to check."""
    modules = _module_names()
    line = "Ranking (documented in docs/search.md), see data/background.txt, relevance.py and `mcp_http.py`."
    references = [m.group(1) for m in _PATH.finditer(line)]
    assert references == ["docs/search.md", "data/background.txt", "relevance.py", "mcp_http.py"]
    assert [_exists(r, modules) for r in references] == [True, True, True, False]
    ignored = "~/.config/codememory/config.toml .codememory/memory/x.md ../shared/DESIGN.md https://a.test/b.md"
    assert [m.group(1) for m in _PATH.finditer(ignored)] == []


# ------------------------------------------------------------------------------------------- the site
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
MKDOCS = Path(sys.executable).with_name("mkdocs")
# A download would go through this proxy, which refuses: the build must not need the network.
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_MKDOCS_2_WARNING": "1"}


def build_site(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    if not MKDOCS.is_file():
        pytest.fail(f"no mkdocs next to {sys.executable}: install the dev extra (scripts/test does)")
    env = {**os.environ, **OFFLINE}
    return subprocess.run(
        [str(MKDOCS), "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.slow
def test_the_site_builds_strictly_and_offline(tmp_path: Path) -> None:
    done = build_site(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    pages = {p.relative_to(REPO / "docs").with_suffix("").as_posix() for p in (REPO / "docs").rglob("*.md")}
    built = {p.relative_to(tmp_path / "site").with_suffix("").as_posix() for p in (tmp_path / "site").rglob("*.html")}
    assert pages <= built


@pytest.mark.slow
def test_a_broken_link_or_a_page_out_of_the_nav_fails_the_build(tmp_path: Path) -> None:
    """The check above must not pass by checking nothing: a copy of the docs with one broken link, one broken
    anchor or one page missing from the navigation does not build."""
    for breakage in ("link", "anchor", "nav"):
        copy = tmp_path / breakage
        shutil.copytree(REPO / "docs", copy / "docs")
        config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
        page = copy / "docs" / "install.md"
        if breakage == "link":
            page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](nowhere.md).\n", encoding="utf-8")
        elif breakage == "anchor":
            page.write_text(page.read_text(encoding="utf-8") + "\nSee [x](search.md#no-such-part).\n", encoding="utf-8")
        else:
            config = config.replace("  - Install: install.md\n", "")
        (copy / "mkdocs.yml").write_text(config, encoding="utf-8")
        done = build_site(copy / "mkdocs.yml", copy / "site")
        assert done.returncode != 0, breakage


def test_the_site_uses_no_plugin_that_downloads() -> None:
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    plugins = re.search(r"^plugins:\n((?:  - .*\n)+)", config, re.M)
    assert plugins is not None
    assert [line.split("#")[0].strip(" -") for line in plugins.group(1).splitlines()] == ["search"]
    assert re.search(r"^  font: false", config, re.M)  # the theme would otherwise link Google Fonts into every page


# Words that point outside the repository: issue numbers, the people or sessions that built it, a workspace.
OUTSIDE = re.compile(r"\bissues? #?\d+|\bhelpers?\b|team workspace|\.\./shared|\bDESIGN\.md|\bFACTS\.md", re.I)


def test_the_docs_stand_alone() -> None:
    found = [
        f"{page.relative_to(REPO)}:{number}: {line.strip()}"
        for page in DOCS
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
        if OUTSIDE.search(line)
    ]
    assert found == [], "the docs name something outside the repository:\n" + "\n".join(found)
