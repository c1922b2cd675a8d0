"""The agent-CLI providers (`opencode run`, `claude -p`, `codex exec`) against stand-in executables that record how
they were run (arguments, working folder, stdin, environment, the config they were given) and print what the real
CLI prints in its JSON mode (shapes taken from OpenCode 1.18.33, Claude Code 2.1.330 and Codex 0.171.0 runs against
the scripted servers). The real binaries: tests/extract/test_cli_contract.py.

What each must do: run in a throwaway folder that is gone afterwards, never with codememory's plugin, hooks or MCP
server (an isolated config, the switches in the environment), our system prompt as the model's instructions and our
user prompt on stdin, the CLI's own usage charged to the budget, and every failure an LLMError in one line."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from codememory import Store
from codememory.errors import InvalidInput, LLMError
from codememory.extract import extract_session
from codememory.extract.cli_claude import ClaudeCLI
from codememory.extract.cli_codex import CodexCLI
from codememory.extract.cli_opencode import AGENT, OpenCodeCLI
from support.extraction import SESSION, stored_memories, turn

FAKE = """#!{python}
import json, os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
spec = json.load(open(os.path.join(here, "spec.json")))
argv = sys.argv
files = {{}}
def grab(path):
    if path and os.path.isfile(path):
        files[path] = open(path).read()
if "--system-prompt-file" in argv:
    grab(argv[argv.index("--system-prompt-file") + 1])
for var, rel in (("XDG_CONFIG_HOME", "opencode/opencode.json"), ("XDG_DATA_HOME", "opencode/auth.json"),
                 ("CODEX_HOME", "config.toml"), ("CODEX_HOME", "auth.json")):
    if os.environ.get(var):
        grab(os.path.join(os.environ[var], rel))
if os.environ.get("CODEX_HOME") and os.path.isfile(os.path.join(os.environ["CODEX_HOME"], "config.toml")):
    import tomllib
    grab(tomllib.load(open(os.path.join(os.environ["CODEX_HOME"], "config.toml"), "rb")).get("model_instructions_file"))
record = {{"argv": argv[1:], "cwd": os.getcwd(), "stdin": sys.stdin.read(), "env": dict(os.environ), "files": files}}
with open(os.path.join(here, "calls.jsonl"), "a") as f:
    f.write(json.dumps(record) + "\\n")
if spec.get("hang"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    open(os.path.join(here, "child.pid"), "w").write(str(child.pid))
    time.sleep(60)
sys.stderr.write(spec.get("stderr", ""))
sys.stdout.write(spec.get("stdout", ""))
sys.exit(spec.get("exit", 0))
"""

SYSTEM = "You extract durable project knowledge. SYSTEM-MARKER"
USER = 'Transcript:\n[turn 1]\nUser: "use plain sqlite3"\nExtract the durable memories as JSON.'
ANSWER = '{"memories": [{"text": "Use plain sqlite3.", "category": "decision", "importance": 0.9, "said_by": "user"}]}'


class Fake:
    """A stand-in CLI in its own folder: what it prints next, and every call it recorded."""

    def __init__(self, folder: Path, name: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.path = folder / name
        self.path.write_text(FAKE.format(python=sys.executable), encoding="utf-8")
        self.path.chmod(0o755)
        self.prints("")

    def prints(self, stdout: str, *, exit: int = 0, stderr: str = "", hang: bool = False) -> None:
        spec = {"stdout": stdout, "exit": exit, "stderr": stderr, "hang": hang}
        (self.folder / "spec.json").write_text(json.dumps(spec), encoding="utf-8")

    @property
    def calls(self) -> list[dict[str, Any]]:
        path = self.folder / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def jsonl(*events: dict[str, Any]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def opencode_events(text: str, tokens: dict[str, Any] | None = None) -> str:
    """What `opencode run --format json` printed for one answer (1.18.33)."""
    session = {"sessionID": "ses_x", "timestamp": 1}
    finish = {"type": "step-finish", "reason": "stop", "tokens": tokens or {}, "cost": 0}
    return jsonl(
        {"type": "step_start", **session, "part": {"type": "step-start"}},
        {"type": "text", **session, "part": {"type": "text", "text": text}},
        {"type": "step_finish", **session, "part": finish},
    )


def claude_result(text: str, **extra: Any) -> str:
    """What `claude -p --output-format json` printed for one answer (2.1.330)."""
    usage = {"input_tokens": 462, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 4}
    model_usage = {
        "claude-haiku-test": {"inputTokens": 900, "outputTokens": 40, "cacheReadInputTokens": 100},
        "claude-side-model": {"inputTokens": 50, "outputTokens": 5, "cacheCreationInputTokens": 10},
    }
    body = {"type": "result", "subtype": "success", "is_error": False, "result": text, "usage": usage}
    return json.dumps({**body, "modelUsage": model_usage, "session_id": "s", **extra})


def codex_events(text: str) -> str:
    """What `codex exec --json` printed for one answer (0.171.0), with the warning items it prints first."""
    return jsonl(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "error", "message": "Model metadata not found."}},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": text}},
        {"type": "turn.completed", "usage": {"input_tokens": 1136, "cached_input_tokens": 0, "output_tokens": 42}},
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This user's HOME with their agents' own settings (a codememory hook, MCP server and plugin among them)."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("OPENCODE_DB", str(home / "oc.db"))
    monkeypatch.setenv("CLAUDECODE", "1")  # as inside a Claude Code session
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "project"))
    for var in ("CODEMEMORY_NO_CAPTURE", "CODEMEMORY_NO_HOOKS"):
        monkeypatch.delenv(var, raising=False)
    (home / ".config" / "codememory").mkdir(parents=True)
    (home / ".config" / "codememory" / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    opencode = home / ".config" / "opencode"
    (opencode / "plugin").mkdir(parents=True)
    (opencode / "plugin" / "codememory.js").write_text("export default async () => ({})\n")
    (opencode / "opencode.jsonc").write_text(
        """{
  // providers
  "provider": {"mine": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "http://127.0.0.1:1/v1"}}},
  "model": "mine/big",
  "small_model": "mine/small",
  "plugin": ["codememory-opencode"],
  "mcp": {"codememory": {"type": "local", "command": ["codememory", "mcp"]}},
  "agent": {"build": {"prompt": "mine"}},
}
""",
        encoding="utf-8",
    )
    (home / ".local" / "share" / "opencode").mkdir(parents=True)
    (home / ".local" / "share" / "opencode" / "auth.json").write_text('{"mine": {"type": "api", "key": "k"}}')
    codex = home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(
        """model = "gpt-test"
