/**
 * The plugin's hooks for one OpenCode instance: the HUD and the cold-start block (memory in every LLM call), the
 * recall tools, live capture of the session, all fail-open (whatever the daemon does, the LLM call goes on).
 */
import type { Hooks, PluginInput } from "@opencode-ai/plugin"

import type { AutoStartState } from "./autostart.ts"
import { CallBudget } from "./budget.ts"
import { createCall } from "./call.ts"
import { createCapture } from "./capture.ts"
import { createColdStart } from "./cold-start.ts"
import { type Config, type Env, resolveConfig } from "./config.ts"
import { DaemonWatch } from "./daemon-watch.ts"
import { DaemonError, request } from "./daemon.ts"
import { type Deriver, deriveQuery } from "./derive.ts"
import type { Health } from "./health.ts"
import { type Log, type Trace, openCodeLog, tracer } from "./log.ts"
import type { RawBuffer } from "./raw-buffer.ts"
import type { RawStream } from "./raw-events.ts"
import { Sessions } from "./sessions.ts"
import { type SubcorticalState, createSubcortical } from "./subcortical.ts"
import { toolDefinitionTokens } from "./tokens.ts"
import { recallTools } from "./tools.ts"
import { importZod } from "./zod.ts"

// A word no memory has: the warm-up retrieval finds nothing (so no memory's access stats change).
const WARMUP_WORD = "zqxjvkwpf"
// While OpenCode compacts a session, at most this long, no HUD (see "experimental.session.compacting").
const COMPACTION_MAX_MS = 300_000

export type Deps = {
  /**
   * replaces `deriveQuery` (the extension point for a model-based derivation; with the `subcortical` option it is
   * the deterministic part the model's answer is merged with)
   */
  derive?: Deriver
  /** clock (tests) */
  now?: () => number
  /** environment (the query model's API key; tests) */
  env?: Env
  log?: Log
}

/** What the tests look at inside a running plugin. */
export type PluginState = {
  health: Health
  sessions: Sessions
  config: Config
  ready: Promise<void>
  raw: RawBuffer
  stream: RawStream
  flushed: () => Promise<void>
  subcortical: SubcorticalState | null
  autoStart: AutoStartState
  budget: CallBudget
}

type TransformHook = "experimental.chat.messages.transform" | "experimental.chat.system.transform"

/** The plugin's hooks for one OpenCode instance. */
export async function createHooks(ctx: PluginInput, options: Record<string, unknown> | undefined, deps: Deps = {}): Promise<Hooks & { _state: PluginState }> {
  const config = resolveConfig(options)
  const now = deps.now ?? (() => Date.now())
  const projectRoot = config.projectRoot ?? ctx?.directory ?? process.cwd()
  const sessions = new Sessions()
  const log = deps.log ?? openCodeLog(ctx)
  const trace = tracer(config.traceFile)
  const daemon = new DaemonWatch(config, now, log, trace)

  // The optional query model (subcortical): its answer first, the deterministic derivation after (and alone when
  // the model is slow, failing or backed off).
  const sub = config.subcortical ? createSubcortical(config.subcortical, { fallback: deps.derive ?? deriveQuery, now, log, env: deps.env }) : null
  const asked = (options ?? ({} as any)).subcortical
  if (!sub && asked && typeof asked === "object" && asked.enabled !== false)
    log("warn", "codememory: the subcortical option has no model; using the built-in query derivation")
  const derive: Deriver = sub ? sub.derive : (deps.derive ?? deriveQuery)

  // Sessions being compacted (OpenCode also runs the messages hook on the copy it summarises): no HUD there,
  // so memories do not end up in the summary. Cleared by the session.compacted event, or after 5 minutes.
  const compacting = new Map<string, number>()
  const capture = createCapture({ config, projectRoot, now, log, trace, daemon })

  const tools = config.tools ? await recallTools(config, projectRoot) : null
  if (config.tools && !tools) log("warn", "codememory: recall tools not registered (neither @opencode-ai/plugin nor zod could be imported)")
  // What the tool definitions cost: sent with every LLM call, they are the fixed part of the call's budget.
  const toolSize = toolDefinitionTokens(tools as any, tools ? await importZod() : null)
  const budget = new CallBudget(config.callBudgetTokens, toolSize.tokens)
  trace({ hook: "load", tools: Object.keys(tools ?? {}), toolTokens: toolSize.tokens, exact: toolSize.exact, budget: budget.total })
  let ready: Promise<void> = Promise.resolve()

  const hooks: Hooks = {
    "experimental.session.compacting": async (input) => {
      if (input?.sessionID) compacting.set(input.sessionID, now() + COMPACTION_MAX_MS)
    },

    event: async ({ event }) => {
      if (event?.type === "session.compacted") compacting.delete(event.properties?.sessionID)
      if (!config.rawEvents) return
      try {
        await capture.onEvent(event)
      } catch (e) {
        trace({ hook: "raw", error: `unexpected: ${e instanceof Error ? e.stack : e}` })
      }
    },

    // OpenCode awaits this when the instance shuts down (it does not await `event`): send what is left.
    dispose: async () => {
      if (config.rawEvents) await capture.flush([...capture.raw.sessions.keys()], true, "dispose")
    },

    "experimental.chat.messages.transform": neverThrows(
      "experimental.chat.messages.transform",
      trace,
      createCall({ config, projectRoot, now, trace, daemon, sessions, derive, sub, budget, toolNames: Object.keys(tools ?? {}), ready: () => ready, compacting }),
    ),
    "experimental.chat.system.transform": neverThrows("experimental.chat.system.transform", trace, createColdStart({ config, sessions })),
  }
  if (tools) hooks.tool = tools

  // Warm up at load, before the first LLM call: the daemon opens the project's store (its first query is the
  // slow one) and this runtime's HTTP client gets ready. A daemon that is not there is flagged right away.
  const prewarm = async () => {
    try {
      const body = { query_expansion: [WARMUP_WORD], entities: [], project_root: projectRoot, max_memories: 1 }
      budget.learn(await request(config, "POST", "/retrieve", body, config.coldStartTimeoutMs))
      daemon.health.ok(true)
    } catch (e) {
      if (!(e instanceof DaemonError && e.status === 404)) daemon.failed(e)
    }
  }
  ready = (config.hud || config.coldStart ? prewarm() : Promise.resolve()).then(() => {
    // Then no block fits in any call: say so once (the budget is the option's, or the project's from the daemon).
    if (budget.toolTokens > budget.total)
      log("warn", `codememory: the memory tools alone take ${budget.toolTokens} tokens, over the per-call budget of ${budget.total}: no memory blocks`)
  })

  const _state: PluginState = {
    health: daemon.health,
    sessions,
    config,
    ready,
    raw: capture.raw,
    stream: capture.stream,
    flushed: capture.flushed,
    subcortical: sub?.state ?? null,
    autoStart: daemon.autoStart.state,
    budget,
  }
  return Object.assign(hooks, { _state })
}

/** Whatever goes wrong inside a transform hook, the LLM call goes on (the error is traced). */
function neverThrows<I, O>(name: TransformHook, trace: Trace, inner: (input: I, output: O) => Promise<void>) {
  return async (input: I, output: O): Promise<void> => {
    try {
      await inner(input, output)
    } catch (e) {
      trace({ hook: name, error: `unexpected: ${e instanceof Error ? e.stack : e}` })
    }
  }
}
