/**
 * The plugin's settings: OpenCode's options (the second element of a `["path", {options}]` entry in opencode.json's
 * "plugin" list) over the defaults, each number clamped to a sane range; paths follow codememory's (XDG_STATE_HOME).
 */
import { homedir } from "node:os"
import { isAbsolute, join } from "node:path"

// The plugin's id in OpenCode. `codememory init` recognises its own plugin file by this very line
// (`_PLUGIN_MARK` in src/codememory/install/plan.py): keep it, spelled like this, in the bundle.
export const PLUGIN_ID = "codememory"

export const OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1"

export type Env = Record<string, string | undefined>

export interface Config {
  /** fixed base URL (e.g. http://127.0.0.1:9473); else from daemon.json */
  daemonUrl: string | null
  /** fixed port on 127.0.0.1; else from daemon.json */
  port: number | null
  /** codememory's state folder (daemon.json, token) */
  stateDir: string
  /** the bearer token file */
  tokenFile: string
  /** the project (default: OpenCode's directory) */
  projectRoot: string | null
  /** per /retrieve call */
  timeoutMs: number
  /** per /memory/recent call */
  coldStartTimeoutMs: number
  /** per recall-tool call */
  toolTimeoutMs: number
  /** per background /health check */
  healthTimeoutMs: number
  /** first /health re-check after a failure */
  retryMinMs: number
  /** backoff ceiling */
  retryMaxMs: number
  /** completed tool calls in the HUD input */
  toolWindow: number
  /** tool result characters kept per call */
  resultChars: number
  /** memories per HUD */
  maxMemories: number
  /** new (not pinned) memories per HUD */
  maxNew: number
  /** HUD token budget (daemon's estimate) */
  tokenBudget: number
  /**
   * codememory's share of one LLM call (tool definitions + cold-start block + HUD); null: the project's
   * `[context] call_budget_tokens` (from the daemon), else 2,000
   */
  callBudgetTokens: number | null
  /** inject the per-call HUD */
  hud: boolean
  /**
   * show the turn's block at the turn's first call (on by default). Off, the block is planned there and shown from
   * the turn's second call on: that call (no tool call yet) is mostly the agent looking around (`git status`, `ls`,
   * the file the user named), which in the labelled scenarios needed a memory in 45 of 142 turns. Measured with each
   * scenario left out (benchmarks/README.md, "where the unneeded memories come from"), off raised the share of steps
   * needing nothing left blank on one scenario and lost recall on all three: not the default.
   */
  turnBlockFirstCall: boolean
  /**
   * memories the turn's block adds to the cold-start block's (the request's first ones; a later call's HUD has its own
   * maxNew). The block is carried to every call of its turn, so each memory in it is counted at every step: replayed
   * on three scenarios (benchmarks/research/hud_policy.py, `top2`), two instead of up to three raised precision on all
   * three at equal recall on two (benchmarks/README.md, "where the unneeded memories come from"); on the blind kelpie
   * scenario two gave precision +0.03 for recall -0.04. Three was the default again for a while: in a real session
   * the user's stated preference lost its place to a lesser memory, the assistant's narration next to a failure kept
   * as a lesson (tests/e2e/test_e2e_extraction_speakers.py); extraction no longer keeps narration (text/mood.py in
   * the Python package), the preference keeps its place with two, and two is the default.
   */
  turnBlockMemories: number
  /**
   * also ask the organisation's memory (the daemon's `[remote]` Milvus) for the HUD: its memories come after the
   * project's, each line saying which project it is from. Off by default: it adds a network query to every call.
   */
  orgMemory: boolean
  /** per /retrieve call when orgMemory is on (the remote query comes on top of the local one) */
  orgTimeoutMs: number
  /** inject the cold-start block */
  coldStart: boolean
  /** memories in the cold-start block */
  coldStartLimit: number
  /** cold-start token budget */
  coldStartTokens: number
  /** register the recall tools */
  tools: boolean
  /** append one JSON line per hook call (debugging, benchmarks) */
  traceFile: string | null
  /** stream raw events (prompts, answers, tool calls) to the daemon (live capture) */
  rawEvents: boolean
  /** per raw-event request */
  rawTimeoutMs: number
  /** first backoff window after a failed raw-event request (doubles) */
  rawBackoffMs: number
  /** re-run the raw-event preflight this often */
  rawStatusCheckMs: number
  /** largest raw-event request body (also capped by the daemon's limit) */
  rawBatchBytes: number
  /** tool result characters sent per tool call */
  rawOutputChars: number
  /** flush a session after this many finished tool calls */
  flushToolCalls: number
  /** ... or this many prompts */
  flushPrompts: number
  /** ... or when its oldest unsent event is this old */
  flushMaxAgeMs: number
  /** the optional query model (null: deterministic derivation only) */
  subcortical: SubcorticalConfig | null
  /** run `codememory daemon start` when no daemon is running */
  autoStartDaemon: boolean
  /** the codememory executable (for autoStartDaemon) */
  codememoryBin: string
  /** at most one start attempt per this window */
  autoStartRetryMs: number
}

