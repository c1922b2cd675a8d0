/**
 * The memories an LLM call already carries, so the HUD never shows one twice in the same call: the lines of any
 * `<developer_context>` / `<project_memory>` block in the call's messages (ours from an earlier hook run, or another
 * copy of the plugin's), and the memories in the results of memory tools (memory_search, memory_get, memory_store,
 * and the MCP server's `codememory_*` ones return `"id": "mem_…"` with the memory's text). The cold-start block of
 * the same call is added by the caller (it is not in the messages: it goes into the system prompt).
 */
import type { WithParts } from "./messages.ts"
import { COLD_TAG, HUD_TAG } from "./render.ts"

// The most ids sent to the daemon as exclusions (its limit for exclude_memory_ids).
export const MAX_EXCLUDED = 256

const BLOCK_RE = new RegExp(`<(${HUD_TAG}|${COLD_TAG})>([\\s\\S]*?)</\\1>`, "g")
const LINE_ID_RE = /^- \[(mem_[0-9a-f]{8})\]/gm
const JSON_ID_RE = /"id"\s*:\s*"(mem_[0-9a-f]{8})"/g

/** The ids of the memories shown in our blocks inside `text`. */
export function blockIds(text: string): string[] {
  const ids: string[] = []
  for (const block of text.matchAll(BLOCK_RE)) for (const m of block[2].matchAll(LINE_ID_RE)) ids.push(m[1])
  return ids
}

/** The ids of memories a call's messages already show (newest first, once each, at most MAX_EXCLUDED). */
export function carriedIds(messages: WithParts[]): string[] {
  const found = new Set<string>()
  for (let i = messages.length - 1; i >= 0 && found.size < MAX_EXCLUDED; i--) {
    const parts = messages[i]?.parts ?? []
    for (let j = parts.length - 1; j >= 0; j--) {
      const p = parts[j]
      if (p?.type === "text" && typeof p.text === "string" && p.text.includes("<")) for (const id of blockIds(p.text)) found.add(id)
      if (p?.type === "tool" && p.state?.status === "completed" && typeof p.state.output === "string")
        for (const m of p.state.output.matchAll(JSON_ID_RE)) found.add(m[1])
    }
  }
  return [...found].slice(0, MAX_EXCLUDED)
}
