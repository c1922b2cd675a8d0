"""Secrets never reach a store, a log, stdout or stderr, whichever entry point and whichever field carries
them (issue 11, item 6): import lines (every field), `store`, the hook command with JSON on stdin, raw
events, the MCP server, the daemon, and the errors each of them prints. Plus the false positives: ordinary
prose, code and command lines stay as they are.

Each secret here is short and plain (`Pw07x7Kq2Lm`): no prefix or entropy gives it away, only its context
(`redis://:…@`, `mysql -p…`, "the wifi password is …"). Every place a secret went is then searched for its
bytes: every file under `.codememory/` (memory.db and its WAL included), every stdout and stderr, the logs.
"""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import Result
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from codememory import Store
from codememory.capture.raw_events import flush_project
from codememory.core.dates import to_iso
from codememory.store.raw_events import NewRawEvent, RawEventTables
from codememory.text.privacy import scrub, scrub_label, scrub_message
from support.daemon import isolated_env, make_project, spawn

Invoke = Callable[..., Result]
BIN = Path(sys.executable).parent
HOOK = BIN / "codememory-hook"
CODEMEMORY = BIN / "codememory"


def secret(i: int) -> str:
    """A distinct secret with nothing in itself that marks it as one (12 characters, no known prefix)."""
    return f"Pw{i:02d}x7Kq2Lm"


# (name, template): `{s}` is where the secret goes. Every context is one the scrubber must recognise.
CONTEXTS: list[tuple[str, str]] = [
    ("url with an empty user", "cache at redis://:{s}@cache.internal:6379/0"),
    ("url, another scheme", "broker amqp://guest:{s}@rabbit.internal/vhost"),
    ("url, @ inside the password", "mongodb://admin:p@{s}@db.internal/app"),
    ("mysql -pPW", "mysql -u root -p{s} app"),
    ("mysql -p'PW'", "mysql -u root -p'{s}' app"),
    ("mysql -p PW", "mysql -u root -p {s}"),
    ("--password=PW", "mysqldump --user=root --password={s} app > dump.sql"),
    ("--password PW", "mysql --password {s} app"),
    ("sshpass -p 'PW'", "sshpass -p '{s}' ssh -p 2222 deploy@host"),
    ("sshpass -pPW", "sshpass -p{s} scp f deploy@host:"),
    ("PGPASSWORD=", "PGPASSWORD={s} psql -h db app"),
    ("export X_TOKEN=", "export DEPLOY_TOKEN={s}"),
    ("Authorization: Bearer", "curl -H 'Authorization: Bearer {s}' https://api.example.com"),
    ("curl -u", "curl -u admin:{s} https://api.example.com"),
    (".netrc line", "machine api.example.com login deploy password {s}"),
    (".netrc entry", "machine api.example.com\n  login deploy\n  password {s}\n"),
    ("prose: wifi", "the wifi password is {s}"),
    ("prose: token", "fyi my token is {s} until Friday"),
    ("prose: for the", "the password for the staging db is {s}."),
    ("password: X", "password: {s}"),
    ("JSON", '{{"password": "{s}", "user": "admin"}}'),
    ("JSON cut short", '{{"tool": "bash", "input": {{"env": {{"api_key": "{s}'),
    ("escaped JSON cut short", '"{{\\"secret\\": \\"{s}'),
    ("YAML", "db:\n  secret: {s}\n"),
    ("XML", "<settings><password>{s}</password></settings>"),
    ("docker login -p", "docker login -u ci -p {s} registry.example.com"),
    ("redis-cli -a", "redis-cli -h cache -a {s} ping"),
    ("Cookie header", "Cookie: session={s}"),
    ("openssl pass:", "openssl enc -aes-256-cbc -pass pass:{s} -in notes.txt"),
    ("DB_PASS=", "DB_PASS={s}"),
    ("a value like an identifier", "password=Super_{s}"),
    ("a default after a type", 'def connect(password: str = "{s}") -> None:'),
    ("pass: PW", "pass: {s}"),
    ("login with user / PW", "login with admin / {s}"),
    ("prose: a clause before it", "the password for prod is in 1password, it is {s}"),
    ("pwd PW", "pwd {s}"),
]


def _basic() -> tuple[str, str]:
    value = base64.b64encode(b"deploy:" + secret(99).encode()).decode()
    return value, f"Authorization: Basic {value}"


