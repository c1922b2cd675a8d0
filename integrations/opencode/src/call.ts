/**
 * What codememory adds to one LLM call, planned in `experimental.chat.messages.transform` (which OpenCode runs before
 * the system hook of the same call): on a session's first call the cold-start block (pushed into the system prompt by
 * cold-start.ts), on every call the HUD (appended to the messages here). Both within the call's budget (budget.ts):
 * the plugin's tool definitions first, the cold-start block next, the HUD gets what is left; and the HUD shows no
 * memory the call already carries. Fail-open: whatever the daemon does, the call goes on (with less or no memory).
 */
import type { CallBudget } from "./budget.ts"
import { MAX_EXCLUDED, carriedIds } from "./carried.ts"
import { type ColdBlock, fetchColdBlock } from "./cold-start.ts"
import type { Config } from "./config.ts"
import type { DaemonWatch } from "./daemon-watch.ts"
import { DaemonError } from "./daemon.ts"
import type { Deriver } from "./derive.ts"
import { askHud } from "./hud.ts"
import type { Trace } from "./log.ts"
import { type WithParts, hudInput, hudMessage, isFirstCall, latestStep, sessionOf } from "./messages.ts"
import { NO_STORE_PAUSE_MS } from "./raw-events.ts"
import type { Sessions } from "./sessions.ts"
import type { Subcortical } from "./subcortical.ts"
import { dedupe } from "./text.ts"

type Deps = {
  config: Config
  projectRoot: string
  now: () => number
  trace: Trace
  daemon: DaemonWatch
  sessions: Sessions
  derive: Deriver
  sub: Subcortical | null
  budget: CallBudget
  /** the names of the tools the plugin registered (the cold-start block names them) */
  toolNames: string[]
  /** the warm-up request at load (it brings the project's budget): awaited before the first plan */
  ready: () => Promise<void>
  /** sessions being compacted, until when (see hooks.ts) */
  compacting: Map<string, number>
}

export function createCall(deps: Deps): (input: unknown, output: { messages?: WithParts[] } | undefined) => Promise<void> {
  const { config, projectRoot, now, trace, daemon, sessions, derive, sub, budget, toolNames, compacting } = deps
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

  /** A daemon error: a store-less project pauses asking (no flag); anything else raises the flag. */
  const failed = (e: unknown): string => {
    if (e instanceof DaemonError && e.status === 404) {
      noStoreUntil = now() + NO_STORE_PAUSE_MS
      return e.message
    }
    return daemon.failed(e)
  }

  return async (_input, output) => {
    if (!config.hud && !config.coldStart) return
    const started = performance.now()
    const messages = (output?.messages ?? []) as WithParts[]
    const sessionID = sessionOf(messages)
    if (!sessionID) return
    const session = sessions.get(sessionID)
    session.cold = null // planned anew for every call
    if (compactingNow(sessionID)) return
    const done = (entry: Record<string, unknown>) => trace({ hook: "messages", sessionID, ...entry, ms: performance.now() - started })
    if (health.down) {
      daemon.checkHealth()
      return done({ skipped: "daemon down", reason: health.reason })
    }
    if (now() < noStoreUntil) return
    await deps.ready()
    const figures = { budget: budget.total, tools: budget.toolTokens, cold: 0, hud: 0 }

    let cold: ColdBlock | null = null
    if (config.coldStart && isFirstCall(messages)) {
      try {
        cold = await fetchColdBlock(config, projectRoot, sessionID, toolNames, Math.min(config.coldStartTokens, budget.left()))
      } catch (e) {
        trace({ hook: "system", sessionID, error: failed(e) })
        if (health.down || now() < noStoreUntil) return done({ ...figures, skipped: "cold start failed" })
      }
      session.cold = cold?.text ?? null
      figures.cold = cold?.tokens ?? 0
      trace({ hook: "system", sessionID, cold: cold?.ids ?? [], tokens: figures.cold })
    }
    if (!config.hud) return done(figures)

    let derived
    const input = hudInput(messages, config, session.pinned)
    try {
      derived = await derive(input)
    } catch (e) {
      return done({ ...figures, skipped: `derive failed: ${e}` })
    }
    if (!derived.query_expansion.length && !derived.entities.length) return done({ ...figures, skipped: "nothing to ask" })
    const exclude = dedupe([...(cold?.ids ?? []), ...carriedIds(messages)]).slice(0, MAX_EXCLUDED)
    const allowance = budget.left(figures.cold)
    let answer
    try {
      answer = await askHud(config, projectRoot, sessionID, derived, session.pinned, exclude, allowance, latestStep(input))
    } catch (e) {
      return done({ ...figures, error: failed(e), ...(sub ? { subcortical: sub.state.last } : {}) })
    }
    if (!answer) return done({ ...figures, excluded: exclude, skipped: `no room: ${allowance} tokens left` })
    daemon.worked()
    budget.learn(answer.result)
    sessions.pin(sessionID, answer.shown)
    if (answer.text) messages.push(hudMessage(messages, sessionID, answer.text))
    figures.hud = answer.tokens
    done({
      ...figures,
      request: answer.body,
      excluded: exclude,
      surfaced: answer.shown.map((m) => m.id),
      injected: Boolean(answer.text),
      degraded: Boolean(answer.result?.degraded),
      ...(sub ? { subcortical: sub.state.last } : {}),
    })
  }
}
