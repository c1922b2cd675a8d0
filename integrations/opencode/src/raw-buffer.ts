/**
 * Live capture's buffer: what the plugin has seen of each session on OpenCode's bus, and which of it is settled
 * enough to send to the daemon. Pure: no I/O (the sending is capture.ts).
 */
import { isText } from "./messages.ts"
import { type RawCounters, type RawEvent, clipDeep, stripInjected } from "./raw-events.ts"
import { MAX_SESSIONS } from "./sessions.ts"
import { clip } from "./text.ts"

// OpenCode's bus payloads (message infos, parts) vary by version: kept loose.
export type RawSession = { session: any; messages: Map<string, any>; parts: Map<string, Map<string, any>>; sent: Set<string>; counters: RawCounters }

const MAX_SENT_IDS = 20_000
const MAX_BUFFERED_MESSAGES = 2_000

/** An assistant message's error as one line of text. */
function errorText(error: any): string | null {
  if (!error) return null
  if (typeof error === "string") return error
  const message = error?.data?.message ?? error?.message
  return message ? `${error.name ?? "error"}: ${message}` : String(error.name ?? "error")
}

/** A tool part that has its result (or its error). */
function finished(p: any): boolean {
  return p?.type === "tool" && (p.state?.status === "completed" || p.state?.status === "error")
}

/**
 * What the plugin has seen of each session from OpenCode's bus (`message.updated`, `message.part.updated`,
 * `message.part.delta`, `session.created`), and which of it is settled enough to send: a user prompt once answered
 * (or at the session's end), an assistant message once completed with all its tool calls finished, a tool call
 * once it has its result. Each OpenCode message or part is sent once (its id is the event id). Pure: no I/O.
 */
export class RawBuffer {
  outputChars: number
  inputChars: number
  sessions = new Map<string, RawSession>()

  constructor(opts: { outputChars?: number; inputChars?: number } = {}) {
    this.outputChars = opts.outputChars ?? 4000
    this.inputChars = opts.inputChars ?? 2000
  }

  session(id: string): RawSession {
    let s = this.sessions.get(id)
    if (!s) {
      s = { session: null, messages: new Map(), parts: new Map(), sent: new Set(), counters: { tools: 0, prompts: 0, firstAt: null } }
      this.sessions.set(id, s)
      while (this.sessions.size > MAX_SESSIONS) {
        const oldest = this.sessions.keys().next().value as string
        this.sessions.delete(oldest)
      }
    }
    return s
  }

  touch(s: RawSession, now: number): void {
    if (s.counters.firstAt === null) s.counters.firstAt = now
  }

  /** session.created / session.updated */
  onSession(info: any, now: number): void {
    if (!info?.id) return
    const s = this.session(info.id)
    if (!s.session) this.touch(s, now)
    s.session = info
  }

  /** message.updated */
  onMessage(info: any, now: number): void {
    if (!info?.id || !info.sessionID) return
    const s = this.session(info.sessionID)
    if (s.sent.has(info.id) && !s.messages.has(info.id)) return
    if (!s.messages.has(info.id)) {
      if (info.role === "user") s.counters.prompts += 1
      this.touch(s, now)
      while (s.messages.size >= MAX_BUFFERED_MESSAGES) {
        const oldest = s.messages.keys().next().value as string
        s.messages.delete(oldest)
        s.parts.delete(oldest)
      }
    }
    s.messages.set(info.id, info)
  }

  /** message.part.updated */
  onPart(part: any, now: number): void {
    if (!part?.id || !part.sessionID || !part.messageID) return
    const s = this.session(part.sessionID)
    if (s.sent.has(part.id)) return
    let parts = s.parts.get(part.messageID)
    if (!parts) s.parts.set(part.messageID, (parts = new Map()))
    const before = parts.get(part.id)
    if (finished(part) && !finished(before)) s.counters.tools += 1
    this.touch(s, now)
    parts.set(part.id, part)
  }

  /** message.part.delta (streamed text) */
  onDelta(props: any): void {
    const part = this.sessions.get(props?.sessionID)?.parts.get(props?.messageID)?.get(props?.partID)
    if (part && typeof props.field === "string" && typeof props.delta === "string") {
      part[props.field] = (typeof part[props.field] === "string" ? part[props.field] : "") + props.delta
    }
  }

  /** The texts a message's author wrote (synthetic and ignored parts left out, injected blocks cut). */
  static ownTexts(parts: any[]): string[] {
    return parts
      .filter((p) => isText(p) && !p.synthetic && !p.ignored)
      .map((p) => stripInjected(p.text).trim())
      .filter(Boolean)
  }

