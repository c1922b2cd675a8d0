// A stand-in for the codememory daemon, shared by the module tests: answers JSON from `routes` (path → body, or
// (body) => [status, body]), checks the bearer token like the daemon (except /health), records every request.
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const TOKEN = "secret-token"

export async function fakeDaemon(routes = {}) {
  const requests = []
  const server = createServer((req, res) => {
    let raw = ""
    req.on("data", (c) => (raw += c))
    req.on("end", () => {
      const body = raw ? JSON.parse(raw) : null
      requests.push({ method: req.method, path: req.url, body })
      const send = (status, data) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(data))
      }
      if (req.url === "/health") return send(200, { status: "ok" })
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { error: "bad token" })
      const route = routes[req.url]
      if (route === undefined) return send(404, { error: "not found" })
      if (typeof route === "function") return send(...route(body))
      send(200, route)
    })
  })
  await new Promise((r) => server.listen(0, "127.0.0.1", r))
  const state = stateDir({ port: server.address().port })
  return { server, requests, state, close: () => new Promise((r) => server.close(r)) }
}

/** A codememory state folder: the token, and daemon.json when `daemon` is given. */
export function stateDir(daemon) {
  const state = mkdtempSync(join(tmpdir(), "cm-module-"))
  writeFileSync(join(state, "token"), `${TOKEN}\n`)
  if (daemon) writeFileSync(join(state, "daemon.json"), JSON.stringify({ pid: 1, host: "127.0.0.1", ...daemon }))
  return state
}

/** A port nothing listens on (bound, then released). */
export async function closedPort() {
  const server = createServer()
  await new Promise((r) => server.listen(0, "127.0.0.1", r))
  const { port } = server.address()
  await new Promise((r) => server.close(r))
  return port
}
