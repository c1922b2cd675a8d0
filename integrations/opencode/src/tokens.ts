/**
 * The one token estimate, as codememory counts (src/codememory/text/tokens.py): a text of n characters (code points,
 * as Python counts them) costs ⌈n / 4⌉ tokens. No tokenizer: the model behind OpenCode is unknown, and every budget
 * built on this should err towards spending less. The plugin counts what it adds to an LLM call with it: its tool
 * definitions (as OpenCode sends them), the cold-start block and the HUD.
 */

export const CHARS_PER_TOKEN = 4

/** Code points, not UTF-16 units: the same length Python's len() gives. */
export function codePoints(text: string): number {
  let n = 0
  for (const _ of text) n++
  return n
}

/** Tokens `text` costs, with `framingChars` more characters shown around it: ⌈characters / 4⌉. */
export function estimateTokens(text: string | null | undefined, framingChars = 0): number {
  const n = (text ? codePoints(text) : 0) + framingChars
  return n <= 0 ? 0 : Math.ceil(n / CHARS_PER_TOKEN)
}

/** A tool the plugin registers, as far as its size goes (OpenCode's ToolDefinition). */
export type SizedTool = { description?: string; args?: Record<string, unknown> }

/**
 * What the tool definitions cost in every LLM call: each one as OpenCode sends it to an OpenAI-compatible API,
 * `{"type":"function","function":{"name","description","parameters"}}` with the arguments' JSON Schema (zod's
 * `toJSONSchema` of the argument object, input side, which is what OpenCode 1.18 sends), as compact JSON. `z` is the
 * zod the tools were built with; without `toJSONSchema` each argument counts its description and a fixed 64
 * characters of schema (an estimate, reported as such by the caller).
 */
export function toolDefinitionTokens(tools: Record<string, SizedTool> | null | undefined, z: any): { tokens: number; exact: boolean } {
  let chars = 0
  let exact = true
  for (const [name, def] of Object.entries(tools ?? {})) {
    let parameters: unknown = null
    if (z && typeof z.toJSONSchema === "function" && typeof z.object === "function") {
      try {
        parameters = z.toJSONSchema(z.object(def.args ?? {}), { io: "input" })
      } catch {
        parameters = null
      }
    }
    if (parameters === null) {
      exact = false
      parameters = Object.fromEntries(Object.entries(def.args ?? {}).map(([k, v]: [string, any]) => [k, `${v?.description ?? ""}${" ".repeat(64)}`]))
    }
    chars += codePoints(JSON.stringify({ type: "function", function: { name, description: def.description ?? "", parameters } }))
  }
  return { tokens: chars <= 0 ? 0 : Math.ceil(chars / CHARS_PER_TOKEN), exact }
}
