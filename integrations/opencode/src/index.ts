/**
 * codememory for OpenCode: project memory in every LLM call, through the local codememory daemon. The entry point the
 * bundle is built from (`npm run build` → src/codememory/data/opencode/codememory.js, the file `codememory init`
 * copies into a project's `.opencode/plugin/`).
 *
 * - call.ts: what one LLM call gets, within the call's budget (budget.ts: tool definitions + blocks, tokens.ts counts):
 *   - hud.ts: the few memories that matter to the step at hand, as one synthetic user message at the tail (derive.ts
 *     derives the query from the current request and the tool calls since it, subcortical.ts optionally asks a small
 *     model too), none that the call already carries (carried.ts);
 *   - cold-start.ts: in a session's first call only, a short block of important and recent memories in the system
 *     prompt.
 * - tools.ts, session-tools.ts: `memory_search`, `memory_get`, `memory_store`, `memory_transcript`, `checkpoint`,
 *   `search_sessions`, `list_sessions`, `get_session_files` (the MCP tools' names, arguments and JSON).
 * - capture.ts: live capture of prompts, answers and tool calls to the daemon's `POST /api/raw-events`.
 * - autostart.ts: optionally, `codememory daemon start` when no daemon runs.
 *
 * Fail-open (daemon-watch.ts): when the daemon is down, slow or answering errors, the call goes on without memory, a
 * flag is raised (logged once per transition), and /health is re-checked in the background with a backoff.
 *
 * The bundle is one self-contained ES module without runtime imports of npm packages (only `node:` built-ins; zod is
 * imported at run time from OpenCode's own install, see tools.ts), so a copy in a project's `.opencode/plugin/` runs as
 * is. OpenCode uses only the default export `{id, server}`; the named exports are for the tests (Node's test runner
 * and tests/security/test_context_injection.py import them from the bundle).
 */
import type { Plugin } from "@opencode-ai/plugin"

import { PLUGIN_ID } from "./config.ts"
import { createHooks } from "./hooks.ts"

export { OLLAMA_BASE_URL, PLUGIN_ID, resolveConfig, resolveSubcortical } from "./config.ts"
export { DaemonError, endpoint, request } from "./daemon.ts"
export { deriveQuery, extractEntities } from "./derive.ts"
export { Health } from "./health.ts"
export { createHooks } from "./hooks.ts"
export { HUD_MESSAGE_ID, TURN_MESSAGE_ID, hudInput, hudMessage, keyArgs, latestUserText, recentToolCalls, sessionOf } from "./messages.ts"
export { RawBuffer } from "./raw-buffer.ts"
export { RawStream, batches, clipDeep, flushReason, isNewBoundary, stripInjected } from "./raw-events.ts"
export { COLD_TAG, HUD_TAG, NEUTRAL_LT, PREAMBLE, TOOLS_LINE, formatColdStart, formatHud, memoryLines, neutraliseTags, safeLine } from "./render.ts"
export { Sessions } from "./sessions.ts"
export { SUBCORTICAL_PROMPT, askSubcortical, createSubcortical, mergeDerived, parseSubcortical, subcorticalMessage } from "./subcortical.ts"
export { clip } from "./text.ts"

export const server: Plugin = async (ctx, options) => createHooks(ctx, options)

export default { id: PLUGIN_ID, server }