  /**
   * The settled, unsent events of a session, oldest first. `final` (the session went idle or failed): user prompts
   * are sent even when no answer was seen.
   */
  take(sessionID: string, opts: { final?: boolean } = {}): RawEvent[] {
    const s = this.sessions.get(sessionID)
    if (!s) return []
    const out: RawEvent[] = []
    if (s.session && !s.sent.has(sessionID)) {
      out.push({
        event_id: sessionID,
        session_id: sessionID,
        kind: "session",
        at: Number(s.session.time?.created) || 0,
        payload: { title: s.session.title ?? null, parent_id: s.session.parentID ?? null },
      })
    }
    const messages = [...s.messages.values()].sort((a, b) => (a.time?.created ?? 0) - (b.time?.created ?? 0) || (a.id < b.id ? -1 : 1))
    const answered = new Set(messages.filter((m) => m.role === "assistant").map((m) => m.parentID))
    messages.forEach((m, i) => {
      const parts = [...(s.parts.get(m.id)?.values() ?? [])]
      if (m.role === "user") {
        if (s.sent.has(m.id) || !parts.length) return
        if (!(opts.final || answered.has(m.id) || i < messages.length - 1)) return
        out.push(this.userPrompt(sessionID, m, parts))
        return
      }
      if (m.role !== "assistant") return
      for (const p of parts) {
        if (p?.type !== "tool" || s.sent.has(p.id) || !finished(p)) continue
        out.push(this.toolCall(sessionID, m, p))
      }
      if (s.sent.has(m.id)) return
      const done = Boolean(m.time?.completed) || Boolean(m.error)
      const running = parts.some((p) => p?.type === "tool" && p.state?.status !== "completed" && p.state?.status !== "error")
      if (!done || (running && !m.error)) return
      out.push(this.assistantMessage(sessionID, m, parts))
    })
    return out
  }

  private userPrompt(sessionID: string, m: any, parts: any[]): RawEvent {
    return {
      event_id: m.id,
      session_id: sessionID,
      kind: "user_prompt",
      at: Number(m.time?.created) || 0,
      payload: { text: RawBuffer.ownTexts(parts).join("\n\n"), compaction: parts.some((p) => p?.type === "compaction") },
    }
  }

  private toolCall(sessionID: string, m: any, p: any): RawEvent {
    const st = p.state ?? {}
    return {
      event_id: p.id,
      session_id: sessionID,
      kind: "tool_call",
      at: Number(st.time?.start) || Number(m.time?.created) || 0,
      payload: {
        message_id: m.id,
        tool: String(p.tool ?? "tool"),
        call_id: String(p.callID ?? ""),
        status: st.status,
        input: clipDeep(st.input ?? {}, this.inputChars),
        output: typeof st.output === "string" ? clip(st.output, this.outputChars) : "",
        error: typeof st.error === "string" ? clip(st.error, this.inputChars) : null,
        title: typeof st.title === "string" ? st.title : null,
        // bash ends "completed" whatever the command's exit status: that is in metadata.exit
        exit: typeof st.metadata?.exit === "number" ? st.metadata.exit : null,
      },
    }
  }

  private assistantMessage(sessionID: string, m: any, parts: any[]): RawEvent {
    return {
      event_id: m.id,
      session_id: sessionID,
      kind: "assistant_message",
      at: Number(m.time?.created) || 0,
      payload: {
        parent_id: m.parentID ?? null,
        completed: m.time?.completed ?? null,
        finish: m.finish ?? null,
        error: errorText(m.error),
        mode: m.mode ?? null,
        agent: m.agent ?? null,
        summary: m.summary === true,
        texts: RawBuffer.ownTexts(parts),
        steps: parts.filter((p) => p?.type === "step-start").length,
        files: parts.filter((p) => p?.type === "patch").flatMap((p) => (Array.isArray(p.files) ? p.files : [])),
      },
    }
  }

  /** After the daemon accepted them: never send these again; forget finished messages. */
  markSent(sessionID: string, ids: string[]): void {
    const s = this.sessions.get(sessionID)
    if (!s) return
    for (const id of ids) s.sent.add(id)
    while (s.sent.size > MAX_SENT_IDS) s.sent.delete(s.sent.values().next().value as string)
    for (const [id, m] of s.messages) {
      if (!s.sent.has(id)) continue
      const parts = [...(s.parts.get(id)?.values() ?? [])]
      if (m.role === "assistant" && parts.some((p) => p?.type === "tool" && !s.sent.has(p.id))) continue
      s.messages.delete(id)
      s.parts.delete(id)
    }
  }

  /** A flush went through: the thresholds count from zero again. */
  flushed(sessionID: string, now: number): void {
    const s = this.sessions.get(sessionID)
    if (!s) return
    const left = s.messages.size > 0
    s.counters = { tools: 0, prompts: 0, firstAt: left ? now : null }
  }

  drop(sessionID: string): void {
    this.sessions.delete(sessionID)
  }
}
