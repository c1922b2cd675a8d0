/**
 * The daemon's availability as the hooks see it (fail-open): a failed call raises the flag (one warning per outage in
 * OpenCode's log) and pauses memory; while it is down, calls skip the daemon (no I/O) and /health is re-checked in the
 * background with a backoff; a call that works lowers the flag. It also owns the optional daemon autostart.
 */
import { AutoStart } from "./autostart.ts"
import type { Config } from "./config.ts"
import { request } from "./daemon.ts"
import { Health } from "./health.ts"
import type { Log, Trace } from "./log.ts"

export class DaemonWatch {
  readonly health: Health
  readonly autoStart: AutoStart
  private readonly config: Config
  private readonly now: () => number
  private readonly log: Log

  constructor(config: Config, now: () => number, log: Log, trace: Trace) {
    this.config = config
    this.now = now
    this.log = log
    this.health = new Health(config.retryMinMs, config.retryMaxMs)
    this.autoStart = new AutoStart(config, now, log, trace, () => {
      // Started: look now instead of at the end of the backoff.
      if (this.health.down) {
        this.health.nextCheckAt = 0
        this.checkHealth()
      }
    })
  }

  /** A daemon call failed: raise the flag (logged once per outage), maybe start the daemon. Returns the reason. */
  failed(e: unknown): string {
    const reason = e instanceof Error ? e.message : String(e)
    if (this.health.fail(reason, this.now())) this.log("warn", `codememory daemon unavailable, memory injection paused: ${reason}`)
    this.autoStart.maybeStart(e)
    return reason
  }

  /** A daemon call worked: lower the flag (logged once). */
  worked(): void {
    if (this.health.ok(true)) this.log("info", "codememory daemon reachable again: memory injection resumed")
  }

  /** While down: a background /health check, when one is due (never awaited by a call). */
  checkHealth(): void {
    const health = this.health
    if (!health.dueForCheck(this.now())) return
    health.checking = true
    request(this.config, "GET", "/health", undefined, this.config.healthTimeoutMs)
      .then(() => health.ok(false))
      .catch((e) => this.failed(e))
      .finally(() => {
        health.checking = false
      })
  }
}
