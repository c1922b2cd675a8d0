// Unit tests of the plugin's pure parts (derivation, HUD, pinning, degradation) and of its hooks against a
// small HTTP server speaking the daemon's contract (the real daemon: tests/test_opencode_plugin.py).
import assert from "node:assert/strict"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { test } from "node:test"

import plugin, {
  HUD_MESSAGE_ID,
  TURN_MESSAGE_ID,
  Health,
  Sessions,
  TOOLS_LINE,
  createHooks,
  deriveQuery,
  extractEntities,
  formatColdStart,
  formatHud,
  hudInput,
  latestUserText,
  recentToolCalls,
  resolveConfig,
} from "../src/index.ts"

const SES = "ses_test1"

function user(text, extra = {}) {
  return { info: { id: `msg_u${Math.random()}`, sessionID: SES, role: "user", agent: "build", model: { providerID: "p", modelID: "m" } }, parts: [{ type: "text", text, ...extra }] }
}

function toolPart(tool, input, output, status = "completed") {
  return { type: "tool", tool, callID: `call_${tool}`, state: status === "error" ? { status, input, error: output } : { status, input, output } }
}

function assistant(...parts) {
  return { info: { id: `msg_a${Math.random()}`, sessionID: SES, role: "assistant" }, parts }
}

const CONVERSATION = [
  user("Add retries to the webhook worker in src/webhook_worker.py; the HTTPError from `fetchPayload` keeps failing."),
  assistant(
    toolPart("read", { filePath: "/repo/src/webhook_worker.py" }, "import requests\n" + "x".repeat(2000)),
    toolPart("bash", { command: "pytest tests/test_worker.py", description: "run tests" }, "E   ModuleNotFoundError: No module named requests\n1 failed"),
  ),
]

// --------------------------------------------------------------------------------------- derivation
test("latestUserText takes the newest user words, not synthetic parts or our HUD", () => {
  const msgs = [
    user("first question"),
    user("file contents", { synthetic: true }),
    { info: { id: HUD_MESSAGE_ID, role: "user", sessionID: SES }, parts: [{ type: "text", text: "<developer_context>x</developer_context>", synthetic: true }] },
  ]
  assert.equal(latestUserText(msgs), "first question")
  assert.equal(latestUserText([...msgs, user("second one")]), "second one")
  assert.equal(latestUserText([]), "")
})

test("recentToolCalls keeps the last N finished calls, oldest first, with key args and cut results", () => {
  const msgs = [
    assistant(toolPart("glob", { pattern: "**/*.py" }, "a.py")),
    assistant(toolPart("read", { filePath: "/r/a.py", offset: 3 }, "y".repeat(500)), toolPart("bash", { command: "ls" }, "", "running")),
    assistant(toolPart("bash", { command: "make" }, "boom", "error"), toolPart("grep", { pattern: "TODO", include: "*.ts" }, "none")),
  ]
  const calls = recentToolCalls(msgs, 3, 50)
  assert.deepEqual(
    calls.map((c) => c.tool),
    ["read", "bash", "grep"],
  )
  assert.deepEqual(calls[0].args, { filePath: "/r/a.py" })
  assert.equal(calls[0].output.length, 50)
  assert.ok(calls[0].output.endsWith("…"))
  assert.equal(calls[1].error, true)
  assert.equal(calls[1].output, "boom")
  assert.deepEqual(calls[2].args, { pattern: "TODO", include: "*.ts" })
  assert.equal(recentToolCalls(msgs, 0).length, 0)
})

test("extractEntities finds paths, identifiers and error names, not URLs", () => {
  const found = extractEntities("In src/api/client.ts fetchUser raises KeyError; see https://example.com/x/y and `retry_policy`, also max_retries")
  assert.deepEqual(found, ["src/api/client.ts", "fetchUser", "KeyError", "retry_policy", "max_retries"])
})

