/**
 * The optional query model (`subcortical` option): any OpenAI-compatible chat endpoint (Ollama's included) turns the
 * HUD input into `query_expansion` phrases and `entities`, merged before the deterministic ones; a slow, failing or
 * invalid answer falls back to the deterministic derivation and backs the model off.
 */
import type { Env, SubcorticalConfig } from "./config.ts"
import { type Derived, type Deriver, MAX_ENTITIES, MAX_PHRASES, deriveQuery } from "./derive.ts"
import { Health } from "./health.ts"
import type { Log } from "./log.ts"
import type { HudInput } from "./messages.ts"
import { clip, dedupe, oneLine } from "./text.ts"

/**
 * The system prompt of the optional query model. It sees what `deriveQuery` sees (the user's latest message and
 * the last tool calls) and answers what to look up in the project's memory.
 */
export const SUBCORTICAL_PROMPT = [
  "You write search queries for a coding agent's long-term project memory: decisions and their reasons, rejected",
  "alternatives, conventions, gotchas, preferences and facts recorded in earlier sessions of this project.",
  "You are given the user's latest message and the agent's most recent tool calls (oldest first). Work out what the",
  "agent is doing right now and which past knowledge would help with that step.",
  "Answer with one JSON object and nothing else:",
  '{"query_expansion": ["..."], "entities": ["..."]}',
  "- query_expansion: 2 to 8 short phrases (3 to 12 words each) describing the current step and what a helpful",
  "  memory would be about: the task, the component, the problem, the decision or convention likely involved.",
  "  Use the project's own words, plus a synonym where an earlier note may have phrased it differently.",
  "- entities: up to 12 exact names from the input: libraries, tools, commands, files, functions, config keys,",
  "  error names. Copy them verbatim; do not invent names.",
  "No explanations, no markdown, no code fences.",
].join("\n")

const SUB_MAX_PHRASES = 8
const SUB_MAX_ENTITIES = 16
const SUB_PHRASE_CHARS = 160
const SUB_ENTITY_CHARS = 100
// A background re-try of a backed-off model is not in any call's path: it may take this long (e.g. Ollama loading it).
const SUB_PROBE_TIMEOUT_MS = 15_000

/** What the last call did with the model (traced per call). */
export type SubcorticalState = { health: Health; calls: number; last: Record<string, unknown> }
export type Subcortical = { derive: (input: HudInput) => Promise<Derived>; state: SubcorticalState }

/** The user message sent to the query model: the same input `deriveQuery` reads, cut to `maxChars` in all. */
export function subcorticalMessage(input: HudInput, maxChars = 4000): string {
  const user = clip(input.userText.trim(), Math.max(100, Math.floor(maxChars / 2)))
  const lines = ["User's latest message:", user || "(none)", "", "Recent tool calls (oldest first):"]
  if (!input.tools.length) lines.push("(none)")
  input.tools.forEach((t, i) => {
    const args = Object.entries(t.args)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(" ")
    lines.push(`${i + 1}. ${t.tool}${args ? ` ${args}` : ""}${t.error ? " [failed]" : ""}`)
    const out = oneLine(t.output)
    if (out) lines.push(`   ${t.error ? "error" : "result"}: ${clip(out, 300)}`)
  })
  return clip(lines.join("\n"), maxChars)
}

/**
 * The model's answer (the message content) as a Derived, validated: one JSON object (a ```json fence or text
 * around it is tolerated) with `query_expansion` (an array of strings, or one string of `;`-separated phrases)
 * and/or `entities` (an array of strings). Non-strings are dropped, whitespace collapsed, phrases cut to 160
 * characters, entities longer than 100 dropped, at most 8 phrases and 16 entities. Throws when it is not that.
 */
export function parseSubcortical(content: unknown): Derived {
  if (typeof content !== "string" || !content.trim()) throw new Error("empty answer")
  let text = content.trim()
  const a = text.indexOf("{")
  const b = text.lastIndexOf("}")
  if (a < 0 || b < a) throw new Error("no JSON object in the answer")
  text = text.slice(a, b + 1)
  let data
  try {
    data = JSON.parse(text)
  } catch {
    throw new Error("invalid JSON in the answer")
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) throw new Error("the answer is not a JSON object")
  let qe = data.query_expansion
  if (typeof qe === "string") qe = qe.split(/[;\n]/)
  const ents = data.entities
  if (!Array.isArray(qe) && !Array.isArray(ents)) throw new Error("the answer has neither query_expansion nor entities")
  if ((qe !== undefined && !Array.isArray(qe)) || (ents !== undefined && ents !== null && !Array.isArray(ents)))
    throw new Error("query_expansion and entities must be arrays of strings")
  const strings = (items: unknown): string[] =>
    (Array.isArray(items) ? items : [])
      .filter((x): x is string => typeof x === "string")
      .map((x) => oneLine(x.replace(/[\u0000-\u001f\u007f]/g, " ")))
      .filter(Boolean)
  return {
    query_expansion: dedupe(strings(qe).map((p) => clip(p, SUB_PHRASE_CHARS))).slice(0, SUB_MAX_PHRASES),
    entities: dedupe(strings(ents).filter((e) => e.length <= SUB_ENTITY_CHARS)).slice(0, SUB_MAX_ENTITIES),
  }
}

