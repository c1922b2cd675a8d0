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

const KEY_ARGS = ["filePath", "path", "pattern", "include", "command", "url", "query", "description", "subagent_type"]

/** A text part (the only kind with words of the user or the assistant). */
export function isText(part: any): boolean {
  return part && part.type === "text" && typeof part.text === "string"
}

/**
 * The latest user message's own words (synthetic parts, e.g. file contents OpenCode inlines or an injected
 * HUD, are left out; a message that only has synthetic parts is skipped).
 */
export function latestUserText(messages: WithParts[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m?.info?.role !== "user" || m.info.id === HUD_MESSAGE_ID) continue
    const text = (m.parts ?? [])
      .filter((p) => isText(p) && !p.synthetic && !p.ignored)
      .map((p) => p.text)
      .join("\n")
      .trim()
    if (text) return text
  }
  return ""
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

/** The last `n` finished tool calls, oldest first: name, key arguments, result cut to `resultChars`. */
export function recentToolCalls(messages: WithParts[], n = 5, resultChars = 300): ToolTrace[] {
  const found: ToolTrace[] = []
  for (let i = messages.length - 1; i >= 0 && found.length < n; i--) {
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

/** What the HUD derivation looks at: the user's latest words and the last `toolWindow` finished tool calls. */
export function hudInput(messages: WithParts[], config: Config, pinned: string[] = []): HudInput {
  return {
    userText: clip(latestUserText(messages), 2000),
    tools: recentToolCalls(messages, config.toolWindow, config.resultChars),
    pinned,
  }
}

/** The session the conversation belongs to (the newest message that names one). */
export function sessionOf(messages: WithParts[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const id = messages[i]?.info?.sessionID
    if (typeof id === "string" && id) return id
  }
  return null
}

/**
 * The synthetic user message carrying the HUD, shaped like OpenCode's own messages; agent and model are
 * copied from the latest real user message.
 */
export function hudMessage(messages: WithParts[], sessionID: string, text: string): WithParts {
  let last = null
  for (let i = messages.length - 1; i >= 0 && !last; i--) if (messages[i]?.info?.role === "user") last = messages[i].info
  const info = {
    id: HUD_MESSAGE_ID,
    sessionID,
    role: "user",
    time: { created: Date.now() },
    ...(last?.agent ? { agent: last.agent } : {}),
    ...(last?.model ? { model: last.model } : {}),
  }
  const part = { id: "prt_zzzzzzzz_codememory_hud", messageID: HUD_MESSAGE_ID, sessionID, type: "text", text, synthetic: true }
  return { info, parts: [part] }
}
