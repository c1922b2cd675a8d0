"""Privacy filter: `<private>` spans and secrets never reach the store, the session files or the logs."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from codememory import Store
from codememory.errors import InvalidInput
from codememory.text.privacy import redact_secrets, scrub, scrub_private
from support.secrets_corpus import CORPUS, SECRETS

Invoke = Callable[..., Result]
HOOK = Path(sys.executable).with_name("codememory-hook")


# ---------------------------------------------------------------------------------------- unit
@pytest.mark.parametrize(("kind", "secret", "text"), CORPUS, ids=[f"{i}-{k}" for i, (k, _, _) in enumerate(CORPUS)])
def test_scrub_removes_each_secret(kind: str, secret: str, text: str) -> None:
    out = scrub(text)
    assert secret not in out
    assert secret not in scrub(f"Note 26: {text}") and secret not in scrub(f"author: x {text} (ok)")
    assert out.strip()
    if kind != "private":
        assert f"[REDACTED:{kind}]" in out or "[REDACTED:" in out
    assert scrub(out) == out  # idempotent


@pytest.mark.parametrize(("kind", "secret", "text"), CORPUS, ids=[f"{i}-{k}" for i, (k, _, _) in enumerate(CORPUS)])
def test_scrub_removes_each_secret_inside_json_escaped_text(kind: str, secret: str, text: str) -> None:
    """A secret inside a JSON string inside text (a tool call's arguments, a quoted prompt): quotes are
    escaped as \\" and newlines as \\n, and the patterns must still see the quotes."""
    escaped = json.dumps({"command": text})
    assert secret not in scrub(escaped), kind
    assert secret not in scrub(json.dumps(escaped)), kind  # escaped twice


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("sk-ant-api03-" + "Ab1" * 10, "anthropic"),
        ("gsk_" + "Xy9" * 10, "groq"),
        ("AKIAIOSFODNN7EXAMPLE", "aws"),
        ("ghp_" + "aB3" * 12, "github"),
        ("glpat-" + "aB3" * 7, "gitlab"),
        ("npm_" + "aB3" * 12, "npm"),
        ("-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----", "private_key"),
        ("postgres://u:pw@h/db", "url_password"),
        ("token: abcdefgh", "secret"),
    ],
)
def test_scrub_names_the_kind(text: str, kind: str) -> None:
    assert f"[REDACTED:{kind}]" in scrub(text)


@pytest.mark.parametrize(
    "text",
    [
        "Use `make deploy-staging` to deploy; never by hand.",
        "commit 3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291 fixed it",
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "request id 123e4567-e89b-12d3-a456-426614174000 and 123E4567-E89B-12D3-A456-426614174000",
        "see mem_1a2b3c4d and mem_deadbeef",
        "src/codememory/some_module_name/another_directory/file_name_here.py",
        "https://example.com/docs/getting-started?page=2 and ssh://git@github.com/acme/app.git",
        "max_tokens=4096, token_url=https://auth.example.com/token, SECRET_KEY_FILE=/run/secrets/key",
        "def login(password: str, token: Optional[str] = None) -> None:",
        "password = os.environ['DB_PASSWORD']; api_key = get_api_key()",
        'DB_PASSWORD=${DB_PASSWORD} and TOKEN=<your token here> and "password": ""',
        "author: Jane Doe; oauth flow documented in docs/auth.md",
        "test_scrub_keeps_normal_code_and_paths_unchanged_in_memories",
        "The tokenizer counts tokens; keys are sorted; a secret santa party.",
        "",
    ],
)
def test_scrub_leaves_ordinary_text_alone(text: str) -> None:
    assert scrub(text) == text


def test_private_spans() -> None:
    assert scrub_private("a <private>b</private> c") == "a  c"
    assert scrub_private("a <Private >b\nc</ PRIVATE> d") == "a  d"
    assert scrub_private("a <private>b <private>c</private> d</private> e") == "a  e"
    assert scrub_private("1<private>x</private>2<private>y</private>3") == "123"
    assert scrub_private("keep <private> everything after is gone") == "keep "
    assert scrub_private("stray </private> close") == "stray  close"
    assert scrub_private("no tags at all") == "no tags at all"


def test_secrets_inside_private_spans_and_partial_keys() -> None:
    assert scrub("x -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI unterminated") == "x [REDACTED:private_key]"
    assert redact_secrets("Authorization: Bearer abc.def-123456") == "Authorization: Bearer [REDACTED:authorization]"
    assert redact_secrets("https://user:[REDACTED:url_password]@host") == "https://user:[REDACTED:url_password]@host"


def test_scrub_never_raises() -> None:
    assert scrub(None) == "None"  # type: ignore[arg-type]
    for text in ["<private" * 1000, "=" * 10_000, "a:" * 5000, "\x00\ud800 token: \x00", "x" * 100_000]:
        assert isinstance(scrub(text), str)