test("deriveQuery is deterministic and uses the user's words, tool calls and errors", () => {
  const input = hudInput(CONVERSATION, resolveConfig({}, {}), [])
  const a = deriveQuery(input)
  const b = deriveQuery(structuredClone(input))
  assert.deepEqual(a, b)
  assert.match(a.query_expansion[0], /^Add retries to the webhook worker/)
  assert.ok(a.query_expansion.includes("bash pytest tests/test_worker.py run tests"), a.query_expansion)
  assert.ok(a.query_expansion.includes("E ModuleNotFoundError: No module named requests".replace("E ", "E   ")), a.query_expansion)
  for (const e of ["src/webhook_worker.py", "HTTPError", "fetchPayload", "/repo/src/webhook_worker.py", "ModuleNotFoundError", "tests/test_worker.py", "webhook_worker.py"]) {
    assert.ok(a.entities.includes(e), `${e} missing from ${a.entities}`)
  }
  assert.ok(a.query_expansion.length <= 8 && a.entities.length <= 24)
})

test("deriveQuery caps phrases and gives nothing for an empty conversation", () => {
  const many = [user("go"), assistant(...Array.from({ length: 20 }, (_, i) => toolPart("read", { filePath: `/f${i}.py` }, "ok")))]
  const d = deriveQuery(hudInput(many, resolveConfig({ toolWindow: 20 }, {}), []))
  assert.equal(d.query_expansion.length, 4) // "go" is too short to be a phrase; 4 of the tool calls, newest first
  assert.equal(d.query_expansion[0], "read /f19.py")
  assert.equal(d.request_phrases, 0) // no phrase is the request's: the daemon must not take the newest call's for it
  assert.deepEqual(deriveQuery({ userText: "", tools: [], pinned: [] }), { query_expansion: [], entities: [], request_phrases: 0 })
})

test("deriveQuery says how many leading phrases are the request: a long request's two, none without user text", () => {
  const config = resolveConfig({}, {})
  const edit = assistant(toolPart("edit", { filePath: "/repo/internal/tax/compute.go" }, "ok"))
  const long = "Add EU reverse charge to the VAT calculation. Keep the API the same. Update the changelog. Then run the integration tests against Postgres with make test-db."
  const two = deriveQuery(hudInput([user(long), edit], config, []))
  assert.equal(two.request_phrases, 2)
  assert.deepEqual(two.query_expansion.slice(0, 3), [
    "Add EU reverse charge to the VAT calculation. Keep the API the same. Update the changelog.",
    "Then run the integration tests against Postgres with make test-db.",
    "edit /repo/internal/tax/compute.go",
  ])
  assert.equal(deriveQuery(hudInput([user("Add EU reverse charge to the VAT calculation."), edit], config, [])).request_phrases, 1)
  const none = deriveQuery({ userText: "", tools: [{ tool: "edit", args: { filePath: "/repo/a.go" }, output: "" }], pinned: [] })
  assert.deepEqual([none.request_phrases, none.query_expansion], [0, ["edit /repo/a.go"]])
})

// --------------------------------------------------------------------------------------- formatting
test("formatHud never makes an empty block", () => {
  assert.equal(formatHud([]), null)
  assert.equal(formatHud(null), null)
  assert.equal(formatHud([{ id: "mem_0000000a", text: "   " }]), null)
  const hud = formatHud([{ id: "mem_0000000a", text: "Use httpx,\n not requests", category: "decision" }])
  assert.equal(hud, formatHud([{ id: "mem_0000000a", text: "Use httpx,\n not requests", category: "decision" }]))
  assert.match(hud, /^<developer_context>\n/)
  assert.match(hud, /- \[mem_0000000a\] \(decision\) Use httpx, not requests\n<\/developer_context>$/)
})

