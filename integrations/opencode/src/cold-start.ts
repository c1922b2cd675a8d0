/**
 * The cold-start block (`experimental.chat.system.transform`): once per session, a short block of important and
 * recent project memories plus one line naming the memory tools, fetched from the daemon's `POST /memory/recent` on
 * the session's first call, then repeated unchanged on its later calls so the system prompt stays a stable, cacheable
 * prefix. Skipped for OpenCode's title request.
 */
import type { Config } from "./config.ts"
import type { DaemonWatch } from "./daemon-watch.ts"
import { DaemonError, request } from "./daemon.ts"
import type { Trace } from "./log.ts"
import { type MemoryItem, formatColdStart } from "./render.ts"
import type { SessionState, Sessions } from "./sessions.ts"

// OpenCode's title request (same session, no tools) needs no memory.
const TITLE_PROMPT = "You are a title generator"

type Deps = {
  config: Config
  projectRoot: string
  trace: Trace
  daemon: DaemonWatch
  sessions: Sessions
  /** the recall tools are registered (the block then names them) */
  toolsReady: boolean
}

export function createColdStart(deps: Deps): (input: { sessionID?: string } | undefined, output: { system?: unknown } | undefined) => Promise<void> {
  const { config, projectRoot, trace, daemon, sessions, toolsReady } = deps

  /** Ask the daemon once for the session's block; a store-less project (404) is asked no more. */
  async function fetchBlock(sessionID: string, session: SessionState): Promise<void> {
    const started = performance.now()
    try {
      const body = { project_root: projectRoot, session_id: sessionID, limit: config.coldStartLimit, token_budget: config.coldStartTokens }
      const result = await request(config, "POST", "/memory/recent", body, config.coldStartTimeoutMs)
      session.cold = formatColdStart(result?.memories, { tools: toolsReady, total: result?.total })
      session.coldDone = true
      trace({ hook: "system", sessionID, cold: (result?.memories ?? []).map((m: MemoryItem) => m.id), ms: performance.now() - started })
    } catch (e) {
      if (e instanceof DaemonError && e.status === 404) session.coldDone = true
      else daemon.failed(e)
      trace({ hook: "system", sessionID, error: String(e), ms: performance.now() - started })
    }
  }

  return async (input, output) => {
    if (!config.coldStart) return
    const sessionID = input?.sessionID
    const system = output?.system
    if (!sessionID || !Array.isArray(system)) return
    if (system.some((s) => typeof s === "string" && s.startsWith(TITLE_PROMPT))) return
    const session = sessions.get(sessionID)
    if (!session.coldDone && !daemon.health.down) await fetchBlock(sessionID, session)
    else if (!session.coldDone) daemon.checkHealth()
    if (session.cold) system.push(session.cold)
  }
}