# (name, secret, text) for every context
TABLE: list[tuple[str, str, str]] = [(name, secret(i), t.format(s=secret(i))) for i, (name, t) in enumerate(CONTEXTS)]
TABLE.append(("Authorization: Basic", *_basic()))


def _in_field(offset: int) -> list[tuple[str, str]]:
    """(secret, text) of every context with secrets numbered from `offset` (one set per field)."""
    out = [(secret(offset + i), t.format(s=secret(offset + i))) for i, (_, t) in enumerate(CONTEXTS)]
    return out


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def leaks(secrets: Iterable[str], *blobs: str | bytes | Path) -> list[tuple[str, str]]:
    """(where, secret) for every secret found in a text, bytes or a file (a folder: every file in it)."""
    found = []
    for blob in blobs:
        if isinstance(blob, Path):
            items = [(str(p), p.read_bytes()) for p in (files_under(blob) if blob.is_dir() else [blob])]
        else:
            items = [("output", blob.encode() if isinstance(blob, str) else blob)]
        for where, data in items:
            found += [(where, s) for s in secrets if s.encode() in data]
    return found


# ------------------------------------------------------------------------------------------- the scrubber
@pytest.mark.parametrize(("name", "value", "text"), TABLE, ids=[n for n, _, _ in TABLE])
def test_each_context_is_redacted(name: str, value: str, text: str) -> None:
    out = scrub(text)
    assert value not in out and "[REDACTED:" in out, out
    assert scrub(out) == out  # idempotent
    for wrapped in (json.dumps({"command": text}), json.dumps(json.dumps({"command": text}))):
        assert value not in scrub(wrapped), wrapped  # inside a tool payload, escaped once or twice


def test_key_named_values_in_json_cut_anywhere() -> None:
    """A tool payload cut at any character inside a key-named value leaves no part of the value (of 3+
    characters) behind, quoted or not, escaped or not, whatever the key's spelling."""
    value = "hunter2-Vq8x7Zk2"
    for key in ("password", "api_key", "secret", "PGPASSWORD", "authToken", "client_secret", "GITHUB_TOKEN"):
        for payload in (
            json.dumps({"tool": "bash", "env": {key: value, "HOME": "/home/dev"}}),
            json.dumps(json.dumps({"input": {key: value}})),
            f"{key}: {value} and more",
            f"{key}={value}\n",
        ):
            start = payload.index(value[0], payload.index(key) + len(key))
            for cut in range(start + 3, len(payload) + 1):
                text = payload[:cut] + "… [truncated]"
                shown = payload[start:cut]
                out = scrub(text)
                assert shown not in out or len(shown.strip("\\\"'")) < 3, (key, text, out)


FALSE_POSITIVES = [
    "the password field is validated on the server",
    "use -p for port: ssh -p 2222 deploy@host",
    "psql -h db -p 5432 -U app",
    "redis-cli -h cache -p 6379 ping",
    "mysql -h db -P 3306 -u root -p",
    "scp -P 2222 build.tar deploy@host:",
    "git push -u origin main",
    "docker run -u 1000:1000 app",
    "The password is required and the token is expired.",
    "the token is refreshed every hour; the secret is stored in vault",
    "the password is hashed with bcrypt and the API key is not set",
    "the passwords are checked and tokens: 1234 were used",
    "Password must be at least 12 characters",
    "password hashing uses bcrypt",
    "password_reset is enabled",
    "if token == expected: return",
    "let t = Token::new(x);",
    "def login(password: str, token: Optional[str] = None) -> None:",
    "export async function login(user: string, password: string): Promise<Token> {",
    "token = token.strip(); self.password = password; password=args.password",
    "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/creds.json",
    "docker login --password-stdin registry.example.com",
    "the bearer authentication scheme",
    "Replace <token> with your token",
    "ssh://git@github.com/acme/app.git and http://localhost:8080/path?x=a@b",
    "a cookie: it lasts a day",
    "api_key: ${API_KEY}, max_tokens: 4096, compass: north, bypass: all",
    "mysql is our database; -p is the port flag of psql",
    "curl https://example.com/api -o out.json",
    "the session token endpoint is /oauth/token",
    "Fuzzy pass: the same boolean expression; FULL_PASS_EVERY = 300.0",
    "- `token`: the bearer token, created once per install",
    "An existing daemon token is used as is.",
    "every request needs `Authorization: Bearer <token>` (the file `token` in the state folder)",
    '(d.client(token=""), {"Authorization": d.token}); headers = {"authorization": `Bearer ${token}`}',
    "the webhook fails even though the secret is right",
    "tool --no-auth deploy --token-limit 500 --author Jane --password-file ./pw.txt",
    "a second pass: the same rules again",
    "pwd && ls -la; run pwd to see where you are; the pwd output is /home/me",
    "login with Google / GitHub / GitLab, or log in with SSO",
    "the password is kept in vault, it is rotated monthly",
    "tags: iOS17Beta2, Python311, OAuth2Client, MacBookPro2021",
]


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert scrub(text) == text


