/**
 * The HUD (`experimental.chat.messages.transform`, every LLM call): derive what the agent is doing (latest user
 * message + the last completed tool calls), ask the daemon's `POST /retrieve` for the few memories that matter, and
 * append them as one synthetic user message `<developer_context>…</developer_context>` at the tail (never the system
 * prompt; never saved by OpenCode). The ids surfaced become the session's pinned set for the next call. Nothing is
 * injected when nothing was found.
 */
import type { Config } from "./config.ts"
import type { DaemonWatch } from "./daemon-watch.ts"
import { DaemonError, request } from "./daemon.ts"
import type { Derived, Deriver } from "./derive.ts"
import type { Trace } from "./log.ts"
import { type WithParts, hudInput, hudMessage, sessionOf } from "./messages.ts"
import { NO_STORE_PAUSE_MS } from "./raw-events.ts"
import { type MemoryItem, formatHud } from "./render.ts"
import type { Sessions } from "./sessions.ts"
import type { Subcortical } from "./subcortical.ts"

type Deps = {
  config: Config
  projectRoot: string
  now: () => number
  trace: Trace
  daemon: DaemonWatch
  sessions: Sessions
  derive: Deriver
  sub: Subcortical | null
  /** sessions being compacted, until when (see hooks.ts) */
  compacting: Map<string, number>
}

/** What `/retrieve` is asked for one LLM call: the derived query, the pinned ids and the HUD's limits. */
export function retrieveBody(config: Config, projectRoot: string, sessionID: string, derived: Derived, pinned: string[]) {
  return {
    query_expansion: derived.query_expansion,
    entities: derived.entities,
    pinned_memory_ids: pinned,
    project_root: projectRoot,
    session_id: sessionID,
    max_memories: config.maxMemories,
    max_new: config.maxNew,
    token_budget: config.tokenBudget,
  }
}

export function createHud(deps: Deps): (input: unknown, output: { messages?: WithParts[] } | undefined) => Promise<void> {
  const { config, projectRoot, now, trace, daemon, sessions, derive, sub, compacting } = deps
  const health = daemon.health
  let noStoreUntil = 0 // see NO_STORE_PAUSE_MS

  /** Compaction is running on this session (OpenCode also runs this hook on the copy it summarises). */
  const compactingNow = (sessionID: string) => {
    const until = compacting.get(sessionID)
    if (until === undefined) return false
    if (now() < until) return true
    compacting.delete(sessionID)
    return false
  }

  return async (_input, output) => {
    if (!config.hud) return
    const started = performance.now()
    const messages = (output?.messages ?? []) as WithParts[]
    const sessionID = sessionOf(messages)
    if (!sessionID || compactingNow(sessionID)) return
    if (health.down) {
      daemon.checkHealth()
      trace({ hook: "messages", sessionID, skipped: "daemon down", reason: health.reason, ms: performance.now() - started })
      return
    }
    if (now() < noStoreUntil) return
    const session = sessions.get(sessionID)
    let derived
    try {
      derived = await derive(hudInput(messages, config, session.pinned))
    } catch (e) {
      trace({ hook: "messages", sessionID, skipped: `derive failed: ${e}` })
      return
    }
    if (!derived.query_expansion.length && !derived.entities.length) {
      trace({ hook: "messages", sessionID, skipped: "nothing to ask", ms: performance.now() - started })
      return
    }
    const body = retrieveBody(config, projectRoot, sessionID, derived, session.pinned)
    let result
    try {
      result = await request(config, "POST", "/retrieve", body, config.timeoutMs)
    } catch (e) {
      const noStore = e instanceof DaemonError && e.status === 404
      if (noStore) noStoreUntil = now() + NO_STORE_PAUSE_MS
      const reason = noStore ? (e as DaemonError).message : daemon.failed(e)
      trace({ hook: "messages", sessionID, request: body, error: reason, ...(sub ? { subcortical: sub.state.last } : {}), ms: performance.now() - started })
      return
    }
    daemon.worked()
    const memories: MemoryItem[] = Array.isArray(result?.memories) ? result.memories : []
    sessions.pin(sessionID, memories)
    const text = formatHud(memories)
    if (text) messages.push(hudMessage(messages, sessionID, text))
    trace({
      hook: "messages",
      sessionID,
      request: body,
      surfaced: memories.map((m) => m.id),
      injected: Boolean(text),
      degraded: Boolean(result?.degraded),
      ...(sub ? { subcortical: sub.state.last } : {}),
      ms: performance.now() - started,
    })
  }
}
