/**
 * Live capture's pure parts: the raw event shape sent to the daemon's `POST /api/raw-events`, when a session's buffer
 * must be flushed, how events are cut into request-sized batches, and the stream's availability (`RawStream`).
 */
import { Health } from "./health.ts"
import { clip } from "./text.ts"

export type RawEvent = {
  event_id: string
  session_id: string
  kind: "session" | "user_prompt" | "assistant_message" | "tool_call"
  at: number
  payload: Record<string, unknown>
}
export type RawCounters = { tools: number; prompts: number; firstAt: number | null }
export type FlushPolicy = { tools: number; prompts: number; maxAgeMs: number }

// A project without a store (the daemon answers 404) is asked again only after this long (not an outage: no flag).
export const NO_STORE_PAUSE_MS = 60_000

const DEVELOPER_CONTEXT_RE = /<developer_context\b[^>]*>[\s\S]*?(?:<\/developer_context>|$)/gi

/** Text without the `<developer_context>` blocks codememory itself injects (never captured). */
export function stripInjected(text: string): string {
  return /developer_context/i.test(text) ? text.replace(DEVELOPER_CONTEXT_RE, "").trim() : text
}

/**
 * Why a session's buffer must be flushed now, before any idle: 50+ finished tool calls, 15+ prompts, or 10+ minutes
 * since its oldest unsent event (the seed's thresholds; configurable). null: not yet.
 */
export function flushReason(counters: RawCounters, now: number, policy: FlushPolicy): "tools" | "prompts" | "age" | null {
  if (counters.tools >= policy.tools) return "tools"
  if (counters.prompts >= policy.prompts) return "prompts"
  if (counters.firstAt !== null && now - counters.firstAt >= policy.maxAgeMs) return "age"
  return null
}

/** A user prompt that starts a new context (`/new`): flush before it. */
export function isNewBoundary(text: string): boolean {
  return /^\/new(\s|$)/.test(text.trim())
}

/** Strings inside `value` cut to `n` characters (objects and arrays kept, at most 50 keys/items deep-copied). */
export function clipDeep(value: unknown, n: number, depth = 0): unknown {
  if (typeof value === "string") return clip(value, n)
  if (depth > 6 || value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => clipDeep(v, n, depth + 1))
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, 50)
      .map(([k, v]) => [k, clipDeep(v, n, depth + 1)]),
  )
}

/**
 * Split events into batches whose JSON stays under `maxBytes` (with `overhead` for the envelope) and `maxEvents`;
 * an event too big on its own is cut down (its strings clipped) until it fits.
 */
export function batches(events: RawEvent[], maxBytes: number, maxEvents = 500, overhead = 512): RawEvent[][] {
  const budget = Math.max(1024, maxBytes - overhead)
  const out: RawEvent[][] = []
  let current: RawEvent[] = []
  let size = 0
  for (let e of events) {
    let bytes = Buffer.byteLength(JSON.stringify(e)) + 1
    for (let n = 2000; bytes > budget && n >= 16; n = Math.floor(n / 2)) {
      e = { ...e, payload: clipDeep(e.payload, n) as Record<string, unknown> }
      bytes = Buffer.byteLength(JSON.stringify(e)) + 1
    }
    if (current.length && (size + bytes > budget || current.length >= maxEvents)) {
      out.push(current)
      current = []
      size = 0
    }
    current.push(e)
    size += bytes
  }
  if (current.length) out.push(current)
  return out
}

/**
 * The raw stream's availability: a preflight `GET /api/raw-events/status` before the first flush and every
 * `statusEveryMs`; after a failure, a backoff window (`Health`'s doubling wait from `backoffMs`) during which
 * flushes only buffer; a project without a store (404) pauses streaming for a minute. Pure: the caller passes the time.
 */
export class RawStream {
  health: Health
  statusEveryMs: number
  maxBytes: number
  configuredBytes: number
  maxEvents = 500
  accepting = true
  statusAt = -Infinity
  pausedUntil = 0

  constructor(backoffMs: number, maxBackoffMs: number, statusEveryMs: number, maxBytes: number) {
    this.health = new Health(backoffMs, maxBackoffMs)
    this.statusEveryMs = statusEveryMs
    this.maxBytes = maxBytes
    this.configuredBytes = maxBytes
  }

  /** Inside the backoff window (or paused): do not try now. */
  waiting(now: number): boolean {
    if (now < this.pausedUntil) return true
    return this.health.down && now < this.health.nextCheckAt
  }

  needsStatus(now: number): boolean {
    return this.health.down || now - this.statusAt >= this.statusEveryMs
  }

  /** The preflight's answer: whether the daemon takes events, and its limits. */
  status(status: any, now: number): void {
    this.statusAt = now
    this.accepting = status?.accepting !== false
    const limit = Number(status?.max_body_bytes)
    if (Number.isFinite(limit) && limit > 0) this.maxBytes = Math.min(this.configuredBytes, limit)
    const events = Number(status?.max_events)
    if (Number.isFinite(events) && events > 0) this.maxEvents = events
  }

  /** A failed request. Returns true when this opened the window. */
  fail(reason: string, now: number): boolean {
    this.statusAt = -Infinity
    return this.health.fail(reason, now)
  }

  /** A request went through. Returns true when this closed the window. */
  ok(): boolean {
    return this.health.ok(true)
  }

  noStore(now: number): void {
    this.pausedUntil = now + NO_STORE_PAUSE_MS
  }
}