test("formatColdStart lists memories and names the tools", () => {
  assert.equal(formatColdStart([]), null)
  const text = formatColdStart([{ id: "mem_0000000b", text: "Deploys on Tuesdays", category: "fact" }], { total: 5 })
  assert.match(text, /\(1 of 5\)/)
  assert.ok(text.includes(TOOLS_LINE))
  assert.ok(!formatColdStart([{ id: "mem_0000000b", text: "x" }], { tools: false }).includes("memory_search"))
})

// ------------------------------------------------------------------------------------------- state
test("Sessions pin the surfaced ids per session and forget the oldest sessions", () => {
  const s = new Sessions(2)
  s.pin("a", [{ id: "mem_1", text: "x" }, { id: "mem_2", text: "y" }])
  assert.deepEqual(s.get("a").pinned, ["mem_1", "mem_2"])
  assert.deepEqual(s.get("b").pinned, [])
  s.pin("a", [])
  assert.deepEqual(s.get("a").pinned, [])
  s.get("c")
  assert.deepEqual([...s.map.keys()], ["a", "c"])
})

test("Health: down after a failure, health checks back off, a working call resets", () => {
  const h = new Health(100, 1000)
  assert.ok(!h.down)
  assert.equal(h.fail("refused", 0), true) // raises the flag
  assert.equal(h.fail("refused", 0), false)
  assert.ok(h.down)
  assert.ok(!h.dueForCheck(150))
  assert.ok(h.dueForCheck(200)) // second failure: 200 ms
  h.fail("x", 200)
  assert.equal(h.nextCheckAt, 600)
  for (let i = 0; i < 10; i++) h.fail("x", 1000)
  assert.equal(h.nextCheckAt, 2000) // capped at maxMs
  h.checking = true
  assert.ok(!h.dueForCheck(5000))
  h.checking = false
  // /health answers: calls are tried again, but the flag and the backoff stay until one works.
  assert.equal(h.ok(false), false)
  assert.ok(!h.down && h.flagged)
  assert.equal(h.fail("401", 5000), false) // e.g. a wrong token: no new warning, longer wait
  assert.equal(h.nextCheckAt, 6000)
  h.ok(false)
  assert.equal(h.ok(true), true) // lowers the flag
  assert.ok(!h.flagged && !h.down && h.failures === 0 && h.reason === "")
  assert.equal(h.ok(true), false)
})

test("the warning is raised once and lowered once, even when /health answers but calls fail", async () => {
  const d = await fakeDaemon({ memories: [MEM] })
  try {
    writeFileSync(join(d.state, "token"), "wrong-token\n")
    const { hooks, logs, clock } = await hooksFor(d)
    for (let i = 1; i <= 5; i++) {
      clock.t = i * 100_000 // every check is due
      await transform(hooks, CONVERSATION)
      for (let k = 0; k < 50 && hooks._state.health.checking; k++) await new Promise((r) => setTimeout(r, 5))
      await transform(hooks, CONVERSATION)
    }
    assert.deepEqual(
      logs.map((l) => l[0]),
      ["warn"],
    )
    assert.match(hooks._state.health.reason, /bad token/)
    writeFileSync(join(d.state, "token"), "secret-token\n")
    clock.t = 10_000_000
    await transform(hooks, CONVERSATION)
    for (let k = 0; k < 50 && hooks._state.health.down; k++) await new Promise((r) => setTimeout(r, 5))
    const out = await transform(hooks, CONVERSATION)
    assert.equal(out.length, CONVERSATION.length + 1)
    assert.deepEqual(
      logs.map((l) => l[0]),
      ["warn", "info"],
    )
  } finally {
    await d.close()
  }
})

