/**
 * What codememory adds to one LLM call, planned in `experimental.chat.messages.transform` (which OpenCode runs before
 * the system hook of the same call): on a session's first call the cold-start block (pushed into the system prompt by
 * cold-start.ts); on a turn's first call the turn's block, the memories the request calls for, put right after the
 * user's message and put back there at every later call of the turn (this call's copy only: OpenCode saves none of
 * it, so the next request starts without it); and on a later call the HUD, only what the call's own step brings that
 * the turn does not carry (a memory about the file it touched or the command it ran), appended at the tail.
 * The turn's first call shows the block too unless `turnBlockFirstCall` is off (a what-if: see config.ts). All
 * within the call's budget (budget.ts): the plugin's tool definitions first, the cold-start block next, the turn's
 * block, the HUD gets what is left; no block shows a memory the call already carries. Fail-open: whatever the daemon
 * does, the call goes on (with less or no memory).
 */
import { type CallBudget, fitBlock } from "./budget.ts"
import { MAX_EXCLUDED, carriedIds } from "./carried.ts"
import { type ColdBlock, fetchColdBlock } from "./cold-start.ts"
import type { Config } from "./config.ts"
import type { DaemonWatch } from "./daemon-watch.ts"
import { DaemonError } from "./daemon.ts"
import type { Deriver } from "./derive.ts"
import { askHud } from "./hud.ts"
import type { Trace } from "./log.ts"
import {
  type HudInput,
  type StepCall,
  type WithParts,
  hudInput,
  hudMessage,
  insertTurnBlock,
  isFirstCall,
  latestStep,
  requestID,
  sessionOf,
} from "./messages.ts"
import { NO_STORE_PAUSE_MS } from "./raw-events.ts"
import type { Sessions } from "./sessions.ts"
import { formatHud } from "./render.ts"
import type { Subcortical } from "./subcortical.ts"
import { dedupe } from "./text.ts"
import { estimateTokens } from "./tokens.ts"

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
    const figures = { budget: budget.total, tools: budget.toolTokens, cold: 0, turn: 0, hud: 0 }

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

    const input = hudInput(messages, config, session.pinned)
    const request = requestID(messages)
    if (session.turn && session.turn.request !== request) session.turn = null // a new request: a new turn
    const coldIds = cold?.ids ?? []
    const step = latestStep(input)
    const planned = request !== null && !session.turn

    /** One /retrieve for this call: the answer, null when there was nothing to ask or no room, or the error. */
    const ask = async (
      from: HudInput,
      at: StepCall | null,
      allowance: number,
      requestCarried: boolean,
      withCold = true,
      shown: string[] = [],
    ) => {
      let derived
      try {
        derived = await derive(from)
      } catch (e) {
        return { skipped: `derive failed: ${e}` }
      }
      if (!derived.query_expansion.length && !derived.entities.length) return { skipped: "nothing to ask" }
      // the blocks this call shows first: a long tool output full of memory ids must not push them off the list
      const exclude = dedupe([...(withCold ? coldIds : []), ...shown, ...carriedIds(messages)]).slice(0, MAX_EXCLUDED)
      try {
        const answer = await askHud(config, projectRoot, sessionID, derived, session.pinned, exclude, allowance, at, requestCarried)
        if (!answer) return { exclude, skipped: `no room: ${allowance} tokens left` }
        daemon.worked()
        budget.learn(answer.result)
        sessions.pin(sessionID, answer.shown)
        return { exclude, answer }
      } catch (e) {
        return { exclude, error: failed(e) }
      }
    }
    const extra = () => (sub ? { subcortical: sub.state.last } : {})

    // The turn's first call (or a later one whose turn this plugin instance did not plan: loaded since, or the first
    // call's request failed): what it shows is the turn's block, kept beside the user's message for the rest of the
    // turn. At the first call the request alone decides (no step yet).
    if (planned && request !== null) {
      // The cold start's memories are asked for too: the cold-start block is in this call only, the turn's block in
      // all of them (this call shows the rest, the later calls all of it).
      const got = await ask(input, step, budget.left(), false, false)
      if ("error" in got || (got.skipped && got.skipped.startsWith("derive failed")))
        return done({ ...figures, ...got, ...extra() }) // planned again at the turn's next call
      const answer = got.answer
      // the block adds the request's first `turnBlockMemories` (config.ts) to what the cold-start block shows: it is
      // carried to every call of the turn (the cold start's memories with it, that block being this call's only)
      const all = answer?.text ? answer.shown : []
      let added = 0
      const kept = all.filter((m) => coldIds.includes(m.id) || added++ < config.turnBlockMemories)
      // only these are shown: a pin lets a memory through the next call's HUD under a lenient bar and beyond maxNew,
      // which would bring back at the turn's second call what the cap just left out
      sessions.pin(sessionID, kept)
      const block = kept.length === all.length ? answer : fitBlock(kept, formatHud, budget.left())
      session.turn = { request, text: block?.text ?? null, memories: kept, tokens: block?.text ? block.tokens : 0 }
      // whenever there is a cold-start block (memories or only the last session's hand-off), it is counted
      // off (a what-if): planned here, shown from the turn's second call on
      const now = !config.turnBlockFirstCall
        ? null
        : figures.cold
          ? fitBlock(kept.filter((m) => !coldIds.includes(m.id)), formatHud, budget.left(figures.cold))
          : block
      const shown = now?.text ? now.shown.map((m) => m.id) : []
      if (now?.text) insertTurnBlock(messages, sessionID, now.text)
      figures.turn = now?.text ? now.tokens : 0
      return done({
        ...figures,
        ...(answer ? { request: answer.body, degraded: Boolean(answer.result?.degraded) } : { skipped: got.skipped }),
        excluded: got.exclude ?? [],
        turn: shown,
        kept: kept.map((m) => m.id),
        surfaced: [],
        injected: Boolean(now?.text),
        ...extra(),
      })
    }
    const turn = session.turn
    // Put back where it was (this call's copy of the messages is all that changes), less what a memory tool's result
    // in the conversation shows since: no memory twice in one call.
    const carriedNow = new Set(carriedIds(messages))
    const keep = (turn?.memories ?? []).filter((m) => !carriedNow.has(m.id))
    const text = turn && keep.length === turn.memories.length ? turn.text : formatHud(keep)
    const tokens = text === turn?.text ? (turn?.tokens ?? 0) : estimateTokens(text)
    if (text && tokens <= budget.left(figures.cold)) {
      insertTurnBlock(messages, sessionID, text)
      figures.turn = tokens
    }
    const turnIds = figures.turn ? keep.map((m) => m.id) : []
    // A later call of the turn gets only what its own step brings that the turn does not carry; with nothing done
    // since the request, there is nothing new to ask.
    if (turn && !step) return done({ ...figures, turn: turnIds, surfaced: [], injected: Boolean(figures.turn), ...extra() })
    // (no turn: a conversation without user words; each call decided on its own, as the tool calls go)
    const got = await ask(input, step, budget.left(figures.cold + figures.turn), turn !== null, true, turnIds)
    if (!("answer" in got) || !got.answer) return done({ ...figures, ...got, turn: turnIds, ...extra() })
    const answer = got.answer
    if (answer.text) messages.push(hudMessage(messages, sessionID, answer.text))
    figures.hud = answer.tokens
    done({
      ...figures,
      request: answer.body,
      excluded: got.exclude,
      turn: turnIds,
      surfaced: answer.shown.map((m) => m.id),
      injected: Boolean(answer.text) || Boolean(figures.turn),
      degraded: Boolean(answer.result?.degraded),
      ...extra(),
    })
  }
}
