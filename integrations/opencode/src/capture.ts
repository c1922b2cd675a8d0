/**
 * Live capture: user prompts, assistant messages and tool calls with their results, as OpenCode's bus reports them,
 * are buffered per session (RawBuffer) and streamed to the daemon's `POST /api/raw-events` (preflight:
 * `GET /api/raw-events/status`) on `session.idle`, `session.created`, a `/new` boundary and `session.error`, and
 * sooner after 50 tool calls, 15 prompts or 10 minutes; a failed request opens a backoff window (events stay
 * buffered). OpenCode message and part ids are the event ids, so the daemon stores each once whichever path (this
 * stream or its database poller) sees it first.
 */
import type { Config } from "./config.ts"
import { DaemonError, request } from "./daemon.ts"
import type { DaemonWatch } from "./daemon-watch.ts"
import type { Log, Trace } from "./log.ts"
import { isText } from "./messages.ts"
import { RawBuffer } from "./raw-buffer.ts"
import { RawStream, batches, flushReason, isNewBoundary } from "./raw-events.ts"

export type Capture = {
  raw: RawBuffer
  stream: RawStream
  /** One OpenCode bus event; the promise of the flush it queued, if any. */
  onEvent: (event: any) => Promise<void> | undefined
  /** Flush these sessions' settled events after the flushes already queued. Never rejects. */
  flush: (ids: string[], final: boolean, why: string) => Promise<void>
  /** The last queued flush (tests wait for it). */
  flushed: () => Promise<void>
}

type Deps = { config: Config; projectRoot: string; now: () => number; log: Log; trace: Trace; daemon: DaemonWatch }

export function createCapture({ config, projectRoot, now, log, trace, daemon }: Deps): Capture {
  const raw = new RawBuffer({ outputChars: config.rawOutputChars })
  const stream = new RawStream(config.rawBackoffMs, Math.max(config.retryMaxMs, config.rawBackoffMs), config.rawStatusCheckMs, config.rawBatchBytes)
  const policy = { tools: config.flushToolCalls, prompts: config.flushPrompts, maxAgeMs: config.flushMaxAgeMs }
  const queued = new Set<string>() // sessions with a threshold flush queued
  let chain = Promise.resolve()

  // One flush at a time, in order.
  const flush = (ids: string[], final: boolean, why: string) => {
    chain = chain.then(() => send(ids, final, why)).catch((e) => trace({ hook: "raw", error: `unexpected: ${e instanceof Error ? e.stack : e}` }))
    return chain
  }

  const maybeFlush = (sessionID: string | undefined) => {
    const s = sessionID ? raw.sessions.get(sessionID) : undefined
    if (!sessionID || !s || queued.has(sessionID)) return
    const why = flushReason(s.counters, now(), policy)
    if (!why) return
    queued.add(sessionID)
    return flush([sessionID], false, why)
  }

  const failed = (e: unknown) => {
    const reason = e instanceof Error ? e.message : String(e)
    if (stream.fail(reason, now()))
      log("warn", `codememory: live capture paused (${reason}); events stay buffered and are sent after a backoff (the database poller still captures)`)
    daemon.autoStart.maybeStart(e)
    return reason
  }

  /** The preflight, when due. False: do not send now (backoff, no store, or it failed). */
  async function preflight(ids: string[], why: string, started: number): Promise<boolean> {
    if (stream.waiting(started)) {
      trace({ hook: "raw", reason: why, skipped: "backoff", until: stream.health.nextCheckAt })
      return false
    }
    if (stream.needsStatus(started)) {
      try {
        const path = `/api/raw-events/status?project_root=${encodeURIComponent(projectRoot)}`
        stream.status(await request(config, "GET", path, undefined, config.rawTimeoutMs), now())
      } catch (e) {
        if (e instanceof DaemonError && e.status === 404) {
          stream.noStore(now())
          for (const id of ids) raw.drop(id)
        } else {
          trace({ hook: "raw", reason: why, error: failed(e) })
        }
        return false
      }
    }
    return stream.accepting
  }

  async function send(ids: string[], final: boolean, why: string): Promise<void> {
    for (const id of ids) queued.delete(id)
    const started = now()
    if (!(await preflight(ids, why, started))) return
    for (const sessionID of ids) if (!(await sendSession(sessionID, final, why, started))) return
  }

  /** One session's settled events, in batches. False: stop this flush (the daemon failed or has no store). */
  async function sendSession(sessionID: string, final: boolean, why: string, started: number): Promise<boolean> {
    const events = raw.take(sessionID, { final })
    let sent = 0
    for (const batch of batches(events, stream.maxBytes, stream.maxEvents, 1024 + Buffer.byteLength(projectRoot))) {
      const body = { project_root: projectRoot, source: "opencode", batch_id: `${sessionID}:${batch[0].event_id}:${batch.length}`, events: batch }
      const eventIds = batch.map((e) => e.event_id)
      try {
        await request(config, "POST", "/api/raw-events", body, config.rawTimeoutMs)
      } catch (e) {
        const status = e instanceof DaemonError ? e.status : 0
        if (status === 404) {
          stream.noStore(now())
          raw.drop(sessionID)
        } else if (status === 400 || status === 422) {
          raw.markSent(sessionID, eventIds) // the daemon will never take these: do not resend them for ever
          trace({ hook: "raw", sessionID, reason: why, rejected: eventIds.length, error: String(e) })
          continue
        } else {
          if (status === 413) stream.maxBytes = Math.max(4096, Math.floor(stream.maxBytes / 2))
          trace({ hook: "raw", sessionID, reason: why, error: failed(e) })
        }
        return false
      }
      raw.markSent(sessionID, eventIds)
      sent += eventIds.length
      if (stream.ok()) log("info", "codememory: live capture resumed")
    }
    raw.flushed(sessionID, now())
    if (events.length) trace({ hook: "raw", sessionID, reason: why, final, sent, ms: now() - started })
    return true
  }

  const all = () => [...raw.sessions.keys()]

  const onEvent = (event: any): Promise<void> | undefined => {
    const p = event?.properties ?? {}
    const t = now()
    switch (event?.type) {
      case "message.updated":
        raw.onMessage(p.info, t)
        return maybeFlush(p.info?.sessionID)
      case "message.part.updated": {
        const part = p.part
        raw.onPart(part, t)
        const role = raw.sessions.get(part?.sessionID)?.messages.get(part?.messageID)?.role
        if (role === "user" && isText(part) && !part.synthetic && isNewBoundary(part.text)) {
          return flush(all(), false, "/new") // what came before belongs to the old context
        }
        return maybeFlush(part?.sessionID)
      }
      case "message.part.delta":
        raw.onDelta(p)
        return
      case "session.created": {
        const others = all().filter((id) => id !== p.info?.id)
        raw.onSession(p.info, t)
        return flush(others, false, "session.created")
      }
      case "session.updated":
        if (p.info?.id && !raw.sessions.get(p.info.id)?.session) raw.onSession(p.info, t)
        return
      case "session.idle":
        return p.sessionID ? flush([p.sessionID], true, "session.idle") : undefined
      case "session.error":
        return flush(p.sessionID ? [p.sessionID] : all(), true, "session.error")
      case "tui.command.execute":
        return p.command === "session.new" ? flush(all(), false, "/new") : undefined
      case "command.executed":
        return p.name === "new" ? flush(all(), false, "/new") : undefined
    }
  }

  return { raw, stream, onEvent, flush, flushed: () => chain }
}
