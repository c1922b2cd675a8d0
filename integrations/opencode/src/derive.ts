/**
 * The default, deterministic derivation of `/retrieve`'s `query_expansion` and `entities` from what the agent is
 * doing (the HUD input): the current request's words, the tool calls made since it and their errors, the names in
 * all of that — the request first.
 */
import type { HudInput } from "./messages.ts"
import { clip, dedupe } from "./text.ts"

/**
 * What `/retrieve` is asked with. `request_phrases`: how many leading phrases are the user's request (a long request
 * is two; 0 when the user text is empty); without it the daemon takes the first phrase for the request.
 */
export type Derived = { query_expansion: string[]; entities: string[]; request_phrases?: number }

/** A derivation: `deriveQuery`, or anything of its signature (`createHooks(ctx, options, { derive })`). */
export type Deriver = (input: HudInput) => Derived | Promise<Derived>

// The daemon uses no more than 8 phrases.
export const MAX_PHRASES = 8
export const MAX_ENTITIES = 24
// What the tool calls may add after the request's own words: enough for the files and errors of the step, not so
// much that they outvote the request.
export const MAX_TOOL_PHRASES = 4
export const MAX_TOOL_ENTITIES = 12

const PATH_RE = /(?:~|\.{1,2})?\/?(?:[\w@.-]+\/)+[\w@.-]+|\b[\w-]+\.(?:[a-z][a-z0-9]{0,7})\b/g
const ERROR_RE = /\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Fault)\b|\b(?:E[A-Z]{3,}|ERR_[A-Z_]+)\b/g
const CODE_RE = /`([^`\n]{2,80})`/g
const IDENT_RE = /\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z][\w]*(?:\.[a-z_][\w]*){1,4}\(\)?)\b/g
const NOT_FILES = new Set(["e.g", "i.e", "etc", "vs"])
const FILE_EXT = /\.(?:[a-z][a-z0-9]{0,7})$/

/**
 * Entities in a text: file paths, error names, `code spans`, and identifiers (camelCase, PascalCase,
 * snake_case, dotted.names), in order of appearance.
 */
export function extractEntities(text: string): string[] {
  if (!text) return []
  const hits: Array<[number, string]> = []
  const pathSpans: Array<[number, number]> = []
  for (const m of text.matchAll(PATH_RE)) {
    const v = m[0].replace(/[.,:;]+$/, "")
    if (v.length < 3 || NOT_FILES.has(v.toLowerCase()) || /^\d+(\.\d+)*$/.test(v)) continue
    if (!v.includes("/") && !FILE_EXT.test(v)) continue
    const start = m.index ?? 0
    if (/[a-z]:\/*$/i.test(text.slice(Math.max(0, start - 3), start))) continue // inside a URL
    hits.push([start, v])
    pathSpans.push([start, start + m[0].length])
  }
  const inPath = (i: number) => pathSpans.some(([a, b]) => i >= a && i < b)
  for (const re of [ERROR_RE, IDENT_RE])
    for (const m of text.matchAll(re)) if (!inPath(m.index ?? 0)) hits.push([m.index ?? 0, m[0]])
  for (const m of text.matchAll(CODE_RE)) hits.push([m.index ?? 0, m[1].trim()])
  hits.sort((a, b) => a[0] - b[0])
  return dedupe(hits.map((h) => h[1]))
}

/** Lines of a tool result that name a failure (first two), e.g. "ModuleNotFoundError: No module named x". */
function errorLines(output: string): string[] {
  return output
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /error|exception|failed|failure|traceback|not found|denied|panic/i.test(l))
    .slice(0, 2)
    .map((l) => clip(l, 160))
}

/**
 * The default derivation of `/retrieve`'s `query_expansion` and `entities` from the HUD input, for the step at hand:
 * the current request first — its first sentences are the lead phrase, the rest of it the next phrase, both counted
 * (`request_phrases`) so the daemon weighs them as much as all the phrases together and holds what they find at the
 * turn's later calls (retrieval/proactive.py) — then at most MAX_TOOL_PHRASES phrases
 * from the tool calls made since that request, newest first (name + key arguments, then the error lines of a failed
 * or failing call). Entities: the request's paths, identifiers and error names first, then at most
 * MAX_TOOL_ENTITIES from the tool calls. The previous requests' tool calls are not part of the input (hudInput):
 * they were another step, and their words pushed the current question's memories out.
 *
 * This is the extension point for a model-based ("subcortical") derivation: anything with this signature
 * can replace it (`createHooks(ctx, options, { derive })`); the `subcortical` option merges a model's answer
 * before it (see `createSubcortical`).
 */
export function deriveQuery(input: HudInput): Derived {
  const phrases: string[] = []
  const user = input.userText.replace(/\s+/g, " ").trim()
  if (user) {
    const sentences = user
      .split(/(?<=[.!?])\s+|\n+/)
      .map((s) => s.trim())
      .filter((s) => s.length > 2)
    phrases.push(clip(sentences.slice(0, 3).join(" "), 300))
    if (sentences.length > 3) phrases.push(clip(sentences.slice(3, 8).join(" "), 300))
  }
  const tools = [...input.tools].reverse()
  const toolPhrases: string[] = []
  for (const t of tools) {
    const args = Object.values(t.args).join(" ")
    toolPhrases.push(clip(`${t.tool} ${args}`.trim(), 200))
    for (const line of errorLines(t.output)) toolPhrases.push(line)
  }
  const toolEntities = extractEntities(tools.flatMap((t) => [...Object.values(t.args), ...errorLines(t.output)]).join("\n"))
  for (const t of tools) {
    const p = t.args.filePath ?? t.args.path
    if (p) {
      const base = p.split("/").pop()
      if (base && base !== p) toolEntities.push(base)
    }
  }
  const request = dedupe(phrases.filter(Boolean))
  return {
    query_expansion: dedupe([...request, ...dedupe(toolPhrases.filter(Boolean)).slice(0, MAX_TOOL_PHRASES)]).slice(0, MAX_PHRASES),
    request_phrases: Math.min(request.length, MAX_PHRASES),
    entities: dedupe([...extractEntities(user), ...dedupe(toolEntities).slice(0, MAX_TOOL_ENTITIES)])
      .filter((e) => e.length <= 200)
      .slice(0, MAX_ENTITIES),
  }
}