// ------------------------------------------------------------------------------ hooks over HTTP
/** A daemon stand-in: answers /health, /retrieve (from `memories`), /memory/recent; records requests. */
async function fakeDaemon({ memories = [], delayMs = 0 } = {}) {
  const requests = []
  const server = createServer((req, res) => {
    let raw = ""
    req.on("data", (c) => (raw += c))
    req.on("end", () => {
      const body = raw ? JSON.parse(raw) : null
      requests.push({ path: req.url, body, auth: req.headers.authorization })
      const send = (status, data) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(data))
      }
      setTimeout(() => {
        if (req.url === "/health") return send(200, { status: "ok" }) // no token needed, as the daemon's
        if (req.headers.authorization !== "Bearer secret-token") return send(401, { error: "bad token" })
        if (req.url === "/retrieve") return send(200, { memories: server.memories, degraded: false, tokens: 10 })
        if (req.url === "/memory/recent") return send(200, { memories: server.memories, total: server.memories.length, tokens: 5 })
        send(404, { error: "not found" })
      }, server.delayMs)
    })
  })
  server.memories = memories
  server.delayMs = delayMs
  await new Promise((r) => server.listen(0, "127.0.0.1", r))
  const state = mkdtempSync(join(tmpdir(), "cm-plugin-"))
  writeFileSync(join(state, "token"), "secret-token\n")
  writeFileSync(join(state, "daemon.json"), JSON.stringify({ pid: 1, host: "127.0.0.1", port: server.address().port }))
  return { server, requests, state, close: () => new Promise((r) => server.close(r)) }
}

const MEM = { id: "mem_0000abcd", text: "Retry webhooks with exponential backoff (max 5)", category: "decision", importance: 0.9 }

async function hooksFor(daemon, options = {}, clock = { t: 0 }) {
  const logs = []
  const hooks = await createHooks({ directory: "/repo" }, { stateDir: daemon.state, tools: false, retryMinMs: 100, coldStartTimeoutMs: 10_000, ...options }, { now: () => clock.t, log: (l, m) => logs.push([l, m]) })
  await hooks._state.ready
  if (daemon.server?.listening) {
    assert.deepEqual(daemon.requests.map((r) => r.path), ["/retrieve"]) // the warm-up at load
    daemon.requests.length = 0
  }
  return { hooks, logs, clock }
}

async function transform(hooks, messages) {
  const output = { messages: structuredClone(messages) }
  await hooks["experimental.chat.messages.transform"]({}, output)
  return output.messages
}

test("a turn's first call: the request's block right after the user's message, pinned; kept at later calls", async () => {
  const d = await fakeDaemon({ memories: [MEM] })
  try {
    const { hooks } = await hooksFor(d, { coldStart: false })
    const out = await transform(hooks, [CONVERSATION[0]])
    assert.equal(out.length, 2)
    const turn = out.at(-1)
    assert.equal(turn.info.id, TURN_MESSAGE_ID)
    assert.equal(turn.info.role, "user")
    assert.equal(turn.info.sessionID, SES)
    assert.equal(turn.info.agent, "build")
    assert.equal(turn.parts[0].synthetic, true)
    assert.match(turn.parts[0].text, /<developer_context>[\s\S]*mem_0000abcd[\s\S]*<\/developer_context>/)
    assert.equal(latestUserText(out), CONVERSATION[0].parts[0].text) // never taken for the user's words
    const first = d.requests.find((r) => r.path === "/retrieve").body
    assert.equal(first.project_root, "/repo")
    assert.deepEqual(first.pinned_memory_ids, [])
    assert.equal(first.step, undefined) // decided on the request alone
    assert.equal(first.request_carried, undefined)
    assert.equal(d.requests[0].auth, "Bearer secret-token")
    assert.deepEqual(hooks._state.sessions.get(SES).pinned, ["mem_0000abcd"])
    // A later call of the turn: the same block, in the same place, and a HUD asked only for what the step brings.
    const later = await transform(hooks, CONVERSATION)
    assert.deepEqual(later.map((m) => m.info.id), [CONVERSATION[0].info.id, TURN_MESSAGE_ID, CONVERSATION[1].info.id])
    assert.equal(later[1].parts[0].text, turn.parts[0].text)
    const second = d.requests.filter((r) => r.path === "/retrieve")[1].body
    assert.equal(second.request_carried, true)
    assert.equal(second.step.tool, "bash")
    assert.deepEqual(second.exclude_memory_ids, ["mem_0000abcd"])
    // The next request: the previous turn's block is not carried.
    const next = await transform(hooks, [...CONVERSATION, user("Now write the changelog entry.")])
    assert.equal(next.filter((m) => m.info.id === TURN_MESSAGE_ID).length, 1)
    assert.equal(next.findIndex((m) => m.info.id === TURN_MESSAGE_ID), 3)
    const third = d.requests.filter((r) => r.path === "/retrieve")[2].body
    assert.equal(third.step, undefined)
    assert.deepEqual(third.exclude_memory_ids, [])
  } finally {
    await d.close()
  }
})