def test_idempotent_on_the_whole_corpus() -> None:
    text = "\n\n".join(t for _, _, t in CORPUS)
    once = scrub(text)
    assert scrub(once) == once
    assert not [s for s in SECRETS if s in once]


def test_store_add_refuses_a_text_that_is_only_private(tmp_path: Path) -> None:
    store, _ = Store.init(tmp_path)
    with store, pytest.raises(InvalidInput, match="empty after removing private spans and secrets"):
        store.add("<private>all of it</private>")


# --------------------------------------------------------------------------------- end to end
def _hook(root: Path, *args: str, stdin: str) -> None:
    done = subprocess.run([str(HOOK), *args], input=stdin, capture_output=True, text=True, cwd=root, timeout=30)
    assert done.returncode == 0, done.stderr


def test_secrets_never_reach_the_store_files(project: Path, cm: Invoke, tmp_path: Path) -> None:
    texts = [f"Note {i}: {text}" for i, (_, _, text) in enumerate(CORPUS)]
    third = len(texts) // 3
    # 1. codememory store
    for text in texts[:third]:
        result = cm("store", text, "--source", "cli " + SECRETS[0])
        assert result.exit_code == 0, result.output
    # 2. codememory import (with ids: a changed text keeps its id)
    dump = tmp_path / "in.jsonl"
    records = [{"id": f"mem_{i:08x}", "text": t, "source": t} for i, t in enumerate(texts[third : 2 * third])]
    dump.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    result = cm("import", dump)
    assert result.exit_code == 0, result.output
    # 3. codememory remember-scan
    notes = "\n\n".join(f"*Remember*: {t}" for t in texts[2 * third :])
    notes += "\n\n*Remember*: <private>only private</private>"
    result = cm("remember-scan", "--source", "scan", input=notes)
    assert result.exit_code == 0, result.output
    # 4. the session checkpoint core (the MCP `checkpoint` tool)
    with Store.open(project) as store:
        store.checkpoint(
            tool="claude-code",
            slug="privacy check",
            goal=texts[0],
            work_completed=texts[:5],
            work_pending=texts[5:10],
            work_summary=texts[10:15],
            decisions=texts[15:],
            references=[
                {"url": f"https://deploy:{SECRETS[24]}@git.example.com/x", "title": texts[1]},
                {"url": "https://example.com", "title": texts[2]},
            ],
            key_changes=texts[3],
        )
        assert store.count() >= len(texts) - 2
        imported = store.get("mem_00000000", touch=False)
        assert "[REDACTED:" in imported.text or "private" in CORPUS[third][0]
    # 5. hooks: a prompt (session goal), a Stop with a note, and errors that are logged
    payload = {"session_id": "s-1", "cwd": str(project), "prompt": texts[1], "transcript_path": str(tmp_path / "t")}
    _hook(project, "claude", "UserPromptSubmit", stdin=json.dumps(payload))
    payload["last_assistant_message"] = f"Done.\n\n*Remember*: {texts[4]}"
    _hook(project, "claude", "Stop", stdin=json.dumps(payload))
    _hook(project, "claude", "Bogus" + SECRETS[2], "--project", str(project), stdin=json.dumps(payload))
    _hook(project, "claude", "Stop", "--project", str(project), stdin="not json " + texts[5])

    folder = project / ".codememory"
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert any(p.suffix == ".md" for p in files) and any(p.name == "hooks.log" for p in files)
    blob_names = {p.name for p in files}
    assert "memory.db" in blob_names
    leaks = [(p.relative_to(folder).as_posix(), s[:12]) for p in files for s in SECRETS if s.encode() in p.read_bytes()]
    assert leaks == [], [(f, s, [k for k, sec, _ in CORPUS if sec.startswith(s)]) for f, s in leaks]
    db = sqlite3.connect(folder / "memory.db")
    try:
        assert db.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", ['"Note"']).fetchone()[0] > 0
        for secret in SECRETS:
            phrase = '"' + secret.replace('"', '""') + '"'
            for table in ("memories_fts", "sessions_fts"):
                found = db.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", [phrase]).fetchone()[0]
                assert found == 0, (table, secret[:12])
    finally:
        db.close()


