/**
 * The cold-start block: important and recent project memories (and the names of the memory tools) in the system
 * prompt of a session's first LLM call only.
 *
 * Once, not on every call: OpenCode rebuilds the system prompt for every LLM call (a fresh array handed to
 * `experimental.chat.system.transform`), so a block pushed each time is paid for in every call of the session,
 * 100–400 tokens each, for memories chosen before the agent knew its task. Sent once, it costs nothing after the
 * first call; a memory of it that matters to a later step comes back through the HUD (which, on the first call,
 * leaves the block's memories out). The price is one change of the system prompt between the first and the second
 * call (one cache write on providers that cache the prompt prefix), after which it is stable again. "First call":
 * the conversation has no answer of the model yet, so a session resumed in a new OpenCode process (`--session`,
 * `--continue`) gets no second block.
 *
 * OpenCode runs the messages hook before the system hook for each call: the messages hook (call.ts) fetches the block
 * from the daemon's `POST /memory/recent` within the call's budget and plans it in the session's state; the system
 * hook here only pushes what was planned. Skipped for OpenCode's title request. Under the memories, the hand-off
 * from the project's last session, whichever assistant had it (the daemon's `last_session`).
 */
import { MIN_LINE_TOKENS, fitBlock } from "./budget.ts"
import type { Config } from "./config.ts"
import { request } from "./daemon.ts"
import { type MemoryItem, formatColdStart, showable } from "./render.ts"
import type { Sessions } from "./sessions.ts"
import { estimateTokens } from "./tokens.ts"

// OpenCode's title request (same session, no tools) needs no memory.
const TITLE_PROMPT = "You are a title generator"

export type ColdBlock = { text: string; ids: string[]; tokens: number; total: number | null }

/**
 * The session's cold-start block from the daemon, at most `allowance` tokens (null: nothing fits or nothing is
 * stored). Throws the daemon's errors (DaemonError).
 */
export async function fetchColdBlock(
  config: Config,
  projectRoot: string,
  sessionID: string,
  toolNames: string[],
  allowance: number,
): Promise<ColdBlock | null> {
  const render = (memories: MemoryItem[], total?: number, lastSession?: unknown) =>
    formatColdStart(memories, { tools: toolNames, total, lastSession })
  // The block's own text (preamble, tool names, tags) is not the daemon's to count: ask for what is left of it.
  const framing = estimateTokens(render([{ id: "mem_00000000", text: "x" }], 99_999))
  const budget = Math.min(config.coldStartTokens, allowance - framing)
  if (budget < MIN_LINE_TOKENS) return null
  const body = { project_root: projectRoot, session_id: sessionID, limit: config.coldStartLimit, token_budget: budget }
  const result = await request(config, "POST", "/memory/recent", body, config.coldStartTimeoutMs)
  const total = typeof result?.total === "number" ? result.total : null
  // the last session's hand-off comes first: memories are dropped, newest last, until the block fits
  const last = result?.last_session
  const fitted = fitBlock(showable(result?.memories), (ms) => render(ms, total ?? undefined, last), allowance)
  if (!fitted.text) {
    const alone = render([], total ?? undefined, last)
    if (alone && estimateTokens(alone) <= allowance) return { text: alone, ids: [], tokens: estimateTokens(alone), total }
    return null
  }
  return { text: fitted.text, ids: fitted.shown.map((m) => m.id), tokens: fitted.tokens, total }
}

/** The system hook: the block planned for this call (only a session's first call has one). */
export function createColdStart(deps: { config: Config; sessions: Sessions }): (input: { sessionID?: string } | undefined, output: { system?: unknown } | undefined) => Promise<void> {
  const { config, sessions } = deps
  return async (input, output) => {
    if (!config.coldStart) return
    const sessionID = input?.sessionID
    const system = output?.system
    if (!sessionID || !Array.isArray(system)) return
    if (system.some((s) => typeof s === "string" && s.startsWith(TITLE_PROMPT))) return
    const cold = sessions.map.get(sessionID)?.cold
    if (cold) system.push(cold)
  }
}
