// The daemon client (src/daemon.ts) and the recall tools (src/tools.ts) when the daemon is not there or fails:
// every failure is a DaemonError saying why, the tools' calls reject with it (OpenCode shows it to the model as the
// tool's error) and nothing else breaks: the hooks keep working without memory.
import assert from "node:assert/strict"
import { test } from "node:test"

import { resolveConfig } from "../src/config.ts"
import { DaemonError, request } from "../src/daemon.ts"
import { createHooks } from "../src/hooks.ts"
import { closedPort, fakeDaemon, stateDir } from "./fake-daemon.js"

const TOOL_CALLS = {
  memory_search: { query: "webhook retries" },
  memory_get: { ids: ["mem_0000abcd"] },
  memory_store: { text: "Retries use exponential backoff", category: "decision" },
  memory_transcript: { reference: "mem_0000abcd" },
  checkpoint: { slug: "retries", goal: "Add retries" },
  search_sessions: { query: "retries" },
  list_sessions: {},
  get_session_files: { session_id: "2026-01-01_10-00_opencode_retries" },
}
const CONVERSATION = [{ info: { id: "msg_u", sessionID: "ses_down", role: "user" }, parts: [{ type: "text", text: "add retries to src/worker.py" }] }]

async function rejection(promise) {
  try {
    await promise
  } catch (e) {
    return e
  }
  assert.fail("expected a rejection")
}

test("request: no daemon.json, a refusing port, a silent daemon, an error answer: each a DaemonError saying why", async () => {
  const absent = await rejection(request(resolveConfig({ stateDir: stateDir() }, {}), "GET", "/health", undefined, 500))
  assert.ok(absent instanceof DaemonError)
  assert.equal(absent.absence, "absent")
  assert.match(absent.message, /not running .*codememory daemon start/)

  const port = await closedPort()
  const refused = await rejection(request(resolveConfig({ stateDir: stateDir({ port }) }, {}), "GET", "/health", undefined, 500))
  assert.ok(refused instanceof DaemonError)
  assert.equal(refused.absence, "refused")
  assert.equal(refused.status, 0)

  const d = await fakeDaemon({ "/retrieve": () => [500, { error: "store is broken" }] })
  try {
    const config = resolveConfig({ stateDir: d.state }, {})
    const broken = await rejection(request(config, "POST", "/retrieve", {}, 2000))
    assert.ok(broken instanceof DaemonError)
    assert.deepEqual([broken.status, broken.message, broken.absence], [500, "store is broken", ""])
    d.server.removeAllListeners("request")
    d.server.on("request", () => {}) // takes the request, never answers
    const slow = await rejection(request(config, "POST", "/retrieve", {}, 50))
    assert.ok(slow instanceof DaemonError)
    assert.deepEqual([slow.status, slow.message], [0, "no answer within 50 ms"])
  } finally {
    d.server.closeAllConnections()
    await d.close()
  }
})

for (const [why, state] of [
  ["no daemon.json", () => stateDir()],
  ["its port refuses", async () => stateDir({ port: await closedPort() })],
]) {
  test(`daemon down (${why}): every recall tool rejects with a DaemonError, the hooks go on without memory`, async () => {
    const logs = []
    const hooks = await createHooks({ directory: "/repo" }, { stateDir: await state(), rawEvents: true }, { log: (l, m) => logs.push([l, m]) })
    await hooks._state.ready
    assert.deepEqual(Object.keys(hooks.tool).sort(), Object.keys(TOOL_CALLS).sort())
    for (const [name, args] of Object.entries(TOOL_CALLS)) {
      const pending = hooks.tool[name].execute(args, { directory: "/repo" }) // a rejected promise, never a throw
      const e = await rejection(pending)
      assert.ok(e instanceof DaemonError, `${name}: ${e}`)
      assert.notEqual(e.absence, "", name)
    }
    const output = { messages: structuredClone(CONVERSATION) }
    await hooks["experimental.chat.messages.transform"]({}, output)
    assert.equal(output.messages.length, 1) // no HUD
    const system = { system: ["You are a coding agent."] }
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_down" }, system)
    assert.deepEqual(system.system, ["You are a coding agent."])
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_down" } } })
    await hooks.dispose()
    assert.ok(hooks._state.health.flagged)
    // one warning per outage (memory injection, live capture), not one per call
    const warnings = logs.filter(([l]) => l === "warn").map(([, m]) => m)
    assert.equal(warnings.length, 2, warnings.join("\n"))
    assert.match(warnings[0], /daemon unavailable, memory injection paused/)
    assert.match(warnings[1], /live capture paused/)
  })
}

