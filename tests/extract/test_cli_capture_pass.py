"""`codememory capture` with an agent CLI chosen as the extraction model, for a Claude Code session the hooks
captured: the daily budget stops the model before it is run and the pass says so, and a CLI that is not installed
is a one-line error that leaves the session for the next pass. The CLI is a stand-in that records being run (the
real ones: tests/extract/test_cli_contract.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from codememory import Store
from codememory.capture.hook_transcripts import capture_transcript
from support.cli import Invoke

CLAUDE_TRANSCRIPT = Path(__file__).parents[1] / "fixtures" / "transcripts" / "claude-code-2.1.197.jsonl"
ANSWER = {"memories": [{"text": "Retries back off exponentially.", "category": "decision", "importance": 0.9,
                        "said_by": "user"}]}  # fmt: skip
STAND_IN = """#!{python}
import json, sys
sys.stdin.read()
open({calls!r}, "a").write("ran\\n")
print(json.dumps({{"type": "result", "is_error": False, "result": {answer!r},
                  "usage": {{"input_tokens": 900, "output_tokens": 40}}}}))
"""


def captured_session(project: Path, tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    folder.mkdir()
    recorded = CLAUDE_TRANSCRIPT.read_text(encoding="utf-8").replace("__PROJECT__", str(project))
    transcript = folder / "528bc694-980c-40c8-b942-618b1b6cb9dd.jsonl"
    transcript.write_text(recorded.replace("__TRANSCRIPT_DIR__", str(folder)).replace("__HOME__", str(folder)))
    with Store.open(project) as store:
        assert capture_transcript(store, transcript, final=True).turns_captured


def stand_in(tmp_path: Path) -> tuple[Path, Path]:
    calls = tmp_path / "calls.txt"
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text(STAND_IN.format(python=sys.executable, calls=str(calls), answer=json.dumps(ANSWER)))
    path.chmod(0o755)
    return path, calls


def users_llm(claude_bin: Path | str, daily: int) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
    config.write_text(
        '[embedding]\nprovider = "none"\n[llm]\nprovider = "claude"\n'
        f"claude_bin = {json.dumps(str(claude_bin))}\ndaily_token_budget = {daily}\n"
    )


def test_the_daily_budget_keeps_the_cli_from_running_and_the_pass_says_so(
    cm: Invoke, project: Path, tmp_path: Path
) -> None:
    captured_session(project, tmp_path)
    claude, calls = stand_in(tmp_path)
    users_llm(claude, daily=1000)  # less than one call can cost
    no_opencode = {"OPENCODE_DB": str(tmp_path / "no-opencode.db")}
    result = cm("capture", "--idle-after", "0", env=no_opencode)
    assert result.exit_code == 0, result.output
    assert not calls.exists()  # the model was never asked
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "over_budget" in line)
    assert lines[at + 1].strip().startswith("daily token budget reached: 0 spent today (UTC), a call needs up to ")
    assert lines[at + 1].endswith("limit 1000 (llm.daily_token_budget); the rules extracted these turns")
    assert "LLM spend: today 0 tokens in 0 calls (budget 1000, 1000 left)" in cm("stats").stdout


def test_a_cli_that_is_not_installed_is_one_line_and_the_session_waits(
    cm: Invoke, project: Path, tmp_path: Path
) -> None:
    captured_session(project, tmp_path)
    users_llm(tmp_path / "nowhere" / "claude", daily=200_000)
    no_opencode = {"OPENCODE_DB": str(tmp_path / "no-opencode.db")}
    result = cm("capture", "--idle-after", "0", env=no_opencode)
    assert result.exit_code == 1 and "Traceback" not in result.output
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert error.endswith(
        f"config llm.claude_bin: '{tmp_path / 'nowhere' / 'claude'}' is not an executable on PATH "
        "(install Claude Code: npm i -g @anthropic-ai/claude-code)"
    )

    claude, calls = stand_in(tmp_path)  # installed now: the next pass extracts the session with it
    users_llm(claude, daily=200_000)
    again = json.loads(cm("capture", "--idle-after", "0", "--json", env=no_opencode).stdout)
    (session,) = again["extraction"][0]["sessions"]
    assert session["status"] == "ok" and session["llm_calls"] == 1 and calls.read_text() == "ran\n"
