"""The terms a memory is judged on: its own names first (from its entities and its text), then its commit forms
and its text as shown."""

from __future__ import annotations

from codememory.text.usage_cues import MAX_TERMS, memory_terms


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


def test_a_switch_and_an_attribute_are_terms() -> None:
    """An option turned on or off as YAML, Elixir, Ruby or JavaScript write it, and a module attribute or annotation
    with a name of its own, are what an agent copies when it does as the memory says."""
    text = "Old feature flags get enabled: false in config/flags.yml, and their workers carry @retry_on_timeout."
    terms = {(t.text, t.kind) for t in memory_terms(text)}
    assert {("enabled: false", "setting"), ("@retry_on_timeout", "symbol")} <= terms


def test_prose_with_a_colon_or_an_at_is_no_switch_or_attribute() -> None:
    text = "Note: true for every flag. Ask ops@example.com or @alice before you retry; see @Inject and @pytest.mark."
    assert not [t for t in memory_terms(text) if t.kind != "phrase"]