LABELS = ["Pw07x7Kq2Lm", "aB3dE5gH7j", "X9kQ2mR7vT4pL8"]  # bare, no context, under 32 characters


def test_a_bare_random_token_is_a_secret_in_a_label_not_in_prose() -> None:
    for token in LABELS:
        assert scrub_label(token) == "[REDACTED:high_entropy]" and scrub_label(f"ci {token}") != f"ci {token}"
    for label in ("claude-code", "gpt-4o-mini", "iOS17Beta2", "Python311", "release-2026-11-27", "mem_1a2b3c4d"):
        assert scrub_label(label) == label
    assert scrub_label("3f2a91c0d4e5") == "3f2a91c0d4e5"  # hex: a commit, a digest


def test_scrub_message_is_one_line_scrubbed_and_cuts_long_arguments() -> None:
    long_arg = "--" + "q" * 70
    message = f"No such option '{long_arg}'.\nnext line\x1b[31m"
    out = scrub_message(message)
    assert "\n" not in out and "\x1b" not in out and "\\n" in out
    assert long_arg not in out and "q" * 20 not in out and out.startswith("No such option '--qqqqqqqqqq")
    assert scrub_message("cannot read /home/dev/projects/some-long-project-name/exports/memories.jsonl") == (
        "cannot read /home/dev/projects/some-long-project-name/exports/memories.jsonl"
    )  # a path stays whole
    assert scrub_message("x" * 5000, limit=100).endswith("…") and len(scrub_message("y " * 5000, limit=100)) == 100
    assert secret(1) not in scrub_message(f"unknown category 'PGPASSWORD={secret(1)}'")
    assert scrub_message("lone \udc80 surrogate") == "lone \\udc80 surrogate"


ADVERSARIAL = [  # each repeats what one pattern starts from, on one long line, with nothing that completes it
    "mysql ",
    "docker login ",
    "curl x ",
    "token",
    "token" * 50 + " ",
    "-",
    "--password-",
    "a:",
    "redis://",
    "password x ",
    "Cookie: ",
    "<password>",
    "the password is ",
    '\\"',
    "sshpass -e x ",
    "authorization: ",
]


