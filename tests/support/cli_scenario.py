"""One small coding session, scripted the same way for every real CLI (support.agent_cli): the end-to-end tests run
it, and tests/fixtures/transcripts/record.py records the transcripts the readers are tested on from it.

Turn 1 (a new session): the user states a decision with its reason and asks for a rate limiter; the model says what
it does between its tool calls: it searches codememory's memory through the MCP server, writes its todo list, writes
limiter.py, runs a check that fails (exit 3), and answers with a `*Remember*:` note.
Turn 2 (the same session, resumed): the user accepts; the model marks the first todo done, leaving one open.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from support.agent_cli import AgentCli
from support.scripted_llm import Reply, ToolCallSpec

NOTE = "rate limits are counted per API key, never per client IP address"  # stored before the session
MODEL_NOTE = "the limiter's Redis counters expire after 60 seconds"
PROMPT_1 = (
    "We decided to keep the rate limiter counters in Redis instead of Memcached: we need atomic INCR with expiry. "
    "Please add the limiter."
)
PROMPT_2 = "Looks good, thanks. Mark the limiter as written."
SEARCH = "per API key or per IP"
TODO_DONE = "Write limiter.py with a 60 second window"
TODO_OPEN = "Wire the limiter into the API gateway"
SAY_SEARCH = "First I check what the project already decided about counting."
SAY_PLAN = "The memory says to count per API key. Here is the plan."
SAY_WRITE = "Writing limiter.py now."
SAY_CHECK = "Running the limiter's self-check."
SAY_DONE = f"Created limiter.py; the self-check exits 3 until the gateway calls it.\n\n*Remember*: {MODEL_NOTE}."
SAY_MARKED = "Marked the limiter as written; wiring it into the gateway is still open."
CHECK = "python3 -c 'import sys; sys.exit(3)'"
LIMITER = "WINDOW = 60\n"


@dataclass(frozen=True)
class Turn:
    prompt: str
    replies: list[Reply]


def first_turn(agent: AgentCli, project: Path) -> Turn:
    return Turn(
        PROMPT_1,
        [
            Reply(SAY_SEARCH, tool_calls=[ToolCallSpec(agent.mcp("memory_search"), {"query": SEARCH})]),
            Reply(SAY_PLAN, tool_calls=agent.todos([(TODO_DONE, "in_progress"), (TODO_OPEN, "pending")])),
            Reply(SAY_WRITE, tool_calls=[agent.write_file(project / "limiter.py", LIMITER)]),
            Reply(SAY_CHECK, tool_calls=[agent.shell(CHECK)]),
            Reply(SAY_DONE),
        ],
    )


def second_turn(agent: AgentCli) -> Turn:
    return Turn(
        PROMPT_2,
        [
            Reply(tool_calls=agent.todos([(TODO_DONE, "completed"), (TODO_OPEN, "pending")])),
            Reply(SAY_MARKED),
        ],
    )
