/**
 * The budget of one LLM call: codememory's whole share of it (its tool definitions, the cold-start block, the HUD)
 * stays within `callBudgetTokens` (the plugin option, else the project's `[context] call_budget_tokens` as the daemon
 * reports it, else 2,000), counted with the one estimate (tokens.ts). The tool definitions are fixed (sent on every
 * call); the cold-start block (first call only) takes what it needs up to `coldStartTokens`; the turn's block (the
 * request's memories, in every call of the turn) what is left, up to `tokenBudget`; a later call's HUD what is left
 * then: it is the part that shrinks first.
 */
import type { MemoryItem } from "./render.ts"
import { estimateTokens } from "./tokens.ts"

export const DEFAULT_CALL_BUDGET = 2000
// Room for less than one short memory line (`- [mem_…] (fact) …`) is not worth asking the daemon for.
export const MIN_LINE_TOKENS = 8

export class CallBudget {
  /** the project's setting, from the daemon's last /retrieve answer */
  project: number | null = null

  /** the plugin's `callBudgetTokens` option (wins over the project's setting) */
  readonly option: number | null
  /** what the plugin's tool definitions cost in every call */
  readonly toolTokens: number

  constructor(option: number | null, toolTokens: number) {
    this.option = option
    this.toolTokens = toolTokens
  }

  get total(): number {
    return this.option ?? this.project ?? DEFAULT_CALL_BUDGET
  }

  /** Remember the project's budget from a daemon answer (`call_budget_tokens`). */
  learn(answer: any): void {
    const n = answer?.call_budget_tokens
    if (typeof n === "number" && Number.isFinite(n) && n >= 0) this.project = Math.round(n)
  }

  /** Tokens a block may still take in a call that already carries `used` tokens of blocks (besides the tools). */
  left(used = 0): number {
    return Math.max(0, this.total - this.toolTokens - used)
  }
}

/**
 * The longest prefix of `memories` whose rendering fits `allowance` tokens (the daemon's own estimate leaves out the
 * block's framing and categories, so the rendered text is what is measured): memories are dropped from the end (the
 * lowest ranked). `text` is null when not even one fits (no empty block).
 */
export function fitBlock(
  memories: MemoryItem[],
  render: (memories: MemoryItem[]) => string | null,
  allowance: number,
): { text: string | null; shown: MemoryItem[]; tokens: number } {
  for (let n = memories.length; n > 0; n--) {
    const shown = memories.slice(0, n)
    const text = render(shown)
    if (text === null) continue
    const tokens = estimateTokens(text)
    if (tokens <= allowance) return { text, shown, tokens }
  }
  return { text: null, shown: [], tokens: 0 }
}