test("the turn's block holds the request's first turnBlockMemories memories, at every call of the turn", async () => {
  const more = [MEM, { ...MEM, id: "mem_0000abce", text: "Second" }, { ...MEM, id: "mem_0000abcf", text: "Third" }]
  const d = await fakeDaemon({ memories: more })
  try {
    const { hooks } = await hooksFor(d, { coldStart: false }) // the default: two
    const block = (out) => out.find((m) => m.info.id === TURN_MESSAGE_ID).parts[0].text
    for (const text of [block(await transform(hooks, [CONVERSATION[0]])), block(await transform(hooks, CONVERSATION))]) {
      assert.match(text, /mem_0000abcd[\s\S]*mem_0000abce/)
      assert.doesNotMatch(text, /mem_0000abcf/)
    }
    d.requests.length = 0
    const wide = await hooksFor(d, { coldStart: false, turnBlockMemories: 3 })
    assert.match(block(await transform(wide.hooks, [CONVERSATION[0]])), /mem_0000abcf/)
  } finally {
    await d.close()
  }
})

test("a memory the turn's block leaves out (turnBlockMemories) is not pinned: the next call's HUD judges it as new", async () => {
  const more = [MEM, { ...MEM, id: "mem_0000abce", text: "Second" }, { ...MEM, id: "mem_0000abcf", text: "Third" }]
  const d = await fakeDaemon({ memories: more })
  try {
    const { hooks } = await hooksFor(d, { coldStart: false, turnBlockMemories: 2 })
    await transform(hooks, [CONVERSATION[0]])
    await transform(hooks, CONVERSATION)
    const later = d.requests.filter((r) => r.path === "/retrieve")[1].body
    // a pin keeps a memory the agent was shown under a lenient bar and beyond maxNew: the third was never shown
    assert.ok(!later.pinned_memory_ids.includes("mem_0000abcf"), JSON.stringify(later.pinned_memory_ids))
  } finally {
    await d.close()
  }
})

test("turnBlockFirstCall off: the turn's first call shows no block; planned there, shown from the second call on", async () => {
  const d = await fakeDaemon({ memories: [MEM] })
  try {
    const { hooks } = await hooksFor(d, { coldStart: false, turnBlockFirstCall: false })
    const out = await transform(hooks, [CONVERSATION[0]])
    assert.equal(out.length, 1) // the agent's first look around (no tool call yet) carries nothing
    const first = d.requests.filter((r) => r.path === "/retrieve")
    assert.equal(first.length, 1) // ... but the request was asked: the block is planned
    assert.equal(first[0].body.step, undefined)
    const later = await transform(hooks, CONVERSATION)
    assert.deepEqual(later.map((m) => m.info.id), [CONVERSATION[0].info.id, TURN_MESSAGE_ID, CONVERSATION[1].info.id])
    assert.match(later[1].parts[0].text, /mem_0000abcd/)
    const second = d.requests.filter((r) => r.path === "/retrieve")[1].body
    assert.equal(second.request_carried, true)
    assert.deepEqual(second.exclude_memory_ids, ["mem_0000abcd"]) // the block's memories are not asked for again
  } finally {
    await d.close()
  }
})