@pytest.mark.slow
def test_adversarial_input_costs_a_bounded_scan() -> None:
    """A pattern whose scan from each mention ran to the end of the line made 200 KB of `mysql mysql …`
    take over a minute (quadratic); every scan is bounded now. The alarm is 60 s for all of them together,
    about a hundred times what they take."""

    def too_slow(*_: object) -> None:
        raise TimeoutError("scrub took over 60 s on adversarial input: a pattern scans without a bound")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(60)
    try:
        for unit in ADVERSARIAL:
            text = unit * (100_000 // len(unit))
            assert isinstance(scrub(text), str) and isinstance(scrub_message(text), str)
        assert scrub("password=" + "/a" * 5000 + "!") != ""  # a long path-like value: no backtracking
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------------------------------------------ import
def test_import_scrubs_every_field(project: Path, cm: Invoke, tmp_path: Path) -> None:
    texts, tags, entered, sources = (_in_field(0), _in_field(100), _in_field(200), _in_field(300))
    records = [
        {
            "id": f"mem_{i:08x}",
            "text": f"Note {i}: {text}",
            "tags": ["deploy", tag],
            "entered_by": by,
            "source": src,
            "category": "gotcha",
        }
        for i, ((_, text), (_, tag), (_, by), (_, src)) in enumerate(zip(texts, tags, entered, sources, strict=True))
    ]
    dump = tmp_path / "in.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = cm("import", dump, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == len(records)
    everything = [s for field in (texts, tags, entered, sources) for s, _ in field]
    assert leaks(everything, result.stdout, result.stderr, project / ".codememory") == []
    with Store.open(project) as store:
        first = store.get("mem_00000000", touch=False)
    assert first.tags == ["deploy"]  # the tag holding a secret is dropped, as `store` does
    assert first.entered_by and "[REDACTED:" in first.entered_by and first.source and "[REDACTED:" in first.source


def test_import_errors_do_not_echo_secrets(project: Path, cm: Invoke, tmp_path: Path) -> None:
    """A field that fails validation is quoted in the line's error: the quote is scrubbed, and a long one cut."""
    s = [secret(400 + i) for i in range(8)]
    opaque = "k" * 60  # nothing marks it as a secret, but it is too long to be echoed whole
    bad = [
        {"text": "a", "category": f"PGPASSWORD={s[0]}"},
        {"text": "b", "id": f"redis://:{s[1]}@cache"},
        {"text": "c", "created_at": f"mysql -p{s[2]} app"},
        {"text": "d", "superseded_by": f"password: {s[3]}"},
        {"text": "e", "importance": f"api_key={s[4]}"},
        {"text": "f", "links": [{"to": f"token: {s[5]}", "type": "refines"}]},
        {"text": "g", "links": [{"to": "mem_00000001", "type": f"secret={s[6]}"}]},
        {"text": "h", "expires_at": f"token: {s[7]}"},
        {"text": "i", "category": opaque},
    ]
    dump = tmp_path / "bad.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in bad))
    outputs = []
    for args in (["import", dump], ["import", dump, "--skip-invalid"], ["import", dump, "--skip-invalid", "--json"]):
        result = cm(*args)
        assert "Traceback" not in result.output
        outputs += [result.stdout, result.stderr]
    assert "line 1" in outputs[1] and "unknown category" in outputs[1]  # the abort names the lines
    assert leaks([*s, opaque], *outputs, project / ".codememory") == []


# ------------------------------------------------------------------------------------------------- store
def test_store_scrubs_text_tags_entered_by_and_source(project: Path, cm: Invoke) -> None:
    used: list[str] = []
    for i, (name, template) in enumerate(CONTEXTS):
        a, b, c, d = (secret(500 + 4 * i + k) for k in range(4))
        used += [a, b, c, d]
        fill = template.format
        result = cm(
            "store",
            f"Gotcha {i} ({name}): {fill(s=a)}",
            "--tags",
            f"ops,{fill(s=b)}",
            "--entered-by",
            fill(s=c),
            "--source",
            fill(s=d),
        )
        assert result.exit_code == 0, result.output
        assert leaks([a, b, c, d], result.stdout, result.stderr) == [], name
    listed = cm("list", "--json", "--limit", "100")
    assert listed.exit_code == 0
    assert leaks(used, listed.stdout, project / ".codememory") == []


# -------------------------------------------------------------------------------------------------- hook
def _hook(root: Path, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(HOOK), *args], input=stdin, capture_output=True, text=True, cwd=root, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


@pytest.mark.slow
def test_hook_payloads_and_arguments(project: Path, tmp_path: Path) -> None:
    prompt, note, tool, output = (_in_field(600), _in_field(700), _in_field(800), _in_field(900))
    base = {"session_id": "sess-1", "cwd": str(project), "transcript_path": str(tmp_path / "none.jsonl")}
    runs = [
        _hook(project, "claude", "SessionStart", stdin=json.dumps({**base, "source": "startup"})),
        _hook(
            project,
            "claude",
            "UserPromptSubmit",
            stdin=json.dumps({**base, "prompt": "Deploy it. " + " ".join(t for _, t in prompt)}),
        ),
    ]
    for (_, tool_text), (_, out_text) in zip(tool, output, strict=True):
        event = {
            **base,
            "tool_name": "Edit",
            "tool_input": {"file_path": str(project / "src" / "app.py"), "new_string": tool_text},
            "tool_response": {"stdout": out_text},
        }
        runs.append(_hook(project, "claude", "PostToolUse", stdin=json.dumps(event)))
    remember = "\n\n".join(f"*Remember*: the deploy needs {t}" for _, t in note)
    runs.append(_hook(project, "claude", "Stop", stdin=json.dumps({**base, "last_assistant_message": remember})))
    # the notes wait (scrubbed) for the user's next prompt, which carries on and so accepts them
    runs.append(_hook(project, "claude", "UserPromptSubmit", stdin=json.dumps({**base, "prompt": "ok, go on"})))
    bad_event, bad_stdin = secret(990), secret(991)
    runs.append(_hook(project, "claude", f"mysql -p{bad_event}", stdin=json.dumps(base)))  # logged, scrubbed
    runs.append(_hook(project, "claude", "Stop", "--project", str(project), stdin=f"not json PGPASSWORD={bad_stdin}"))
    everything = [s for field in (prompt, note, tool, output) for s, _ in field] + [bad_event, bad_stdin]
    streams = [out for run in runs for out in (run.stdout, run.stderr)]
    assert leaks(everything, *streams, project / ".codememory") == []
    log = (project / ".codememory" / "logs" / "hooks.log").read_text()
    assert "unknown claude event" in log  # the bad event was logged, without its secret
    with Store.open(project) as store:
        assert store.count() >= len(note) // 2  # the notes were stored (redacted), not dropped


# -------------------------------------------------------------------------------------------- raw events
def test_raw_events_and_the_turns_captured_from_them(project: Path) -> None:
    prompt, inputs, outputs, answers = (_in_field(1000), _in_field(1100), _in_field(1200), _in_field(1300))
    at = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
    events = []
    for i in range(len(CONTEXTS)):
        user, step, final = f"msg_{i:03d}_user", f"msg_{i:03d}_step", f"msg_{i:03d}_final"
        t = at + timedelta(minutes=i)
        events += [
            NewRawEvent("opencode", "ses_x", user, "user_prompt", to_iso(t), {"text": prompt[i][1]}),
            NewRawEvent(
                "opencode",
                "ses_x",
                step,
                "assistant_message",
                to_iso(t + timedelta(seconds=1)),
                {"parent_id": user, "completed": int(t.timestamp() * 1000) + 1500, "finish": "tool-calls"},
            ),
            NewRawEvent(
                "opencode",
                "ses_x",
                f"prt_{i:03d}",
                "tool_call",
                to_iso(t + timedelta(seconds=2)),
                {
                    "message_id": step,
                    "tool": "bash",
                    "call_id": f"call_{i}",
                    "status": "completed",
                    "input": {"command": inputs[i][1]},
                    "output": outputs[i][1],
                },
            ),
            NewRawEvent(
                "opencode",
                "ses_x",
                final,
                "assistant_message",
                to_iso(t + timedelta(seconds=3)),
                {
                    "parent_id": user,
                    "completed": int(t.timestamp() * 1000) + 3500,
                    "finish": "stop",
                    "texts": [answers[i][1]],
                },
            ),
        ]
    with Store.open(project) as store:
        accepted = RawEventTables(store.db).accept(events, batch_id="b1", received_at=to_iso(at))
        assert accepted.accepted == len(events)
        report = flush_project(store, now=lambda: at + timedelta(days=1))
    assert report.sessions == 1
    assert list((project / ".codememory" / "memory").glob("*.md"))  # the turns reached the daily log
    everything = [s for field in (prompt, inputs, outputs, answers) for s, _ in field]
    assert leaks(everything, project / ".codememory") == []


# -------------------------------------------------------------------------------------- click's errors
def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(CODEMEMORY), *args], capture_output=True, text=True, cwd=cwd, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.mark.slow
def test_usage_errors_do_not_echo_secret_arguments(project: Path) -> None:
    key_body = base64.b64encode(bytes(range(256))).decode()
    private_key = "\n".join(["-----BEGIN OPENSSH PRIVATE KEY-----", key_body[:70], key_body[70:140], "-----END"])
    anthropic = "sk-ant-api03-" + "Ab3dE" * 12
    opaque = "z" * 64
    s = [secret(1400 + i) for i in range(6)]
    p = ["--project", str(project)]
    cases = [
        ([*p, "store", private_key], [key_body[:70], key_body[70:140]]),  # an argument that starts with "-"
        ([*p, "store", f"--{anthropic}", "x"], [anthropic[7:]]),  # an unknown option
        ([*p, "store", f"--{opaque}", "x"], [opaque]),  # too long to echo whole
        ([*p, "store", "text", f"redis://:{s[0]}@cache"], [s[0]]),  # an extra argument
        ([*p, f"PGPASSWORD={s[1]}"], [s[1]]),  # no such command
        ([*p, "store", "--category", f"mysql -p{s[2]}", "x"], [s[2]]),  # our InvalidInput
        ([*p, "list", "--sort", f"api_key={s[3]}"], [s[3]]),  # click's Choice
        ([*p, "store", "x", "--expires", f"password: {s[4]}"], [s[4]]),  # a date that does not parse
        ([*p, "capture", "--idle-after", f"token: {s[5]}"], [s[5]]),  # a custom parameter type
    ]
    for args, secrets in cases:
        done = _run(*args, cwd=project)
        assert done.returncode != 0, args
        assert "rror" in done.stderr, (args, done.stderr)
        assert leaks(secrets, done.stdout, done.stderr) == [], (args, done.stderr)
    assert leaks([s_ for _, ss in cases for s_ in ss], project / ".codememory") == []


