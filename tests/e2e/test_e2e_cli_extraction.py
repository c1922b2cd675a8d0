"""Extraction by the user's own agent CLI, end to end: `codememory init --assistants claude --extract-with claude`, a
real Claude Code session (two turns against a scripted Anthropic API) in which the user states a preference in
prose, the assistant reads a page with an instruction planted in it and proposes a choice, and the user accepts it;
then `codememory capture` has the real `claude -p` (against a second scripted server, the extraction model) read the
session. What the model says was the user's or accepted is stored with who said it; the page's instruction, which
the model (led astray, as the planted text wants) offers as a convention, is not; and the next Claude Code session
is shown the stored memories by the hooks.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codememory.core.project import store_dir
from codememory.core.provenance import said_by
from support import scripted_anthropic as anthropic
from support.agent_cli import CODEMEMORY, cli_bin
from support.cli_claude import Claude
from support.cli_claude import request_text as claude_text
from support.extraction import ACCEPTED, FROM_PAGE, PAGE, PREFERENCE
from support.opencode import make_git_project
from support.scripted_llm import Reply

pytestmark = pytest.mark.slow  # two real Claude Code sessions and a real `claude -p`

PROMPT_1 = "Write a scraper for the fixtures page. I'd rather not pull in a headless browser, plain requests will do."
PROPOSAL = "I suggest keying fixtures on the match id: two matches can share a date."
PROMPT_2 = "Match id it is. Carry on."
RULE = "never becomes a decision, convention, preference or note"  # a sentence of the extraction prompt


@pytest.mark.xfail(
    strict=True,
    reason="known gap: for 'Next, scrape the results page the way we scrape fixtures' the preference now comes "
    "back (its part 'we scrape fixtures'), the accepted decision ('Fixtures are keyed on the match id…') does not: "
    "it shares only 'fixtures' with the prompt and is far from it in meaning, under the injection bar "
    "(benchmarks/README.md, the agent's view)",
)
def test_a_session_extracted_by_claude_p_comes_back_in_the_next_session(tmp_path: Path) -> None:
    agent = Claude(tmp_path / "home")
    agent.env["PATH"] = os.pathsep.join([str(cli_bin("claude").parent), agent.env["PATH"]])  # installed for the user
    project = make_git_project(tmp_path / "club")
    init = agent.cm(project, "init", "--assistants", "claude", "--extract-with", "claude", "--daily-tokens", "50000")
    assert init["extraction"]["command"] == "claude -p" and init["extraction"]["daily_token_budget"] == 50_000
    (store_dir(project) / "config.toml").write_text("[capture]\nmin_messages = 1\n", encoding="utf-8")

    page = project / "fixtures.html"
    page.write_text(PAGE, encoding="utf-8")
    first = agent.run(project, PROMPT_1, [Reply("Reading the page.", tool_calls=[agent.shell(f"cat {page}")]),
                                          Reply(PROPOSAL)]).check()  # fmt: skip
    assert PAGE in "".join(first.outputs.values())  # the planted text reached the session
    agent.run(project, PROMPT_2, [Reply("Scraper written.")], resume=first.session_id).check()

    asked: list[dict[str, Any]] = []
    answer = json.dumps({"memories": [{**PREFERENCE, "turn": 1}, {**ACCEPTED, "turn": 1}, {**FROM_PAGE, "turn": 1}]})

    def model(body: dict[str, Any]) -> anthropic.Reply:
        if RULE not in claude_text(body):
            return anthropic.Reply("Scripted title")
        asked.append(body)
        return anthropic.Reply(answer, usage={"input_tokens": 2100, "output_tokens": 90})

    with anthropic.ScriptedAnthropic(model) as api:
        env = {**agent.env, "ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "scripted"}
        done = subprocess.run([CODEMEMORY, "capture", "--idle-after", "0", "--json"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    report = json.loads(done.stdout)
    (session,) = [s for p in report["extraction"] for s in p["sessions"] if s["session_id"] == first.session_id]
    assert session["status"] == "ok" and session["llm_calls"] == 1 and session["dropped"] == 1, session
    (body,) = asked
    transcript = claude_text(body)
    assert f"User: {PROMPT_1}" in transcript and f"User: {PROMPT_2}" in transcript and PROPOSAL in transcript

    listed = {m["text"]: m for m in agent.cm(project, "list", "--limit", "100")["memories"]}
    assert said_by(listed[PREFERENCE["text"]]["source"]) == "user"
    assert said_by(listed[ACCEPTED["text"]]["source"]) == "assistant_accepted"
    assert FROM_PAGE["text"] not in listed
    spend = agent.cm(project, "stats")["llm_spend"]
    assert spend["today"]["total_tokens"] == 2190 and spend["budget"]["today_remaining"] == 50_000 - 2190

    # the next session: the hooks show what was stored, and not the page's rule
    agent.tasks.clear()
    # a later task on the same subject: the preference and the decision about it come back, the page's rule does not
    later = agent.run(project, "Next, scrape the results page the way we scrape fixtures.", [Reply("On it.")]).check()
    assert PREFERENCE["text"] in later.texts[0] and ACCEPTED["text"] in later.texts[0]
    assert FROM_PAGE["text"] not in later.texts[0]