export interface SubcorticalConfig {
  /** an OpenAI-compatible API base (…/v1); POST {baseURL}/chat/completions */
  baseURL: string
  /** the model name */
  model: string
  /** the environment variable holding the API key (sent as a bearer token) */
  apiKeyEnv: string | null
  /** per model call in the LLM call path; slower counts as a failure */
  timeoutMs: number
  /** max_tokens of the answer */
  maxTokens: number
  /** characters of conversation sent to the model */
  inputChars: number
  /** send response_format {type: "json_object"} */
  jsonMode: boolean
  /** first window without the model after a failure (doubles) */
  backoffMs: number
  /** backoff ceiling */
  backoffMaxMs: number
}

/** The settings from OpenCode's options and the environment. */
export function resolveConfig(options: Record<string, unknown> | undefined = {}, env: Env = process.env): Config {
  const o = options ?? {}
  const xdg = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : null
  const stateDir = str(o.stateDir) ?? join(xdg ?? join(env.HOME || homedir(), ".local", "state"), "codememory")
  return {
    daemonUrl: str(o.daemonUrl)?.replace(/\/+$/, "") ?? null,
    port: int(o.port, 0, 1, 65535) || null,
    stateDir,
    tokenFile: str(o.tokenFile) ?? join(stateDir, "token"),
    projectRoot: str(o.projectRoot),
    // CODEMEMORY_PLUGIN_TIMEOUT_MS: for a machine too busy to answer in 300 ms (benchmarks measuring what the HUD shows)
    timeoutMs: int(o.timeoutMs ?? env.CODEMEMORY_PLUGIN_TIMEOUT_MS, 300, 10, 60_000),
    coldStartTimeoutMs: int(o.coldStartTimeoutMs, 1000, 10, 60_000),
    toolTimeoutMs: int(o.toolTimeoutMs, 10_000, 100, 300_000),
    healthTimeoutMs: int(o.healthTimeoutMs, 500, 10, 60_000),
    retryMinMs: int(o.retryMinMs, 2_000, 0, 3_600_000),
    retryMaxMs: int(o.retryMaxMs, 60_000, 0, 3_600_000),
    toolWindow: int(o.toolWindow, 5, 0, 50),
    resultChars: int(o.resultChars, 300, 0, 10_000),
    maxMemories: int(o.maxMemories, 4, 1, 50),
    maxNew: int(o.maxNew, 3, 1, 50),
    tokenBudget: int(o.tokenBudget, 1200, 1, 100_000),
    callBudgetTokens: optionalInt(o.callBudgetTokens, 0, 1_000_000),
    hud: o.hud !== false,
    turnBlockFirstCall: o.turnBlockFirstCall !== false,
    turnBlockMemories: int(o.turnBlockMemories, 2, 1, 50),
    orgMemory: o.orgMemory === true,
    orgTimeoutMs: int(o.orgTimeoutMs, 2000, 10, 60_000),
    coldStart: o.coldStart !== false,
    coldStartLimit: int(o.coldStartLimit, 8, 1, 50),
    coldStartTokens: int(o.coldStartTokens, 400, 1, 20_000),
    tools: o.tools !== false,
    traceFile: str(o.traceFile) ?? (env.CODEMEMORY_PLUGIN_TRACE || null),
    // Off in codememory's own `opencode run` calls (extraction), which set CODEMEMORY_NO_CAPTURE.
    rawEvents: o.rawEvents !== false && ["", "0", "false", "no"].includes(String(env.CODEMEMORY_NO_CAPTURE ?? "").trim().toLowerCase()),
    rawTimeoutMs: int(o.rawTimeoutMs, 3000, 100, 60_000),
    rawBackoffMs: int(o.rawBackoffMs ?? env.CODEMEMORY_RAW_EVENTS_BACKOFF_MS, 5000, 0, 3_600_000),
    rawStatusCheckMs: int(o.rawStatusCheckMs ?? env.CODEMEMORY_RAW_EVENTS_STATUS_CHECK_MS, 60_000, 0, 86_400_000),
    rawBatchBytes: int(o.rawBatchBytes, 256_000, 4096, 10_000_000),
    rawOutputChars: int(o.rawOutputChars, 4000, 0, 100_000),
    flushToolCalls: int(o.flushToolCalls, 50, 1, 100_000),
    flushPrompts: int(o.flushPrompts, 15, 1, 100_000),
    flushMaxAgeMs: int(o.flushMaxAgeMs, 600_000, 1000, 86_400_000),
    subcortical: resolveSubcortical(o.subcortical),
    autoStartDaemon: o.autoStartDaemon === true,
    codememoryBin: str(o.codememoryBin) ?? "codememory",
    autoStartRetryMs: int(o.autoStartRetryMs, 600_000, 0, 86_400_000),
  }
}