# --------------------------------------------------------------------------------------------------- MCP
@pytest.mark.slow
def test_mcp_store_and_tool_errors(project: Path, tmp_path: Path) -> None:
    s = [secret(1500 + i) for i in range(6)]
    errlog = tmp_path / "mcp-stderr.txt"

    async def main() -> list[Any]:
        params = StdioServerParameters(command=str(CODEMEMORY), args=["--project", str(project), "mcp"])
        with errlog.open("w") as err, anyio.fail_after(60):
            async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return [
                    await session.call_tool(
                        "memory_store",
                        {"text": f"The cache is redis://:{s[0]}@cache.internal", "tags": ["ops", f"token: {s[1]}"]},
                    ),
                    await session.call_tool("memory_get", {"ids": [f"mysql -p{s[2]}"]}),
                    await session.call_tool("memory_store", {"text": "x", "category": f"PGPASSWORD={s[3]}"}),
                    await session.call_tool("memory_store", {"text": "x", f"password: {s[4]}": 1}),
                    await session.call_tool("memory_store", {"text": "x", "expires": f"api_key={s[5]}"}),
                ]

    results = anyio.run(main)
    texts = [block.text for r in results for block in r.content if hasattr(block, "text")]
    assert not results[0].isError and all(r.isError for r in results[1:]), texts
    assert leaks(s, *texts, errlog, project / ".codememory") == []


