/** Where the plugin reports: OpenCode's log (warnings users see) and the optional trace file (one JSON line per call). */
import { appendFileSync } from "node:fs"

import type { PluginInput } from "@opencode-ai/plugin"

import { PLUGIN_ID } from "./config.ts"

export type Log = (level: "info" | "warn", message: string) => void
export type Trace = (entry: Record<string, unknown>) => void

/** OpenCode's log (`service: codememory`); never throws nor rejects: logging must never break a call. */
export function openCodeLog(ctx: PluginInput | undefined): Log {
  return (level, message) => {
    try {
      const p = ctx?.client?.app?.log?.({ body: { service: PLUGIN_ID, level, message } })
      if (p && typeof p.catch === "function") p.catch(() => {})
    } catch {
      /* logging must never break a call */
    }
  }
}

/** One JSON line per entry appended to `traceFile` (nothing without one); best effort. */
export function tracer(traceFile: string | null): Trace {
  return (entry) => {
    if (!traceFile) return
    try {
      appendFileSync(traceFile, JSON.stringify({ t: new Date().toISOString(), ...entry }) + "\n")
    } catch {
      /* tracing is best effort */
    }
  }
}