/** The `subcortical` option: on when it names a `model` (the base URL defaults to a local Ollama); null otherwise. */
export function resolveSubcortical(v: unknown): SubcorticalConfig | null {
  if (!v || typeof v !== "object") return null
  const o = v as Record<string, unknown>
  const model = str(o.model)
  if (!model || o.enabled === false) return null
  return {
    baseURL: (str(o.baseURL) ?? str(o.baseUrl) ?? OLLAMA_BASE_URL).replace(/\/+$/, ""),
    model,
    apiKeyEnv: str(o.apiKeyEnv),
    timeoutMs: int(o.timeoutMs, 800, 50, 60_000),
    maxTokens: int(o.maxTokens, 256, 16, 8192),
    inputChars: int(o.inputChars, 4000, 200, 100_000),
    jsonMode: o.jsonMode !== false,
    backoffMs: int(o.backoffMs, 30_000, 0, 3_600_000),
    backoffMaxMs: int(o.backoffMaxMs, 600_000, 0, 86_400_000),
  }
}

/** A non-blank string option, trimmed; null otherwise. */
function str(v: unknown): string | null {
  return typeof v === "string" && v.trim() ? v.trim() : null
}

/** A number option with no default: rounded and clamped to [lo, hi]; null when it is not a number. */
function optionalInt(v: unknown, lo: number, hi: number): number | null {
  const n = int(v, NaN, lo, hi)
  return Number.isNaN(n) ? null : n
}

/** A number option (a numeric string too), rounded and clamped to [lo, hi]; `dflt` when it is not a number. */
function int(v: unknown, dflt: number, lo: number, hi: number): number {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() ? Number(v) : NaN
  return Number.isFinite(n) ? Math.min(hi, Math.max(lo, Math.round(n))) : dflt
}