test("the recall tools: the MCP tools' arguments to the daemon, the answer as JSON text", async () => {
  const d = await fakeDaemon({
    "/retrieve": { memories: [] },
    "/memory/search": { results: [], degraded: false, degraded_reason: null },
    "/memory/store": (body) => [200, { created: true, memory: { text: body.text, entered_by: body.entered_by } }],
  })
  try {
    const hooks = await createHooks({ directory: "/repo" }, { stateDir: d.state, rawEvents: false }, { log: () => {} })
    await hooks._state.ready
    const found = await hooks.tool.memory_search.execute({ query: "retries", limit: undefined, tags: null }, { directory: "/elsewhere" })
    assert.deepEqual(JSON.parse(found), { results: [], degraded: false, degraded_reason: null })
    const stored = JSON.parse(await hooks.tool.memory_store.execute({ text: "Use httpx", category: "decision" }, {}))
    assert.deepEqual(stored, { created: true, memory: { text: "Use httpx", entered_by: "opencode" } })
    const calls = d.requests.filter((r) => r.path.startsWith("/memory/"))
    // the session's directory is the project; arguments the model left out are not sent
    assert.deepEqual(calls[0].body, { project_root: "/elsewhere", query: "retries" })
    assert.deepEqual(calls[1].body, { project_root: "/repo", text: "Use httpx", category: "decision", entered_by: "opencode" })
    const e = await rejection(hooks.tool.memory_get.execute({ ids: ["mem_0000abcd"] }, {})) // not routed: 404
    assert.ok(e instanceof DaemonError && e.status === 404)
  } finally {
    await d.close()
  }
})

test("the session tools: the MCP session tools' arguments to /sessions/*, the answer as JSON text", async () => {
  const saved = { session_id: "2026-01-01_10-00_opencode_retries", markdown_path: "/repo/x.md", status: "open", created: true, files_touched: [] }
  const d = await fakeDaemon({
    "/retrieve": { memories: [] },
    "/sessions/checkpoint": saved,
    "/sessions/search": { results: [], query: {} },
    "/sessions/list": { sessions: [] },
    "/sessions/files": (body) => [200, { session_id: body.session_id, files: [] }],
  })
  try {
    const hooks = await createHooks({ directory: "/repo" }, { stateDir: d.state, rawEvents: false }, { log: () => {} })
    await hooks._state.ready
    const args = { slug: "retries", goal: "Add retries", work_pending: ["wire it"], status: undefined, decisions: null }
    assert.deepEqual(JSON.parse(await hooks.tool.checkpoint.execute(args, { directory: "/repo/sub" })), saved)
    for (const [name, args] of Object.entries(TOOL_CALLS).filter(([n]) => n !== "checkpoint" && !n.startsWith("memory_")))
      JSON.parse(await hooks.tool[name].execute(args, {}))
    const calls = d.requests.filter((r) => r.path.startsWith("/sessions/"))
    assert.deepEqual(
      calls.map((c) => [c.path, c.body]),
      [
        ["/sessions/checkpoint", { project_root: "/repo/sub", slug: "retries", goal: "Add retries", work_pending: ["wire it"] }],
        ["/sessions/search", { project_root: "/repo", query: "retries" }],
        ["/sessions/list", { project_root: "/repo" }],
        ["/sessions/files", { project_root: "/repo", session_id: "2026-01-01_10-00_opencode_retries" }],
      ],
    )
  } finally {
    await d.close()
  }
})
