"""The terms a memory is judged on: its own names first (from its entities and its text), then its commit forms
and its text as shown."""

from __future__ import annotations

import pytest

from codememory.text.usage_cues import MAX_TERMS, looks_only, memory_terms


def test_commit_forms_and_the_phrase_never_push_out_a_memorys_names() -> None:
    forms = " ".join(f"`{kind}(x): ...`" for kind in ("fix", "feat", "docs", "test", "refactor", "perf"))
    paths = [f"src/module_{i}/file_{i}.py" for i in range(MAX_TERMS)]
    text = f"Commit messages follow Conventional Commits ({forms}); the modules are {', '.join(paths)}."
    terms = memory_terms(text, [(path, "file") for path in paths])
    assert [t.text for t in terms if t.kind == "path"] == paths
    assert {t.kind for t in terms} >= {"commit", "phrase"}


def test_a_memory_that_is_one_name_keeps_the_name() -> None:
    terms = memory_terms("UPLOAD_MAX_BYTES", [("UPLOAD_MAX_BYTES", "identifier")])
    assert [(t.text, t.kind) for t in terms] == [("UPLOAD_MAX_BYTES", "symbol"), ("UPLOAD_MAX_BYTES", "phrase")]


@pytest.mark.parametrize(
    "command",
    [
        "ls migrations",
        "git log --oneline v3.4.2..HEAD | head -5",
        "grep -rn leeway app/ tests/ 2>/dev/null",
        "cd src && cat cli.rs",
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
        "",
    ],
)
def test_a_command_that_changes_or_runs_something_acts(command: str) -> None:
    assert not looks_only(command)
