"""The hygiene runs a store recorded, as the viewer's Runs page lists them: consolidation runs and staleness checks
together, newest first, with what each changed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from codememory import Store
from codememory.operations.consolidate import consolidate
from codememory.operations.hygiene_runs import hygiene_runs
from codememory.operations.stale import check_stale


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_consolidation_runs_and_staleness_checks_are_listed_newest_first(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    (root / "src").mkdir()
    (root / "src" / "report.py").write_text("def build_report():\n    return 1\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    Store.init(root)[0].close()
    with Store.open(root) as store:
        store.add("Reports are built by build_report in src/report.py")
        assert hygiene_runs(store).runs == []
        consolidate(store, use_model=False)
    git(root, "rm", "-q", "src/report.py")
    git(root, "commit", "-q", "-m", "drop the report")
    with Store.open(root) as store:
        check_stale(store)
        runs = hygiene_runs(store).runs
    assert [r.kind for r in runs] == ["staleness", "consolidation"]
    assert runs[0].counts == {
        "checked": 1,
        "marked": 2,
        "cleared": 0,
    }  # the file and its function and runs[0].status == "checked"
    assert runs[1].status == "applied" and runs[1].trigger == "command"
