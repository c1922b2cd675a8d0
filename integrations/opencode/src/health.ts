/** Whether a backend (the daemon, the raw-event stream, the query model) is worth calling now. */

/**
 * Whether to call the daemon. States: "up" (call it), "down" (skip; a background /health check is due at
 * `nextCheckAt`, the wait doubling from `minMs` to `maxMs` with each failure). `flagged` is what users see: it
 * is raised by the first failure and lowered only by a call that worked (`ok(true)`), not by /health alone,
 * so a daemon whose /health answers but whose /retrieve fails (wrong token, broken store) keeps backing off
 * without flapping the flag. Starts "up" (the first call tries). Pure: the caller passes the time.
 */
export class Health {
  minMs: number
  maxMs: number
  state: "up" | "down" = "up"
  flagged = false
  reason = ""
  failures = 0
  nextCheckAt = 0
  checking = false

  constructor(minMs = 2000, maxMs = 60_000) {
    this.minMs = minMs
    this.maxMs = maxMs
  }

  get down(): boolean {
    return this.state === "down"
  }

  /** A background /health check is due (and none is running). */
  dueForCheck(now: number): boolean {
    return this.state === "down" && !this.checking && now >= this.nextCheckAt
  }

  /**
   * The daemon answered: /health (`verified` false: try it again) or a real call (`verified` true).
   * Returns true when this lowered the flag.
   */
  ok(verified: boolean): boolean {
    this.state = "up"
    this.nextCheckAt = 0
    if (!verified) return false
    const lowered = this.flagged
    this.flagged = false
    this.reason = ""
    this.failures = 0
    return lowered
  }

  /** A failure: down until the next check. Returns true when this raised the flag. */
  fail(reason: string, now: number): boolean {
    const raised = !this.flagged
    this.state = "down"
    this.flagged = true
    this.reason = reason
    const wait = Math.min(this.maxMs, this.minMs * 2 ** Math.min(this.failures, 20))
    this.failures += 1
    this.nextCheckAt = now + wait
    return raised
  }
}