test("a later call's HUD: appended at the tail, only what the turn does not carry", async () => {
  const OTHER = { ...MEM, id: "mem_0000beef", text: "Run pytest with -p no:cacheprovider in CI." }
  const d = await fakeDaemon({ memories: [MEM] })
  try {
    const { hooks } = await hooksFor(d, { coldStart: false })
    await transform(hooks, [CONVERSATION[0]])
    d.server.memories = [MEM, OTHER]
    const out = await transform(hooks, CONVERSATION)
    assert.equal(out.length, CONVERSATION.length + 2)
    const hud = out.at(-1)
    assert.equal(hud.info.id, HUD_MESSAGE_ID)
    assert.equal(hud.parts[0].synthetic, true)
    assert.match(hud.parts[0].text, /mem_0000beef/)
    assert.doesNotMatch(hud.parts[0].text, /mem_0000abcd/) // the turn's block carries it
    assert.deepEqual(hooks._state.sessions.get(SES).pinned, ["mem_0000beef"])
  } finally {
    await d.close()
  }
})

test("no HUD while the session is being compacted", async () => {
  const d = await fakeDaemon({ memories: [MEM] })
  try {
    const { hooks, clock } = await hooksFor(d)
    await hooks["experimental.session.compacting"]({ sessionID: SES }, { context: [] })
    assert.equal((await transform(hooks, CONVERSATION)).length, CONVERSATION.length)
    await hooks.event({ event: { type: "session.compacted", properties: { sessionID: SES } } })
    assert.equal((await transform(hooks, CONVERSATION)).length, CONVERSATION.length + 1)
    await hooks["experimental.session.compacting"]({ sessionID: SES }, { context: [] })
    clock.t += 300_001 // the event was missed: the mark expires
    assert.equal((await transform(hooks, CONVERSATION)).length, CONVERSATION.length + 1)
  } finally {
    await d.close()
  }
})

test("a project without a store: no HUD, no flag, asked again after a minute; a bug in a hook never fails the call", async () => {
  const d = await fakeDaemon({ memories: [MEM] })
  try {
    const { hooks, logs, clock } = await hooksFor(d, {}, { t: 0 })
    d.server.removeAllListeners("request")
    d.server.on("request", (req, res) => {
      req.resume()
      req.on("end", () => {
        d.requests.push({ path: req.url })
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: "no codememory store for /repo" }))
      })
    })
    assert.equal((await transform(hooks, CONVERSATION)).length, CONVERSATION.length)
    assert.equal((await transform(hooks, CONVERSATION)).length, CONVERSATION.length)
    assert.equal(d.requests.length, 1)
    assert.ok(!hooks._state.health.flagged && logs.length === 0)
    clock.t = 60_001
    await transform(hooks, CONVERSATION)
    assert.equal(d.requests.length, 2)
    const broken = await createHooks({ directory: "/repo" }, { stateDir: d.state, tools: false }, { derive: () => ({ query_expansion: ["x"], entities: [] }), log: () => {} })
    await broken["experimental.chat.messages.transform"]({}, { messages: null })
    await broken["experimental.chat.system.transform"]({ sessionID: SES }, { system: null })
    await broken["experimental.chat.messages.transform"]({}, { messages: [{ info: null, parts: null }] })
  } finally {
    await d.close()
  }
})

test("no HUD when nothing is surfaced, and the pinned set empties", async () => {
  const d = await fakeDaemon({ memories: [MEM] })
  try {
    const { hooks } = await hooksFor(d)
    await transform(hooks, CONVERSATION)
    d.server.memories = []
    const out = await transform(hooks, [...CONVERSATION, user("And the dead-letter queue?")])
    assert.equal(out.length, CONVERSATION.length + 1)
    assert.deepEqual(hooks._state.sessions.get(SES).pinned, [])
  } finally {
    await d.close()
  }
})

