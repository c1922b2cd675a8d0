/**
 * The `autoStartDaemon` option: when no daemon runs (no daemon.json, or its port refuses), `codememory daemon start`,
 * detached and never awaited (calls go on without memory meanwhile); at most one attempt per autoStartRetryMs.
 */
import { spawn } from "node:child_process"

import type { Config } from "./config.ts"
import { DaemonError } from "./daemon.ts"
import type { Log, Trace } from "./log.ts"

export type AutoStartState = { attempts: number; running: boolean; lastAt: number; warned: boolean; exit: number | null }

export class AutoStart {
  readonly state: AutoStartState = { attempts: 0, running: false, lastAt: -Infinity, warned: false, exit: null }
  private readonly config: Config
  private readonly now: () => number
  private readonly log: Log
  private readonly trace: Trace
  /** the start succeeded (`daemon start` exits once the daemon answers /health) */
  private readonly onStarted: () => void

  constructor(config: Config, now: () => number, log: Log, trace: Trace, onStarted: () => void) {
    this.config = config
    this.now = now
    this.log = log
    this.trace = trace
    this.onStarted = onStarted
  }

  /** After a failed daemon request: start the daemon when `e` says none runs (and the option is on, and it is time). */
  maybeStart(e: unknown): void {
    const { config, state } = this
    if (!config.autoStartDaemon || !(e instanceof DaemonError) || !e.absence) return
    if (state.running || (state.attempts > 0 && this.now() - state.lastAt < config.autoStartRetryMs)) return
    state.running = true
    state.attempts += 1
    state.lastAt = this.now()
    // Off the call path: the spawn itself (fork/exec) happens after this call has gone on.
    setImmediate(() => this.spawn(config.codememoryBin))
  }

  private spawn(bin: string): void {
    this.log("info", `codememory: the daemon is not running; starting it (${bin} daemon start)`)
    let child
    try {
      child = spawn(bin, ["daemon", "start"], { detached: true, stdio: "ignore", env: process.env })
    } catch (err) {
      this.failed(bin, err instanceof Error ? err.message : String(err))
      return
    }
    child.on("error", (err) => this.failed(bin, (err as any)?.code ?? err.message))
    child.on("exit", (code, signal) => {
      this.state.exit = code
      if (code !== 0) return this.failed(bin, signal ? `killed by ${signal}` : `exit ${code}`)
      this.state.running = false
      this.trace({ hook: "autostart", bin, started: true })
      this.onStarted()
    })
    child.unref()
  }

  private failed(bin: string, why: string): void {
    this.state.running = false
    this.trace({ hook: "autostart", bin, error: why })
    if (this.state.warned) return
    this.state.warned = true
    this.log("warn", `codememory: could not start the daemon (${bin} daemon start: ${why}); start it by hand: codememory daemon start`)
  }
}
