"""Whether a shell line only looks: what counts as a use waits for an act when it does."""

from __future__ import annotations

import pytest

from codememory.text.shell_lines import looks_only


@pytest.mark.parametrize(
    "command",
    [
        "ls migrations",
        "git log --oneline v3.4.2..HEAD | head -5",
        "grep -rn leeway app/ tests/ 2>/dev/null",
        "cd src && cat cli.rs",
        "sed -n '1,120p' src/app/upload.py",  # how Codex reads a file
        "nl -ba src/app.py | sed -n '40,80p'",
        "git --no-pager log -3 --format='%h > %s'",  # a quoted `>` redirects nothing
        "git -C vendor/lib diff",
        "grep -rn '=>' src/ | head",
        "(cd src && ls)",
        "rg -n UPLOAD_MAX_BYTES $(git ls-files app)",
    ],
)
def test_a_command_that_only_shows_looks(command: str) -> None:
    assert looks_only(command)


@pytest.mark.parametrize(
    "command",
    [
        "cat > fastlane/metadata/android/en-US/changelogs/350.txt <<'EOF'\nFixes\nEOF",
        "./gradlew testStagingDebugUnitTest",
        "git add -A && git commit -q -m 'db: add notes'",
        "ls build && rm -rf build",
        "git diff | tee patch.diff",
        "sed -i 's/10/25/' app/api/photos.py",
        "sed -Ei.bak 's/a/b/' x.conf",
        "find . -name '*.pyc' -delete",
        "find src -name '*.orig' -exec rm {} +",
        "fd -e log -x rm",
        "ls $(rm -rf build)",
        "grep -c TODO src/app.py 1> todo-count.txt",
        "git -C vendor/lib commit -am 'bump'",
        "(cd src && make)",
        "",
    ],
)
def test_a_command_that_changes_or_runs_something_acts(command: str) -> None:
    assert not looks_only(command)
