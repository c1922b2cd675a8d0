/**
 * The daemon client: where the local codememory daemon listens (daemon.json and the token in codememory's state
 * folder) and one JSON request to it. Every failure is a DaemonError (never a crash of the hook or tool that asked):
 * its `status` is the HTTP status (0: no answer), its `absence` says when no daemon runs at all.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"

import type { Config } from "./config.ts"

type Endpoint = { url: string; token: string }
type Method = "GET" | "POST"

export class DaemonError extends Error {
  /** the HTTP status (0: no answer) */
  status: number
  /** no daemon runs: no daemon.json ("absent"), or nothing listens on its port ("refused") */
  absence: "" | "absent" | "refused"

  constructor(message: string, status = 0, absence: "" | "absent" | "refused" = "") {
    super(message)
    this.status = status
    this.absence = absence
  }
}

/** Connection refused, as Node (undici: cause.code) and Bun (code) report it. */
function refused(err: any): boolean {
  const code = String(err?.cause?.code ?? err?.code ?? "")
  return code === "ECONNREFUSED" || code === "ConnectionRefused"
}

/**
 * The endpoint each config last read, reused by the next requests: the hot path (every LLM call) does no file I/O.
 * A request to it that fails drops it (see `request`).
 */
const endpoints = new WeakMap<Config, Endpoint>()

/**
 * Where the daemon listens and its token, read from codememory's state folder (daemon.json, token file) and
 * remembered for `request`.
 */
export function endpoint(config: Config): Endpoint {
  let url = config.daemonUrl
  if (!url && config.port) url = `http://127.0.0.1:${config.port}`
  if (!url) {
    let info
    try {
      info = JSON.parse(readFileSync(join(config.stateDir, "daemon.json"), "utf8"))
    } catch {
      throw new DaemonError("the codememory daemon is not running (no daemon.json; start it: codememory daemon start)", 0, "absent")
    }
    if (!info || !Number.isInteger(info.port)) throw new DaemonError("daemon.json has no port")
    url = `http://127.0.0.1:${info.port}`
  }
  let token = ""
  try {
    token = readFileSync(config.tokenFile, "utf8").trim()
  } catch {
    throw new DaemonError(`cannot read the daemon's token file ${config.tokenFile}`)
  }
  const found = { url, token }
  endpoints.set(config, found)
  return found
}

/**
 * One JSON request to the daemon, at the remembered endpoint (read from the state folder when there is none). A
 * failed request forgets it, and when the state folder now names another port or token (the daemon restarted), it is
 * sent once more there. Throws DaemonError (status 0: unreachable or too slow).
 */
export async function request(config: Config, method: Method, path: string, body: unknown, timeoutMs: number): Promise<any> {
  const cached = endpoints.get(config)
  try {
    return await send(cached ?? endpoint(config), method, path, body, timeoutMs)
  } catch (e) {
    endpoints.delete(config)
    if (!cached || !(e instanceof DaemonError)) throw e
    const fresh = endpoint(config)
    if (fresh.url === cached.url && fresh.token === cached.token) throw e
    return await send(fresh, method, path, body, timeoutMs)
  }
}

/** One JSON request to the daemon at `at` (see `request`). */
async function send({ url, token }: Endpoint, method: Method, path: string, body: unknown, timeoutMs: number): Promise<any> {
  let res
  try {
    res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (e) {
    const err = e as any
    const slow = err?.name === "TimeoutError" || err?.name === "AbortError"
    if (slow) throw new DaemonError(`no answer within ${timeoutMs} ms`)
    throw new DaemonError(`unreachable (${err?.cause?.code ?? err?.code ?? err?.message ?? err})`, 0, refused(err) ? "refused" : "")
  }
  const text = await res.text()
  let data = null
  try {
    data = text ? JSON.parse(text) : null
  } catch {
    data = null
  }
  if (!res.ok) throw new DaemonError(data?.error ? String(data.error) : `HTTP ${res.status}`, res.status)
  return data
}