def test_tags_entered_by_and_rebuilt_session_markdown_are_scrubbed(tmp_path: Path) -> None:
    """Fields besides the text: a tag that is a secret is dropped, entered_by is redacted, and session
    markdown read back by `sessions rebuild` (it may come from an untrusted commit) is scrubbed too."""
    token, key, password = SECRETS[6], SECRETS[0], SECRETS[26]  # ghp_…, sk-…, DB_PASSWORD value
    store, _ = Store.init(tmp_path)
    with store:
        added = store.add("Deploys go through the staging gate.", tags=["deploy", token], entered_by=f"bot {key}")
        assert added.memory.tags == ["deploy"] and key not in (added.memory.entered_by or "")
        result = store.checkpoint(tool="claude-code", slug="gate", goal="Harden the staging gate")
        markdown = Path(result.markdown_path)
        text = markdown.read_text()
        assert "Harden the staging gate" in text
        markdown.write_text(text.replace("Harden the staging gate", f"Harden the gate, DB_PASSWORD={password}"))
        store.rebuild_sessions()
    blob = b"".join(p.read_bytes() for p in (tmp_path / ".codememory").rglob("*") if p.is_file() and p.suffix != ".md")
    assert all(s.encode() not in blob for s in (token, key, password))


def test_the_quick_check_never_skips_a_text_a_stage_would_change() -> None:
    """A text the quick check passes is returned untouched: it must hold nothing any stage would take. Every
    corpus text, and every window of it (a secret cut short, a key without its value), gives the same result both
    ways."""
    from codememory.text import privacy

    texts = [t for _, _, t in CORPUS]
    texts += [t[i : i + n] for t in texts for n in (12, 40, 90) for i in range(0, max(1, len(t) - n + 1), 3)]
    texts += [t.upper() for t in texts[: len(CORPUS)]] + [t.lower() for t in texts[: len(CORPUS)]]
    changed = 0
    for text in texts:
        full = privacy._redact_stages(text)
        assert privacy._redact(text) == full, text
        changed += full != text
    assert changed >= len(CORPUS)  # the windows hold secrets too: the check had something to let through
    assert all(not privacy._nothing_to_redact(t) for kind, _, t in CORPUS if kind != "private")  # scrub_private's


def test_the_quick_check_reads_each_patterns_leading_literal_as_the_regex_parser_does() -> None:
    """The gate that skips texts holding nothing secret-like reads the literal each pattern starts with off its
    source (so that a search compiles only the patterns whose literal its text holds): for every pattern the
    scrubber runs, that is exactly what Python's own regex parser says."""
    import re._constants as sre_constants  # type: ignore[import-not-found]
    import re._parser as sre_parser  # type: ignore[import-not-found]

    from codememory.text import privacy
    from codememory.text.privacy_context import rule_patterns

    def parsed_literal(pattern: re.Pattern[str]) -> str:
        lead = []
        for op, arg in sre_parser.parse(pattern.pattern, pattern.flags):
            if op is not sre_constants.LITERAL or pattern.flags & re.IGNORECASE:
                break
            lead.append(chr(arg))
        return "".join(lead)

    on_text, on_lower = rule_patterns()
    patterns = [p for _, p in privacy._TOKENS] + on_text + [privacy._CANDIDATE_RE] + on_lower + privacy._ASSIGN_HINT_RES
    assert len(patterns) > 60
    assert {p.pattern: privacy._leading_literal(p) for p in patterns} == {
        p.pattern: parsed_literal(p) for p in patterns
    }
    assert sum(1 for p in patterns if privacy._leading_literal(p)) > 50  # the gate skips on literals, not on nothing
    odd = [r"ab|cd", r"(?:ab)c", r"ab*c", r"a\.b+c", r"x[|]y", r"\d+ab", r"ab{2}", r"a\-b\sc", r"ab(?#note)?c"]
    odd += [r"ab(?#(|)|cd", r"ab(?#x)*c"]  # a comment is skipped: what follows it quantifies the `b`
    for source in odd:  # never more than the parser says (less only costs the gate a pattern tried in vain)
        assert parsed_literal(re.compile(source)).startswith(privacy._leading_literal(re.compile(source))), source


def test_the_quick_check_agrees_with_the_stages_around_unicode_paths_and_urls() -> None:
    """The gate finds its literals in one pass over the text (core/literal_scan.py, offsets in characters): secrets
    next to non-ASCII text, inside URLs and paths, and escaped JSON quotes give what the stages alone give."""
    from codememory.text import privacy

    texts = [t for _, _, t in CORPUS]
    wrapped: list[str] = []
    for i, text in enumerate(texts):
        wrapped += [
            f"日本語のメモ 🎉 {text} — fin",
            f"e\u0301t\u00e9: {text}\u200b",
            f"see https://example.com/{text.replace(' ', '/')} and src/app/{i}.py",
            json.dumps({"note": text}, ensure_ascii=False),
            json.dumps(json.dumps({"note": text})),
            f"\ud800 {text} \udcff",  # lone surrogates (a transcript's escapes): scanned the slow way, same answer
        ]
    for text in texts + wrapped:
        assert privacy._redact(text) == privacy._redact_stages(text), text
    password = "hunter2hunter2"
    scrubbed = privacy.scrub(f"\ud800 DB_PASSWORD={password}")
    assert scrubbed.startswith("\ud800 DB_PASSWORD=") and password not in scrubbed  # redacted, not failed closed