test("daemon down: no HUD, one warning, calls skip the daemon until a health check succeeds", async () => {
  const d = await fakeDaemon({ memories: [MEM] })
  const { port } = d.server.address()
  await d.close() // nothing listens on the port now
  const { hooks, logs, clock } = await hooksFor(d)
  let out = await transform(hooks, CONVERSATION)
  assert.equal(out.length, CONVERSATION.length)
  assert.ok(hooks._state.health.down)
  assert.equal(logs.length, 1)
  assert.match(logs[0][1], /unavailable/)
  // While down (before the re-check is due), a call does no I/O at all: not even a /health check.
  for (let i = 0; i < 10; i++) await transform(hooks, CONVERSATION)
  assert.ok(!hooks._state.health.checking)
  // The daemon comes back on the same port; the next due check notices and injection resumes.
  const back = await fakeDaemon({ memories: [MEM] })
  back.server.close()
  const again = createServer(back.server.listeners("request")[0])
  await new Promise((r) => again.listen(port, "127.0.0.1", r))
  try {
    clock.t = 1000
    await transform(hooks, CONVERSATION) // triggers the background /health check
    for (let i = 0; i < 50 && hooks._state.health.down; i++) await new Promise((r) => setTimeout(r, 10))
    assert.ok(!hooks._state.health.down)
    out = await transform(hooks, CONVERSATION)
    assert.equal(out.length, CONVERSATION.length + 1)
    assert.match(logs.at(-1)[1], /resumed/)
  } finally {
    await new Promise((r) => again.close(r))
  }
})

test("a slow daemon is cut off at timeoutMs and the call goes on without memory", async () => {
  const d = await fakeDaemon({ memories: [MEM], delayMs: 400 })
  try {
    const { hooks } = await hooksFor(d, { timeoutMs: 50 })
    const out = await transform(hooks, CONVERSATION)
    assert.equal(out.length, CONVERSATION.length)
    assert.match(hooks._state.health.reason, /no answer within 50 ms/)
  } finally {
    await d.close()
  }
})

test("daemon.json and the token are read once, and again when the daemon restarts on another port with another token", async () => {
  const d = await fakeDaemon({ memories: [MEM] })
  const moved = await fakeDaemon({ memories: [MEM] })
  try {
    const { hooks, logs } = await hooksFor(d)
    assert.equal((await transform(hooks, CONVERSATION)).length, CONVERSATION.length + 1)
    // Unreadable files: the remembered endpoint is used without reading them.
    writeFileSync(join(d.state, "daemon.json"), "not json")
    assert.equal((await transform(hooks, CONVERSATION)).length, CONVERSATION.length + 1)
    // The daemon restarted: the old port is gone; the call re-reads the state folder and goes to the new one.
    await d.close()
    let token = "new-token"
    moved.server.removeAllListeners("request")
    moved.server.on("request", (req, res) => {
      req.resume()
      req.on("end", () => {
        moved.requests.push({ path: req.url, auth: req.headers.authorization })
        const ok = req.headers.authorization === `Bearer ${token}`
        res.writeHead(ok ? 200 : 401, { "content-type": "application/json" })
        res.end(JSON.stringify(ok ? { memories: [MEM] } : { error: "bad token" }))
      })
    })
    writeFileSync(join(d.state, "daemon.json"), JSON.stringify({ pid: 2, host: "127.0.0.1", port: moved.server.address().port }))
    writeFileSync(join(d.state, "token"), "new-token\n")
    assert.equal((await transform(hooks, CONVERSATION)).length, CONVERSATION.length + 1)
    assert.deepEqual(moved.requests.map((r) => r.auth), ["Bearer new-token"])
    // A new token on the same port: the 401 makes it read the token again.
    token = "newer-token"
    writeFileSync(join(d.state, "token"), "newer-token\n")
    assert.equal((await transform(hooks, CONVERSATION)).length, CONVERSATION.length + 1)
    assert.deepEqual(moved.requests.slice(1).map((r) => r.auth), ["Bearer new-token", "Bearer newer-token"])
    assert.ok(!hooks._state.health.flagged && logs.length === 0)
  } finally {
    await moved.close()
    if (d.server.listening) await d.close()
  }
})

