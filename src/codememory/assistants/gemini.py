"""Gemini CLI (npm `@google/gemini-cli`; checked on 0.61.0): hooks and the MCP server in `.gemini/settings.json`, the
rule block in GEMINI.md (its default context file; it does not read AGENTS.md unless `context.fileName` says so).

From its documentation (https://github.com/google-gemini/gemini-cli/blob/main/docs/hooks/reference.md and its pages
on MCP servers, GEMINI.md files and trusted folders, shipped in the package's bundle/docs) and from what the real
0.61.0 binary sent and did when run against a scripted Gemini API:
- hooks use Claude Code's nested layout, but `timeout` is in milliseconds; lifecycle matchers are exact strings, so
  SessionStart has none. Every payload has session_id, transcript_path, cwd, hook_event_name, timestamp;
  SessionStart `source` (startup, resume, clear), BeforeAgent `prompt`, AfterTool `tool_name`/`tool_input`
  (write_file and replace name `file_path`), AfterAgent `prompt_response`, SessionEnd `reason`. Headless, it puts
  the SessionStart context in front of the prompt BeforeAgent reports, wrapped in `<hook_context>`.
- context goes back as `hookSpecificOutput.additionalContext` (SessionStart, BeforeAgent); Gemini wraps it in
  `<hook_context>` and keeps it in the conversation (and its transcript), like Claude Code.
- PreCompress is not installed: 0.61 fires it (trigger "auto") before every turn's compression check, also when
  nothing is compressed, so it cannot mean "the injected context is gone".
- SessionEnd is not waited for (best effort).
- MCP tools reach the model as `mcp_<server>_<tool>`.
- project settings (hooks, MCP servers) load only in a trusted folder: the first interactive run asks; a headless
  run needs GEMINI_CLI_TRUST_WORKSPACE=true (with `--skip-trust` 0.61.0 ran, but loaded neither the project's hooks
  nor its MCP servers). It warns once about new project hooks, then runs them.
- transcripts: `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl` (GEMINI_CLI_HOME relocates `~`)."""

from __future__ import annotations

from codememory.assistants.spec import (
    SERVER_NAME,
    Assistant,
    HookEvent,
    HookJson,
    McpJson,
    Payload,
    Place,
    Role,
    RuleFile,
    Transcripts,
    UserDir,
)

HOME = UserDir(".gemini", env="GEMINI_CLI_HOME", env_is_home=True)
SETTINGS = Place(".gemini/settings.json")

ASSISTANT = Assistant(
    key="gemini",
    display="Gemini CLI",
    recorded_as="gemini",
    aliases=("gemini-cli",),
    clis=("gemini",),
    marks=(".gemini", "GEMINI.md"),
    folders=(".gemini",),
    files=(
        McpJson(SETTINGS),
        HookJson(SETTINGS, fields={"type": "command", "timeout": 10_000}),  # milliseconds
        RuleFile(Place("GEMINI.md"), audience="gemini"),
    ),
    events=(
        HookEvent("SessionStart", Role.START),
        HookEvent("BeforeAgent", Role.PROMPT),
        HookEvent("AfterTool", Role.EDIT, "write_file|replace"),
        HookEvent("AfterAgent", Role.TURN_END),
        HookEvent("SessionEnd", Role.END),
    ),
    payload=Payload(
        prompt_context_tags=("hook_context",),
        last_message="prompt_response",
        edit_tools=frozenset({"write_file", "replace"}),
        shell_tools=frozenset({"run_shell_command"}),
    ),
    tool_prefix=f"mcp_{SERVER_NAME}_",
    transcripts=Transcripts(HOME, "tmp/*/chats/session-*.jsonl", reader="gemini"),
)
