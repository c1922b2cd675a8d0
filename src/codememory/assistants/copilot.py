"""GitHub Copilot CLI (npm `@github/copilot`; checked on 1.0.102): hooks in `.github/hooks/codememory.json`, the MCP
server in `.mcp.json` (or `.github/mcp.json` when that is the project's file), the rule block in AGENTS.md.

From its documentation (https://docs.github.com/en/copilot/reference/hooks-reference, `copilot help config`,
`copilot help environment`, `copilot mcp --help`) and from what the real 1.0.102 binary sent and did when run against
a scripted model server (COPILOT_PROVIDER_BASE_URL):
- hook files are `{"version": 1, "hooks": {Event: [{"type": "command", "bash": …, "powershell": …, "timeoutSec":
  …}]}}`. Events named in PascalCase get Claude Code's snake_case payloads (session_id, cwd, prompt, tool_name,
  tool_input, transcript_path; its `create`/`edit` tools appear as Write/Edit with a `path`); the camelCase ones
  (sessionStart, userPromptSubmitted, …) get camelCase payloads, and its userPromptSubmitted output is ignored.
  So PascalCase: `{"additionalContext": …}` from SessionStart and UserPromptSubmit reaches the model (the latter
  in a `<system_reminder>` kept in the conversation). `hookSpecificOutput` is ignored.
- it also runs the hooks in `.claude/settings.json` (with COPILOT_CLI=1 set, as for its own hooks): Claude Code's
  entries of ours then do nothing, these do the work.
- it reads the workspace MCP servers from `.mcp.json`, and from `.github/mcp.json` only when there is no
  `.mcp.json`; its tools reach the model as `<server>-<tool>`.
- it reads AGENTS.md, CLAUDE.md, GEMINI.md and `.github/copilot-instructions.md` alike (`copilot instruction
  list`): AGENTS.md's block (the tools' own names) serves it; when Claude Code or Gemini CLI are set up too, it sees
  their blocks as well.
- project hooks and MCP servers load only in a trusted folder (asked on first run; `--trust-folder` or
  COPILOT_ALLOW_ALL=true for one headless run).
- transcripts: `~/.copilot/session-state/<session>/events.jsonl` (COPILOT_HOME relocates `~/.copilot`).
- `.github/hooks/*.json` is also read by Copilot's cloud agent, where codememory is not installed: a hook that
  cannot start is logged there and skipped (hooks fail open)."""

from __future__ import annotations

from codememory.assistants.spec import (
    SERVER_NAME,
    Assistant,
    HookEvent,
    HookJson,
    McpJson,
    Output,
    Payload,
    Place,
    Role,
    RuleFile,
    Transcripts,
    UserDir,
)

HOME = UserDir(".copilot", env="COPILOT_HOME")

ASSISTANT = Assistant(
    key="copilot",
    display="Copilot CLI",
    recorded_as="copilot",
    aliases=("copilot-cli", "github-copilot"),
    clis=("copilot",),
    marks=(".github/copilot-instructions.md", ".github/hooks/codememory.json"),
    folders=(".github",),
    subfolders=("hooks",),
    files=(
        McpJson(Place(".mcp.json"), fields={"type": "stdio"}, instead_of=Place(".github/mcp.json")),
        HookJson(
            Place(".github/hooks/codememory.json"),
            nested=False,
            version=1,
            command_keys=("bash", "powershell"),
            fields={"type": "command", "timeoutSec": 10},
        ),
        RuleFile(Place("AGENTS.md"), audience="agents"),
    ),
    events=(
        HookEvent("SessionStart", Role.START),
        HookEvent("UserPromptSubmit", Role.PROMPT),
        HookEvent("PostToolUse", Role.EDIT),
        HookEvent("PreCompact", Role.COMPACT),
        HookEvent("Stop", Role.TURN_END),
        HookEvent("SessionEnd", Role.END),
    ),
    payload=Payload(
        last_message=None,
        edit_tools=frozenset({"Write", "Edit", "create", "edit"}),
        shell_tools=frozenset({"Bash", "bash"}),
    ),
    output=Output.ADDITIONAL_CONTEXT,
    tool_prefix=f"{SERVER_NAME}-",
    transcripts=Transcripts(HOME, "session-state/*/events.jsonl", reader="copilot"),
)
