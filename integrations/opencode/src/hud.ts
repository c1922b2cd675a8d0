/**
 * The memory blocks of a turn, asked from the daemon's `POST /retrieve` with a query derived from the current request
 * and the tool calls made since it (derive.ts). At the turn's first call, on the request alone: the turn's block, kept
 * beside the user's message for the whole turn (call.ts). At a later call, with the newest tool call as the step and
 * `request_carried` (the turn's block is in the call): the HUD, only what that step brings (a memory about the file
 * it touched or the command it ran), so a routine step gets nothing. Both are one synthetic user message
 * `<developer_context>…</developer_context>` (never the system prompt; never saved by OpenCode), show no memory the
 * call already carries (the cold-start block, the turn's block, memory tool results: sent as exclusions), fit what
 * is left of the call's budget, and are absent when nothing qualifies. The ids shown become the session's pinned set
 * for the next call; the daemon keeps a pin only while the new query still scores it above
 * `[context] pinned_min_score`.
 */
import { MIN_LINE_TOKENS, fitBlock } from "./budget.ts"
import type { Config } from "./config.ts"
import { request } from "./daemon.ts"
import type { Derived } from "./derive.ts"
import type { StepCall } from "./messages.ts"
import { type MemoryItem, formatHud, showable } from "./render.ts"
import { estimateTokens } from "./tokens.ts"

/**
 * What `/retrieve` is asked for one LLM call: the derived query, the pinned and excluded ids, the HUD's limits, and
 * `remote: true` when the organisation's memory is asked too (option orgMemory).
 */
export function retrieveBody(
  config: Config,
  projectRoot: string,
  sessionID: string,
  derived: Derived,
  pinned: string[],
  exclude: string[] = [],
  tokenBudget = config.tokenBudget,
  step: StepCall | null = null,
  requestCarried = false,
) {
  return {
    query_expansion: derived.query_expansion,
    entities: derived.entities,
    pinned_memory_ids: pinned.filter((id) => !exclude.includes(id)),
    exclude_memory_ids: exclude,
    project_root: projectRoot,
    session_id: sessionID,
    max_memories: config.maxMemories,
    max_new: config.maxNew,
    token_budget: tokenBudget,
    ...(typeof derived.request_phrases === "number" ? { request_phrases: derived.request_phrases } : {}),
    ...(config.orgMemory ? { remote: true } : {}),
    ...(step ? { step } : {}),
    ...(requestCarried ? { request_carried: true } : {}),
  }
}

// The HUD's own text (tags and preamble) around its memory lines, in tokens: not the daemon's to count.
const HUD_FRAMING = estimateTokens(formatHud([{ id: "mem_00000000", text: "x" }]))

export type HudAnswer = {
  /** the block, or null (nothing qualified, or nothing fits) */
  text: string | null
  shown: MemoryItem[]
  tokens: number
  /** what the daemon answered (its `call_budget_tokens`, `degraded`, …) */
  result: any
  body: ReturnType<typeof retrieveBody>
}

/**
 * Ask the daemon for the HUD of one call, at most `allowance` tokens, none of `exclude`; null when the allowance has
 * no room for a memory. Throws the daemon's errors (DaemonError).
 */
export async function askHud(
  config: Config,
  projectRoot: string,
  sessionID: string,
  derived: Derived,
  pinned: string[],
  exclude: string[],
  allowance: number,
  step: StepCall | null = null,
  requestCarried = false,
): Promise<HudAnswer | null> {
  const budget = Math.min(config.tokenBudget, allowance - HUD_FRAMING)
  if (budget < MIN_LINE_TOKENS) return null
  const body = retrieveBody(config, projectRoot, sessionID, derived, pinned, exclude, budget, step, requestCarried)
  const timeout = config.orgMemory ? Math.max(config.timeoutMs, config.orgTimeoutMs) : config.timeoutMs
  const result = await request(config, "POST", "/retrieve", body, timeout)
  // An older daemon ignores exclude_memory_ids: they are left out here too.
  const offered = showable(Array.isArray(result?.memories) ? result.memories : []).filter((m) => !exclude.includes(m.id))
  const fitted = fitBlock(offered, formatHud, allowance)
  return { text: fitted.text, shown: fitted.shown, tokens: fitted.tokens, result, body }
}