/**
 * The query sent to /retrieve with a model answer: the model's phrases and entities first, then the
 * deterministic ones, deduplicated (case-insensitively) and capped (8 phrases, the daemon uses no more; 24 entities).
 */
export function mergeDerived(model: Derived, base: Derived): Derived {
  const merged: Derived = {
    query_expansion: dedupe([...model.query_expansion, ...base.query_expansion]).slice(0, MAX_PHRASES),
    entities: dedupe([...model.entities, ...base.entities]).slice(0, MAX_ENTITIES),
  }
  // the model's phrases come first: the daemon takes its first phrase for the request, as without a count
  if (!model.query_expansion.length && base.request_phrases !== undefined) merged.request_phrases = base.request_phrases
  return merged
}

/**
 * One chat-completions call to an OpenAI-compatible endpoint; the validated answer. Throws an Error whose message
 * never contains the API key.
 */
export async function askSubcortical(sc: SubcorticalConfig, input: HudInput, timeoutMs: number, env: Env = process.env): Promise<Derived> {
  const key = sc.apiKeyEnv ? (env[sc.apiKeyEnv] ?? "").trim() : ""
  const redact = (msg: string) => (key ? msg.split(key).join("[redacted]") : msg)
  const body: Record<string, unknown> = {
    model: sc.model,
    messages: [
      { role: "system", content: SUBCORTICAL_PROMPT },
      { role: "user", content: subcorticalMessage(input, sc.inputChars) },
    ],
    temperature: 0,
    max_tokens: sc.maxTokens,
    stream: false,
  }
  if (sc.jsonMode) body.response_format = { type: "json_object" }
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  let status = 0
  let text = ""
  try {
    const res = await fetch(`${sc.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
      signal: controller.signal,
    })
    status = res.status
    text = await res.text()
  } catch (e) {
    const err = e as any
    if (controller.signal.aborted) throw new Error(`no answer within ${timeoutMs} ms`)
    throw new Error(redact(`unreachable (${err?.cause?.code ?? err?.code ?? err?.message ?? err})`))
  } finally {
    clearTimeout(timer)
  }
  let data = null
  try {
    data = text ? JSON.parse(text) : null
  } catch {
    data = null
  }
  if (status < 200 || status >= 300) {
    const detail = data?.error?.message ?? data?.error ?? ""
    throw new Error(redact(`HTTP ${status}${detail ? `: ${clip(oneLine(String(detail)), 160)}` : ""}`))
  }
  if (!data) throw new Error("the endpoint did not answer JSON")
  try {
    return parseSubcortical(data?.choices?.[0]?.message?.content)
  } catch (e) {
    throw new Error(redact(e instanceof Error ? e.message : String(e)))
  }
}

/**
 * The model-backed derivation: asks the query model (within `timeoutMs`) and merges its answer before the
 * deterministic one; on a timeout, an HTTP error or an invalid answer, that call uses the deterministic
 * derivation alone and the model is skipped (no I/O) for a window doubling from `backoffMs` to `backoffMaxMs`
 * (one warning per outage). Once a window has passed, the next call still goes without the model while it is
 * re-tried in the background (with a longer timeout): a slow or dead model delays at most one call.
 */
export function createSubcortical(
  sc: SubcorticalConfig,
  opts: { fallback?: Deriver; now?: () => number; log?: Log; env?: Env } = {},
): Subcortical {
  const fallback = opts.fallback ?? deriveQuery
  const now = opts.now ?? (() => Date.now())
  const log = opts.log ?? (() => {})
  const env = opts.env ?? process.env
  const health = new Health(sc.backoffMs, Math.max(sc.backoffMs, sc.backoffMaxMs))
  const state: SubcorticalState = { health, calls: 0, last: {} }

  const failed = (reason: string) => {
    if (health.fail(reason, now()))
      log("warn", `codememory: query model ${sc.model} unavailable (${reason}); using the built-in query derivation, retrying later`)
  }
  const worked = () => {
    if (health.ok(true)) log("info", `codememory: query model ${sc.model} answering again`)
  }

  const probe = (input: HudInput) => {
    health.checking = true
    state.calls += 1
    askSubcortical(sc, input, Math.max(sc.timeoutMs, SUB_PROBE_TIMEOUT_MS), env)
      .then(worked, (e) => failed(e instanceof Error ? e.message : String(e)))
      .finally(() => {
        health.checking = false
      })
  }

  const derive = async (input: HudInput): Promise<Derived> => {
    const base = await fallback(input)
    const started = performance.now()
    if (!input.userText.trim() && !input.tools.length) {
      state.last = { model: "skipped", reason: "nothing to read" }
      return base
    }
    if (health.down) {
      if (health.dueForCheck(now())) probe(input)
      state.last = { model: "skipped", reason: health.reason }
      return base
    }
    state.calls += 1
    try {
      const answer = await askSubcortical(sc, input, sc.timeoutMs, env)
      worked()
      state.last = { model: "used", phrases: answer.query_expansion.length, entities: answer.entities.length, ms: performance.now() - started }
      return mergeDerived(answer, base)
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e)
      failed(reason)
      state.last = { model: "failed", reason, ms: performance.now() - started }
      return base
    }
  }
  return { derive, state }
}
