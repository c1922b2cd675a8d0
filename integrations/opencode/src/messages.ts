/**
 * Reading OpenCode's conversation (`output.messages` of the messages hook): the latest user words, the last finished
 * tool calls, the session id; and shaping the synthetic message that carries the HUD.
 */
import type { Config } from "./config.ts"
import { clip } from "./text.ts"

/** One entry of output.messages: OpenCode's message info and its parts (shapes vary by version: kept loose). */
export type WithParts = { info: any; parts: any[] }

/** A finished tool call as the query derivation sees it. */
export type ToolTrace = { tool: string; args: Record<string, string>; output: string; error: boolean }

/** What the HUD derivation looks at. */
export type HudInput = { userText: string; tools: ToolTrace[]; pinned: string[] }

export const HUD_MESSAGE_ID = "msg_zzzzzzzz_codememory_hud"
/** The turn's block: the request's memories, beside the user's message at every call of the turn (call.ts). */
export const TURN_MESSAGE_ID = "msg_zzzzzzzz_codememory_turn"

const KEY_ARGS = ["filePath", "path", "pattern", "include", "command", "url", "query", "description", "subagent_type"]

/** A text part (the only kind with words of the user or the assistant). */
export function isText(part: any): boolean {
  return part && part.type === "text" && typeof part.text === "string"
}

/** A user message's own words (synthetic parts, e.g. file contents OpenCode inlines or an injected HUD, left out). */
function ownWords(m: WithParts | undefined): string {
  if (m?.info?.role !== "user" || m.info.id === HUD_MESSAGE_ID || m.info.id === TURN_MESSAGE_ID) return ""
  return (m.parts ?? [])
    .filter((p) => isText(p) && !p.synthetic && !p.ignored)
    .map((p) => p.text)
    .join("\n")
    .trim()
}

/** Where the current request is: the newest user message with words of its own (-1: none). */
export function latestUserIndex(messages: WithParts[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (ownWords(messages[i])) return i
  return -1
}

/**
 * The latest user message's own words (synthetic parts, e.g. file contents OpenCode inlines or an injected
 * HUD, are left out; a message that only has synthetic parts is skipped).
 */
export function latestUserText(messages: WithParts[]): string {
  const i = latestUserIndex(messages)
  return i < 0 ? "" : ownWords(messages[i])
}

/** The session's first LLM call: no answer of the model yet (the cold-start block goes only there). */
export function isFirstCall(messages: WithParts[]): boolean {
  return !messages.some((m) => m?.info?.role === "assistant")
}

/** The arguments worth showing for a tool call: paths, patterns, commands, URLs, queries (each cut short). */
export function keyArgs(input: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (!input || typeof input !== "object") return out
  for (const key of KEY_ARGS) {
    const v = input[key]
    if (typeof v === "string" && v.trim()) out[key] = clip(v.trim(), 200)
    else if (typeof v === "number" || typeof v === "boolean") out[key] = String(v)
  }
  return out
}

/**
 * The last `n` finished tool calls made after message `since` (the current request: the previous requests' calls
 * are another step), oldest first: name, key arguments, result cut to `resultChars`.
 */
export function recentToolCalls(messages: WithParts[], n = 5, resultChars = 300, since = -1): ToolTrace[] {
  const found: ToolTrace[] = []
  for (let i = messages.length - 1; i > since && found.length < n; i--) {
    const m = messages[i]
    if (m?.info?.role !== "assistant") continue
    const parts = m.parts ?? []
    for (let j = parts.length - 1; j >= 0 && found.length < n; j--) {
      const p = parts[j]
      if (p?.type !== "tool" || !p.state) continue
      const status = p.state.status
      if (status !== "completed" && status !== "error") continue
      const raw = status === "completed" ? p.state.output : p.state.error
      found.push({
        tool: String(p.tool ?? "tool"),
        args: keyArgs(p.state.input),
        output: clip(typeof raw === "string" ? raw.trim() : "", resultChars),
        error: status === "error",
      })
    }
  }
  return found.reverse()
}

/**
 * What the HUD derivation looks at: the current request (the user's latest words) and the last `toolWindow` tool
 * calls finished since it.
 */
export function hudInput(messages: WithParts[], config: Config, pinned: string[] = []): HudInput {
  const current = latestUserIndex(messages)
  return {
    userText: clip(current < 0 ? "" : ownWords(messages[current]), 2000),
    tools: recentToolCalls(messages, config.toolWindow, config.resultChars, current),
    pinned,
  }
}

/** The step the agent is at, as `/retrieve` takes it: the newest tool call since the request (null: none yet). */
export type StepCall = { tool: string; args: Record<string, string>; error: boolean }

/**
 * The newest finished tool call of the HUD input: the daemon judges the step on what it touches (its file, folder,
 * command) and gives a routine call (ls, git status, running the tests) only the memories about that call.
 */
export function latestStep(input: HudInput): StepCall | null {
  const last = input.tools[input.tools.length - 1]
  return last ? { tool: last.tool, args: last.args, error: last.error } : null
}

/** The session the conversation belongs to (the newest message that names one). */
export function sessionOf(messages: WithParts[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const id = messages[i]?.info?.sessionID
    if (typeof id === "string" && id) return id
  }
  return null
}

/** The id of the current request's user message (null: no user words in the conversation). */
export function requestID(messages: WithParts[]): string | null {
  const id = messages[latestUserIndex(messages)]?.info?.id
  return typeof id === "string" && id ? id : null
}

/**
 * The synthetic user message carrying the HUD (or, with `id` TURN_MESSAGE_ID, the turn's block), shaped like
 * OpenCode's own messages; agent and model are copied from the latest real user message.
 */
export function hudMessage(messages: WithParts[], sessionID: string, text: string, id = HUD_MESSAGE_ID): WithParts {
  let last = null
  for (let i = messages.length - 1; i >= 0 && !last; i--) if (messages[i]?.info?.role === "user") last = messages[i].info
  const info = {
    id,
    sessionID,
    role: "user",
    time: { created: Date.now() },
    ...(last?.agent ? { agent: last.agent } : {}),
    ...(last?.model ? { model: last.model } : {}),
  }
  const part = { id: id.replace(/^msg_/, "prt_"), messageID: id, sessionID, type: "text", text, synthetic: true }
  return { info, parts: [part] }
}

/**
 * Put the turn's block right after the current request's user message (where the request is: the model reads the
 * request's memories with it, and the calls of a turn share everything up to there). Only this call's copy of the
 * messages changes; OpenCode saves none of it, so the next request's calls do not carry this turn's block.
 */
export function insertTurnBlock(messages: WithParts[], sessionID: string, text: string): void {
  const at = latestUserIndex(messages)
  if (at < 0) return
  messages.splice(at + 1, 0, hudMessage(messages, sessionID, text, TURN_MESSAGE_ID))
}