# ------------------------------------------------------------------------------------------------ daemon
@pytest.mark.slow
def test_daemon_store_and_error_answers(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    project = tmp_path / "project"
    make_project(env, project)
    d = spawn(env)
    s = [secret(1600 + i) for i in range(6)]
    try:
        client = d.client()
        root = str(project.resolve())
        stored = client.request(
            "POST",
            "/memory/store",
            {
                "project_root": root,
                "text": f"Staging db: postgres://app:{s[0]}@db.internal/app",
                "tags": ["db", f"secret={s[1]}"],
                "entered_by": f"PGPASSWORD={s[2]}",
            },
        )
        assert stored.status == 200, stored.data
        answers = [
            client.request(
                "POST", "/memory/store", {"project_root": root, "text": "x", "category": f"db_pass: {s[3]}"}
            ),
            client.request("POST", "/memory/store", {"project_root": root, "text": "x", "expires": f"token={s[4]}"}),
            client.request("POST", "/memory/store", {"project_root": root, "text": "x", f"password: {s[5]}": "y"}),
        ]
        assert [a.status for a in answers] == [400, 400, 422], [a.data for a in answers]
        bodies = [json.dumps(a.data) for a in (stored, *answers)]
    finally:
        d.terminate()
    logs = Path(env["XDG_STATE_HOME"]) / "codememory"
    assert leaks(s, *bodies, logs, tmp_path / "daemon-stderr.txt", project / ".codememory") == []


def test_the_hook_log_is_one_line_per_message(project: Path) -> None:
    """A multi-line argument (here the event name) is logged on one line, scrubbed."""
    _hook(project, "claude", f"Bogus\nmachine h login u password {secret(1700)}\nx", stdin="{}")
    lines = (project / ".codememory" / "logs" / "hooks.log").read_text().splitlines()
    assert len(lines) == 1 and "unknown claude event" in lines[0] and secret(1700) not in lines[0]