model_provider = "mine"
model_reasoning_effort = "low"
notify = ["notify-send"]
profile = "fast"

[model_providers.mine]
name = "Mine"
base_url = "http://127.0.0.1:1/v1"
env_key = "MINE_KEY"
wire_api = "responses"

[profiles.fast]
model = "gpt-test-mini"
model_instructions_file = "/somewhere/else.md"

[projects."/work/app"]
trust_level = "trusted"

[features]
hooks = true

# >>> codememory
[mcp_servers.codememory]
command = "codememory"
args = ["mcp"]
# <<< codememory
""",
        encoding="utf-8",
    )
    (codex / "auth.json").write_text('{"OPENAI_API_KEY": "sk-test"}')
    return home


def assert_isolated(call: dict[str, Any], project: Path) -> None:
    """Run with the switches that keep codememory out, in a folder of its own that is gone now."""
    env = call["env"]
    assert env["CODEMEMORY_NO_CAPTURE"] == "1" and env["CODEMEMORY_NO_HOOKS"] == "1"
    cwd = Path(call["cwd"])
    assert cwd.name != project.name and "codememory-llm-" in str(cwd) and not cwd.exists()


# ------------------------------------------------------------------------------------------- OpenCode
def test_opencode_runs_our_agent_in_an_isolated_config(home: Path, tmp_path: Path) -> None:
    fake = Fake(tmp_path / "bin", "opencode")
    fake.prints(opencode_events(ANSWER, {"input": 700, "output": 30, "reasoning": 5, "cache": {"read": 50}}))
    provider = OpenCodeCLI(str(fake.path))
    completion = provider.complete(SYSTEM, USER, purpose="extract", max_tokens=100)

    (call,) = fake.calls
    assert call["argv"] == ["run", "--pure", "--format", "json", "--agent", AGENT, "--title", "codememory extraction",
                            "-m", "mine/small"]  # fmt: skip
    assert call["stdin"] == USER + "\n"  # the user prompt on stdin, no argument length limit
    assert_isolated(call, tmp_path)
    env = call["env"]
    assert "OPENCODE_DB" not in env and env["OPENCODE_DISABLE_AUTOUPDATE"] == "1"
    assert not Path(env["XDG_CONFIG_HOME"]).is_relative_to(home)
    config = json.loads(call["files"][f"{env['XDG_CONFIG_HOME']}/opencode/opencode.json"])
    assert config["provider"]["mine"]["options"]["baseURL"] == "http://127.0.0.1:1/v1"
    assert "plugin" not in config and "mcp" not in config
    assert list(config["agent"]) == [AGENT]  # the user's own agents stay behind
    agent = config["agent"][AGENT]
    assert agent["prompt"] == SYSTEM + "\n" and agent["tools"] == {"*": False}
    assert call["files"][f"{env['XDG_DATA_HOME']}/opencode/auth.json"] == '{"mine": {"type": "api", "key": "k"}}'

    assert completion.text == ANSWER
    assert (completion.prompt_tokens, completion.completion_tokens, completion.model) == (750, 35, "mine/small")


def test_opencode_model_setting_and_its_failures(home: Path, tmp_path: Path) -> None:
    fake = Fake(tmp_path / "bin", "opencode")
    fake.prints(opencode_events(ANSWER))  # no token counts: estimated
    completion = OpenCodeCLI(str(fake.path), "mine/big").complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    assert fake.calls[0]["argv"][-2:] == ["-m", "mine/big"] and completion.model == "mine/big"
    assert completion.prompt_tokens > len(USER) // 4 and completion.completion_tokens == -(-len(ANSWER) // 4)

    fake.prints(jsonl({"type": "error", "error": {"name": "ProviderAuthError", "data": {"message": "no key"}}}))
    with pytest.raises(LLMError, match=r"opencode run: .*ProviderAuthError"):
        OpenCodeCLI(str(fake.path)).complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    fake.prints("", exit=3, stderr="Error: provider mine not found\n")
    with pytest.raises(LLMError, match=r"^opencode run exited with status 3: Error: provider mine not found$"):
        OpenCodeCLI(str(fake.path)).complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    fake.prints(opencode_events("   "))
    with pytest.raises(LLMError, match="opencode run printed no answer"):
        OpenCodeCLI(str(fake.path)).complete(SYSTEM, USER, purpose="extract", max_tokens=10)


# ---------------------------------------------------------------------------------------- Claude Code
def test_claude_runs_in_safe_mode_with_our_system_prompt(home: Path, tmp_path: Path) -> None:
    fake = Fake(tmp_path / "bin", "claude")
    fake.prints(claude_result(ANSWER))
    completion = ClaudeCLI(str(fake.path), "haiku").complete(SYSTEM, USER, purpose="extract", max_tokens=100)

    (call,) = fake.calls
    argv = call["argv"]
    assert argv[:3] == ["-p", "--output-format", "json"] and argv[-2:] == ["--model", "haiku"]
    for flag in ("--safe-mode", "--strict-mcp-config", "--no-session-persistence"):
        assert flag in argv
    assert argv[argv.index("--tools") + 1] == ""  # no tools at all
    assert "--mcp-config" not in argv and "--settings" not in argv
    assert call["files"][argv[argv.index("--system-prompt-file") + 1]] == SYSTEM + "\n"
    assert call["stdin"] == USER + "\n"
    assert_isolated(call, tmp_path)
    assert "CLAUDECODE" not in call["env"] and "CLAUDE_PROJECT_DIR" not in call["env"]
    assert call["env"]["HOME"] == str(home)  # the user's own login and settings

    # every model's usage is charged (a side request to a small model too); the model that did the work is named
    assert completion.text == ANSWER and completion.model == "claude-haiku-test"
    assert (completion.prompt_tokens, completion.completion_tokens) == (900 + 100 + 50 + 10, 45)


def test_claude_failures_are_llm_errors(home: Path, tmp_path: Path) -> None:
    fake = Fake(tmp_path / "bin", "claude")
    fake.prints(claude_result("Credit balance is too low", is_error=True, subtype="error_during_execution"))
    with pytest.raises(LLMError, match=r"^claude -p: Credit balance is too low$"):
        ClaudeCLI(str(fake.path)).complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    fake.prints("", exit=1, stderr="error: unknown option '--safe-mode'\n")
    with pytest.raises(
        LLMError, match=r"unknown option '--safe-mode' \(the claude provider needs Claude Code 2\.1\.330"
    ):
        ClaudeCLI(str(fake.path)).complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    fake.prints("Not JSON at all")
    with pytest.raises(LLMError, match="claude -p printed no JSON result: Not JSON at all"):
        ClaudeCLI(str(fake.path)).complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    fake.prints(json.dumps({"type": "result", "is_error": False, "result": ANSWER, "usage": {"input_tokens": 7,
                "output_tokens": 3}}))  # fmt: skip
    completion = ClaudeCLI(str(fake.path)).complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    assert (completion.prompt_tokens, completion.completion_tokens, completion.model) == (7, 3, "claude-default")


# ---------------------------------------------------------------------------------------------- Codex
def test_codex_runs_in_a_temporary_home_without_our_mcp_server_or_hooks(home: Path, tmp_path: Path) -> None:
    fake = Fake(tmp_path / "bin", "codex")
    fake.prints(codex_events(ANSWER))
    provider = CodexCLI(str(fake.path))
    assert provider.model == "gpt-test"
    completion = provider.complete(SYSTEM, USER, purpose="extract", max_tokens=100)

    (call,) = fake.calls
    assert call["argv"] == ["exec", "--json", "--ephemeral", "--skip-git-repo-check", "-"]
    assert call["stdin"] == USER + "\n"
    assert_isolated(call, tmp_path)
    codex_home = call["env"]["CODEX_HOME"]
    assert codex_home != str(home / ".codex") and Path(call["cwd"]).parent == Path(codex_home).parent
    config = tomllib.loads(call["files"][f"{codex_home}/config.toml"])
    assert "mcp_servers" not in config and "projects" not in config and "notify" not in config
    assert config["model_providers"]["mine"]["base_url"] == "http://127.0.0.1:1/v1"
    assert (config["model"], config["profile"], config["model_reasoning_effort"]) == ("gpt-test", "fast", "low")
    assert config["profiles"]["fast"] == {"model": "gpt-test-mini"}  # its own instructions file stays behind
    assert config["features"]["hooks"] is False and config["features"]["shell_tool"] is False
    assert (config["sandbox_mode"], config["approval_policy"]) == ("read-only", "never")
    assert call["files"][config["model_instructions_file"]] == SYSTEM + "\n"
    assert call["files"][f"{codex_home}/auth.json"] == '{"OPENAI_API_KEY": "sk-test"}'

    assert completion.text == ANSWER
    assert (completion.prompt_tokens, completion.completion_tokens, completion.model) == (1136, 42, "gpt-test")


def test_codex_failures_are_llm_errors(home: Path, tmp_path: Path) -> None:
    fake = Fake(tmp_path / "bin", "codex")
    failed = {"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}}
    fake.prints(jsonl({"type": "thread.started"}, {"type": "turn.started"}, failed))
    with pytest.raises(LLMError, match=r"^codex exec: unexpected status 401 Unauthorized$"):
        CodexCLI(str(fake.path), "gpt-x").complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    assert fake.calls[-1]["argv"][-3:] == ["-m", "gpt-x", "-"]
    fake.prints(jsonl({"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 1}}))
    with pytest.raises(LLMError, match="codex exec printed no answer"):
        CodexCLI(str(fake.path)).complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    (home / ".codex" / "config.toml").write_text("model = [unclosed")
    with pytest.raises(InvalidInput, match="cannot read Codex's config"):
        CodexCLI(str(fake.path))


# ------------------------------------------------------------------------------------ shared behaviour
def test_a_cli_that_gives_no_answer_in_time_is_killed_with_what_it_started(home: Path, tmp_path: Path) -> None:
    fake = Fake(tmp_path / "bin", "claude")
    fake.prints("", hang=True)
    with pytest.raises(LLMError, match=r"^claude -p gave no answer within 0\.5 s \(llm\.timeout\)$"):
        ClaudeCLI(str(fake.path), timeout=0.5).complete(SYSTEM, USER, purpose="extract", max_tokens=10)
    pid = int((fake.folder / "child.pid").read_text())
    assert not alive(pid)  # the CLI's own child is gone too


def alive(pid: int) -> bool:
    """A process that runs (a zombie left for its reaper does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_extraction_through_a_cli_stores_memories_and_charges_the_clis_usage(home: Path, tmp_path: Path) -> None:
    fake = Fake(tmp_path / "bin", "claude")
    answer = {"memories": [{"text": "Prices are integer cents, never floats.", "category": "convention",
                            "importance": 0.9, "turn": 1}]}  # fmt: skip
    fake.prints(claude_result(json.dumps(answer)))
    (tmp_path / "shop").mkdir()
    store, _ = Store.init(tmp_path / "shop")
    with store:
        turns = [turn(1, "Prices are integer cents, never floats.", ("Noted.",)), turn(2, "Thanks.", ("Bye.",))]
        report = extract_session(store, SESSION, turns, provider=ClaudeCLI(str(fake.path)))
        assert report.status == "ok" and report.llm_calls == 1
        (memory,) = [m for m in stored_memories(store) if m["entered_by"] == "codememory-extract:llm"]
        assert memory["text"] == "Prices are integer cents, never floats."
        rows = store.db.conn.execute(
            "SELECT provider, model, prompt_tokens, completion_tokens FROM llm_spend"
        ).fetchall()
        assert rows == [("claude", "claude-haiku-test", 1060, 45)]


def test_an_answer_printed_as_bare_json_is_the_answer_and_events_are_read_as_events() -> None:
    from codememory.extract.cli_opencode import parse_events

    bare = '{"memories": []}\n'  # an OpenCode that prints the model's text alone, and that text is JSON
    assert parse_events(bare).text == bare
    events = '{"type": "text", "part": {"text": "{\\"memories\\": []}"}}\n{"type": "step_finish", "part": {}}\n'
    assert parse_events(events).text == '{"memories": []}'
    with pytest.raises(LLMError):
        parse_events('{"type": "error", "error": {"message": "no key"}}\n')