test("no daemon.json at all: the call goes on, flagged", async () => {
  const { hooks } = await hooksFor({ state: mkdtempSync(join(tmpdir(), "cm-empty-")) })
  const out = await transform(hooks, CONVERSATION)
  assert.equal(out.length, CONVERSATION.length)
  assert.match(hooks._state.health.reason, /not running/)
})

test("cold start: in the session's first call only (planned by the messages hook), never for the title request", async () => {
  const d = await fakeDaemon({ memories: [MEM] })
  try {
    const { hooks } = await hooksFor(d)
    const sys = hooks["experimental.chat.system.transform"]
    const call = async (messages, sessionID = SES) => {
      const out = { messages: structuredClone(messages) }
      await hooks["experimental.chat.messages.transform"]({}, out)
      const prompt = { system: ["You are opencode"] }
      await sys({ sessionID }, prompt)
      return { messages: out.messages, system: prompt.system }
    }
    const first = await call([CONVERSATION[0]])
    assert.equal(first.system.length, 2)
    assert.match(first.system[1], /<project_memory>[\s\S]*mem_0000abcd[\s\S]*<\/project_memory>/)
    // The title request of the same session gets nothing.
    const title = { system: ["You are a title generator. You output ONLY a thread title."] }
    await sys({ sessionID: SES }, title)
    assert.equal(title.system.length, 1)
    // Later calls (the model has answered) have no block, and /memory/recent is not asked again.
    const second = await call(CONVERSATION)
    assert.deepEqual(second.system, ["You are opencode"])
    assert.equal(d.requests.filter((r) => r.path === "/memory/recent").length, 1)
    // ... and the memory the block showed, which the request calls for too, is in the turn's block now.
    assert.match(second.messages.find((m) => m.info.id === TURN_MESSAGE_ID).parts[0].text, /mem_0000abcd/)
    assert.equal(first.messages.length, 1) // not twice in the first call
    // Nothing stored: no block.
    d.server.memories = []
    const other = await call([{ ...CONVERSATION[0], info: { ...CONVERSATION[0].info, sessionID: "ses_other" } }], "ses_other")
    assert.deepEqual(other.system, ["You are opencode"])
    assert.equal(other.messages.length, 1) // and no HUD either
  } finally {
    await d.close()
  }
})

test("the default export is OpenCode's plugin module shape", () => {
  assert.equal(plugin.id, "codememory")
  assert.equal(typeof plugin.server, "function")
})

test("resolveConfig: defaults, XDG_STATE_HOME, bounds", () => {
  const c = resolveConfig({}, { HOME: "/home/u" })
  assert.equal(c.stateDir, "/home/u/.local/state/codememory")
  assert.equal(c.tokenFile, "/home/u/.local/state/codememory/token")
  assert.equal(c.timeoutMs, 300)
  assert.equal(c.toolWindow, 5)
  assert.equal(resolveConfig({}, { XDG_STATE_HOME: "/x", HOME: "/h" }).stateDir, "/x/codememory")
  assert.equal(resolveConfig({}, { XDG_STATE_HOME: "rel", HOME: "/h" }).stateDir, "/h/.local/state/codememory")
  const o = resolveConfig({ timeoutMs: 5, port: 9473, daemonUrl: "http://127.0.0.1:1/", hud: false }, {})
  assert.equal(o.timeoutMs, 10)
  assert.equal(o.daemonUrl, "http://127.0.0.1:1")
  assert.equal(o.hud, false)
})
