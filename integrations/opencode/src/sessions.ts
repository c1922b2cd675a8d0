/**
 * What the plugin keeps per OpenCode session between its hooks: the ids the last HUD showed (pinned for the next
 * call), the current turn's block (the request's memories, given at the turn's first call and put back at each of
 * its later calls) and the cold-start block planned for the call being prepared (the messages hook plans it, the system hook of
 * the same call pushes it: OpenCode runs them in that order for each LLM call).
 */
import type { MemoryItem } from "./render.ts"
import { dedupe } from "./text.ts"

// Sessions remembered (the most recently used ones), by the HUD and by the raw-event buffer.
export const MAX_SESSIONS = 64

/** The request's memories, decided at the turn's first call and kept for its later calls (call.ts). */
export type TurnBlock = {
  /** the id of the request's user message: a new request starts a new turn */
  request: string
  /** the block (null: the request called for nothing) */
  text: string | null
  /** the memories it shows */
  memories: MemoryItem[]
  tokens: number
}

export type SessionState = {
  pinned: string[]
  turn: TurnBlock | null
  /** the cold-start block for the call being prepared (null: none in this call) */
  cold: string | null
}

/** Pinned ids and the planned cold-start block of each session (the newest sessions only). */
export class Sessions {
  max: number
  map = new Map<string, SessionState>()

  constructor(max = MAX_SESSIONS) {
    this.max = max
  }

  get(id: string): SessionState {
    let s = this.map.get(id)
    if (s) {
      this.map.delete(id) // most recently used last
    } else {
      s = { pinned: [], turn: null, cold: null }
    }
    this.map.set(id, s)
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string)
    return s
  }

  /** After a successful /retrieve: the ids shown become the pinned set (an empty answer clears it). */
  pin(id: string, memories: MemoryItem[]): void {
    this.get(id).pinned = dedupe(memories.map((m) => m.id).filter((x) => typeof x === "string"))
  }
}
