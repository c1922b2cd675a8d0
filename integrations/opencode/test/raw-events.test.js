// Live capture: the batching and flush policy (pure), the raw stream's backoff window (pure), and the `event` hook
// streaming OpenCode bus events to a small HTTP server speaking the daemon's raw-event contract (the real daemon
// and the real opencode binary: tests/test_raw_events.py).
import assert from "node:assert/strict"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { test } from "node:test"

import { RawBuffer, RawStream, batches, clipDeep, createHooks, flushReason, isNewBoundary, resolveConfig, stripInjected } from "../src/index.ts"

const SES = "ses_raw1"
const POLICY = { tools: 50, prompts: 15, maxAgeMs: 600_000 }

// OpenCode bus events, shaped as OpenCode 1.18 publishes them
const userMsg = (id, t = 1000, ses = SES) => ({ type: "message.updated", properties: { sessionID: ses, info: { id, sessionID: ses, role: "user", time: { created: t } } } })
const textPart = (id, messageID, text, extra = {}, ses = SES) => ({
  type: "message.part.updated",
  properties: { sessionID: ses, part: { id, sessionID: ses, messageID, type: "text", text, ...extra } },
})
const asstMsg = (id, parentID, { t = 2000, completed, finish, error, ses = SES } = {}) => ({
  type: "message.updated",
  properties: {
    sessionID: ses,
    info: { id, sessionID: ses, role: "assistant", parentID, mode: "build", agent: "build", time: { created: t, ...(completed ? { completed } : {}) }, ...(finish ? { finish } : {}), ...(error ? { error } : {}) },
  },
})
// `exit`: the command's exit status, which OpenCode keeps in metadata.exit (its status stays "completed")
const toolPart = (id, messageID, status, output = "", ses = SES, exit = /failing/.test(output) ? 1 : 0) => ({
  type: "message.part.updated",
  properties: {
    sessionID: ses,
    part: {
      id,
      sessionID: ses,
      messageID,
      type: "tool",
      tool: "bash",
      callID: `call_${id}`,
      state: status === "running" ? { status, input: { command: "npm test" }, time: { start: 2100 } } : { status, input: { command: "npm test" }, output, title: "npm test", metadata: { output, exit }, time: { start: 2100, end: 2200 } },
    },
  },
})
const idle = (ses = SES) => ({ type: "session.idle", properties: { sessionID: ses } })

/** Feed bus events to a RawBuffer (as the event hook does). */
function feed(buf, events, now = 0) {
  for (const e of events) {
    const p = e.properties
    if (e.type === "message.updated") buf.onMessage(p.info, now)
    else if (e.type === "message.part.updated") buf.onPart(p.part, now)
    else if (e.type === "message.part.delta") buf.onDelta(p)
    else if (e.type === "session.created" || e.type === "session.updated") buf.onSession(p.info, now)
  }
}

// A whole turn: prompt (with a synthetic part and an injected block), a tool step, the final answer.
const TURN = [
  userMsg("msg_u1"),
  textPart("prt_u1", "msg_u1", "fix the failing test <developer_context>memories</developer_context>"),
  textPart("prt_u1s", "msg_u1", "file contents inlined by OpenCode", { synthetic: true }),
  asstMsg("msg_a1", "msg_u1"),
  { type: "message.part.updated", properties: { sessionID: SES, part: { id: "prt_s1", sessionID: SES, messageID: "msg_a1", type: "step-start" } } },
  toolPart("prt_t1", "msg_a1", "running"),
  toolPart("prt_t1", "msg_a1", "completed", "1 failing"),
  asstMsg("msg_a1", "msg_u1", { completed: 2500, finish: "tool-calls" }),
  asstMsg("msg_a2", "msg_u1", { t: 2600 }),
  textPart("prt_a2", "msg_a2", ""),
  { type: "message.part.delta", properties: { sessionID: SES, messageID: "msg_a2", partID: "prt_a2", field: "text", delta: "Fixed: seconds vs milliseconds." } },
  asstMsg("msg_a2", "msg_u1", { t: 2600, completed: 2900, finish: "stop" }),
]

// ------------------------------------------------------------------------------------------- pure parts
test("flushReason: 50 tool calls, 15 prompts or 10 minutes since the oldest unsent event", () => {
  assert.equal(flushReason({ tools: 49, prompts: 14, firstAt: 0 }, 599_999, POLICY), null)
  assert.equal(flushReason({ tools: 50, prompts: 0, firstAt: 0 }, 0, POLICY), "tools")
  assert.equal(flushReason({ tools: 0, prompts: 15, firstAt: 0 }, 0, POLICY), "prompts")
  assert.equal(flushReason({ tools: 0, prompts: 1, firstAt: 1000 }, 601_000, POLICY), "age")
  assert.equal(flushReason({ tools: 0, prompts: 0, firstAt: null }, 10 ** 9, POLICY), null)
  assert.ok(isNewBoundary("/new") && isNewBoundary("  /new please") && !isNewBoundary("/newer") && !isNewBoundary("a /new"))
  assert.equal(stripInjected("a <developer_context>x</developer_context> b"), "a  b")
  assert.equal(stripInjected("a <developer_context>unclosed"), "a")
})

test("RawBuffer sends each settled message and part once, in order, without synthetic or injected text", () => {
  const buf = new RawBuffer()
  feed(buf, TURN.slice(0, 6)) // the prompt, and a step whose tool is still running
  let out = buf.take(SES)
  assert.deepEqual(out.map((e) => e.kind), ["user_prompt"]) // answered: settled; nothing of the step yet
  assert.deepEqual(out[0].payload, { text: "fix the failing test", compaction: false })
  assert.equal(out[0].event_id, "msg_u1")
  assert.equal(out[0].at, 1000)
  buf.markSent(SES, out.map((e) => e.event_id))
  feed(buf, TURN.slice(6))
  out = buf.take(SES)
  assert.deepEqual(out.map((e) => [e.kind, e.event_id]), [
    ["tool_call", "prt_t1"],
    ["assistant_message", "msg_a1"],
    ["assistant_message", "msg_a2"],
  ])
  const [tool, step, answer] = out
  assert.deepEqual(tool.payload, { message_id: "msg_a1", tool: "bash", call_id: "call_prt_t1", status: "completed", input: { command: "npm test" }, output: "1 failing", error: null, title: "npm test", exit: 1 })
  assert.equal(step.payload.finish, "tool-calls")
  assert.equal(step.payload.steps, 1)
  assert.deepEqual(answer.payload.texts, ["Fixed: seconds vs milliseconds."]) // from the streamed delta
  assert.equal(answer.payload.parent_id, "msg_u1")
  buf.markSent(SES, out.map((e) => e.event_id))
  assert.deepEqual(buf.take(SES, { final: true }), [])
  // a late update of something already sent is not sent again, and finished messages are forgotten
  feed(buf, [toolPart("prt_t1", "msg_a1", "completed", "1 failing"), asstMsg("msg_a2", "msg_u1", { completed: 2900, finish: "stop" })])
  assert.deepEqual(buf.take(SES, { final: true }), [])
  assert.equal(buf.sessions.get(SES).messages.size, 0)
})

test("RawBuffer: an unanswered prompt waits for the session's end; a running step is never sent", () => {
  const buf = new RawBuffer()
  feed(buf, [userMsg("msg_u1"), textPart("prt_u1", "msg_u1", "hello")])
  assert.deepEqual(buf.take(SES), [])
  assert.deepEqual(buf.take(SES, { final: true }).map((e) => e.kind), ["user_prompt"])
  feed(buf, [asstMsg("msg_a1", "msg_u1"), toolPart("prt_t1", "msg_a1", "running")])
  assert.deepEqual(buf.take(SES, { final: true }).map((e) => e.kind), ["user_prompt"])
  // an assistant message that failed is settled even with a tool left running
  feed(buf, [asstMsg("msg_a1", "msg_u1", { completed: 3000, error: { name: "MessageAbortedError", data: { message: "aborted" } } })])
  const failed = buf.take(SES, { final: true }).find((e) => e.kind === "assistant_message")
  assert.equal(failed?.payload.error, "MessageAbortedError: aborted")
  // a prompt with no parts yet is not sent (it would be stored without its words)
  const empty = new RawBuffer()
  feed(empty, [userMsg("msg_u9")])
  assert.deepEqual(empty.take(SES, { final: true }), [])
})

test("RawBuffer counts finished tool calls and prompts once each, and a flush resets the counters", () => {
  const buf = new RawBuffer()
  feed(buf, TURN, 5000)
  const c = buf.sessions.get(SES).counters
  assert.deepEqual(c, { tools: 1, prompts: 1, firstAt: 5000 })
  feed(buf, [toolPart("prt_t1", "msg_a1", "completed", "again"), userMsg("msg_u1")], 6000)
  assert.deepEqual(buf.sessions.get(SES).counters, { tools: 1, prompts: 1, firstAt: 5000 })
  for (let i = 0; i < 60; i++) feed(buf, [toolPart(`prt_x${i}`, "msg_a1", "completed", "ok")], 7000)
  assert.equal(flushReason(buf.sessions.get(SES).counters, 7000, POLICY), "tools")
  buf.markSent(SES, buf.take(SES).map((e) => e.event_id))
  buf.flushed(SES, 8000)
  assert.deepEqual(buf.sessions.get(SES).counters, { tools: 0, prompts: 0, firstAt: null })
})

test("batches: under the byte budget and the event cap; an oversized event is cut down to fit", () => {
  const ev = (i, size) => ({ event_id: `prt_${i}`, session_id: SES, kind: "tool_call", at: i, payload: { output: "x".repeat(size), input: { content: "y".repeat(size) } } })
  const events = Array.from({ length: 10 }, (_, i) => ev(i, 1000))
  const split = batches(events, 5000, 500, 0)
  assert.deepEqual(split.flat().map((e) => e.event_id), events.map((e) => e.event_id))
  for (const b of split) assert.ok(Buffer.byteLength(JSON.stringify(b)) <= 5000, "batch over budget")
  assert.ok(split.length >= 3)
  assert.equal(batches(events, 1_000_000, 4).length, 3)
  const [[huge]] = batches([ev(1, 100_000)], 8000, 500, 0)
  assert.ok(Buffer.byteLength(JSON.stringify(huge)) <= 8000)
  assert.equal(huge.event_id, "prt_1")
  assert.match(String(huge.payload.output), /^x+…$/)
  assert.deepEqual(clipDeep({ a: ["abcdef", 3, { b: "xyz" }] }, 3), { a: ["ab…", 3, { b: "xyz" }] })
})

test("RawStream: a failure opens a backoff window that doubles; success closes it; limits come from the preflight", () => {
  const s = new RawStream(1000, 8000, 60_000, 256_000)
  assert.ok(!s.waiting(0) && s.needsStatus(0))
  s.status({ accepting: true, max_body_bytes: 20_000, max_events: 200 }, 0)
  assert.equal(s.maxBytes, 20_000)
  assert.equal(s.maxEvents, 200)
  assert.ok(!s.needsStatus(59_999) && s.needsStatus(60_000))
  assert.equal(s.fail("unreachable", 100), true) // opens the window (reported once)
  assert.ok(s.waiting(100) && s.waiting(1099) && !s.waiting(1100))
  assert.ok(s.needsStatus(1100)) // after the window: preflight again
  assert.equal(s.fail("unreachable", 1100), false)
  assert.ok(s.waiting(3099) && !s.waiting(3100)) // 2 s
  s.fail("unreachable", 3100)
  s.fail("unreachable", 7100)
  s.fail("unreachable", 15100)
  assert.ok(s.waiting(23099) && !s.waiting(23100)) // capped at 8 s
  assert.equal(s.ok(), true)
  assert.ok(!s.waiting(23100))
  s.noStore(30_000)
  assert.ok(s.waiting(89_999) && !s.waiting(90_000))
  s.status({ accepting: false, max_body_bytes: 10_000_000 }, 0)
  assert.equal(s.accepting, false)
  assert.equal(s.maxBytes, 256_000) // never above the configured size
})

test("resolveConfig: raw-event defaults, env overrides, CODEMEMORY_NO_CAPTURE turns streaming off", () => {
  const c = resolveConfig({}, { HOME: "/home/u" })
  assert.equal(c.rawEvents, true)
  assert.deepEqual([c.flushToolCalls, c.flushPrompts, c.flushMaxAgeMs, c.rawBackoffMs], [50, 15, 600_000, 5000])
  assert.equal(resolveConfig({}, { HOME: "/h", CODEMEMORY_RAW_EVENTS_BACKOFF_MS: "250" }).rawBackoffMs, 250)
  assert.equal(resolveConfig({}, { HOME: "/h", CODEMEMORY_NO_CAPTURE: "1" }).rawEvents, false)
  assert.equal(resolveConfig({ rawEvents: false }, { HOME: "/h" }).rawEvents, false)
  assert.equal(resolveConfig({}, { HOME: "/h", CODEMEMORY_NO_CAPTURE: "0" }).rawEvents, true)
})

// ------------------------------------------------------------------------------ the event hook over HTTP
/** The daemon's raw-event contract: status, and batches stored once per event id. */
async function rawDaemon() {
  const stored = new Map()
  const requests = []
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      const send = (status, data) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(data))
      }
      const data = body ? JSON.parse(body) : null
      requests.push({ method: req.method, path: req.url, body: data })
      if (req.headers.authorization !== "Bearer secret-token") return send(401, { error: "bad token" })
      if (server.down) return send(503, { error: "the store could not be used" })
      if (req.url.startsWith("/api/raw-events/status")) return send(200, { accepting: true, version: "t", max_body_bytes: 20_000, max_events: 500 })
      if (req.url === "/api/raw-events") {
        let accepted = 0
        for (const e of data.events) if (!stored.has(e.event_id)) stored.set(e.event_id, e) && accepted++
        return send(200, { batch_id: data.batch_id, received: data.events.length, accepted, duplicates: data.events.length - accepted, pending: 0, project_root: data.project_root })
      }
      send(404, { error: "not found" })
    })
  })
  server.down = false
  await new Promise((r) => server.listen(0, "127.0.0.1", r))
  const state = mkdtempSync(join(tmpdir(), "cm-raw-"))
  writeFileSync(join(state, "token"), "secret-token\n")
  writeFileSync(join(state, "daemon.json"), JSON.stringify({ pid: 1, port: server.address().port }))
  return { server, stored, requests, state, close: () => new Promise((r) => server.close(r)) }
}

async function rawHooks(d, clock, options = {}) {
  const logs = []
  const hooks = await createHooks({ directory: "/repo" }, { stateDir: d.state, tools: false, hud: false, coldStart: false, ...options }, { now: () => clock.t, log: (l, m) => logs.push([l, m]) })
  return { hooks, logs, send: async (events) => { for (const event of events) await hooks.event({ event }) } }
}

test("the event hook streams a session once on session.idle, with a preflight; a replay sends nothing new", async () => {
  const d = await rawDaemon()
  try {
    const clock = { t: 0 }
    const { hooks, send } = await rawHooks(d, clock)
    await send(TURN)
    assert.equal(d.requests.length, 0) // nothing before a trigger
    await send([idle()])
    assert.deepEqual(d.requests.map((r) => `${r.method} ${r.path.split("?")[0]}`), ["GET /api/raw-events/status", "POST /api/raw-events"])
    assert.match(d.requests[0].path, /project_root=%2Frepo$/)
    const posted = d.requests[1].body
    assert.equal(posted.project_root, "/repo")
    assert.equal(posted.source, "opencode")
    assert.deepEqual(posted.events.map((e) => e.event_id), ["msg_u1", "prt_t1", "msg_a1", "msg_a2"])
    // the same bus events again (OpenCode re-publishing), another idle: nothing is sent twice
    await send([...TURN, idle()])
    assert.equal(d.requests.filter((r) => r.method === "POST").length, 1)
    assert.equal(d.stored.size, 4)
    await hooks.dispose()
    assert.equal(d.requests.filter((r) => r.method === "POST").length, 1)
  } finally {
    await d.close()
  }
})

test("thresholds flush before idle: 50 tool calls, 15 prompts, 10 minutes; /new and session.created flush too", async () => {
  const d = await rawDaemon()
  try {
    const clock = { t: 0 }
    const { send } = await rawHooks(d, clock)
    const posts = () => d.requests.filter((r) => r.method === "POST")
    await send([userMsg("msg_u1"), textPart("prt_u1", "msg_u1", "go"), asstMsg("msg_a1", "msg_u1")])
    for (let i = 0; i < 49; i++) await send([toolPart(`prt_t${String(i).padStart(2, "0")}`, "msg_a1", "completed", "ok")])
    assert.equal(posts().length, 0)
    await send([toolPart("prt_t49", "msg_a1", "completed", "ok")]) // the 50th
    assert.equal(posts().length, 1)
    assert.equal(posts()[0].body.events.filter((e) => e.kind === "tool_call").length, 50)
    // 15 prompts (each answered by the next one)
    for (let i = 0; i < 15; i++) await send([userMsg(`msg_p${String(i).padStart(2, "0")}`, 10_000 + i), textPart(`prt_p${i}`, `msg_p${String(i).padStart(2, "0")}`, `prompt ${i}`)])
    assert.equal(posts().length, 2)
    // 10 minutes after the oldest unsent event
    clock.t = 1_000
    await send([userMsg("msg_q1", 20_000), textPart("prt_q1", "msg_q1", "slow one"), asstMsg("msg_b1", "msg_q1", { t: 20_001, completed: 20_002, finish: "stop" })])
    const before = posts().length
    clock.t = 601_000
    await send([textPart("prt_b1", "msg_b1", "done", {})])
    assert.equal(posts().length, before + 1)
    // /new typed as a prompt, and a new session, flush what is buffered
    await send([asstMsg("msg_b2", "msg_q1", { t: 20_003, completed: 20_004, finish: "stop" }), userMsg("msg_new", 30_000), textPart("prt_new", "msg_new", "/new")])
    assert.ok(posts().at(-1).body.events.some((e) => e.event_id === "msg_b2"))
    const n = posts().length
    await send([asstMsg("msg_b3", "msg_q1", { t: 20_005, completed: 20_006, finish: "stop" })])
    await send([{ type: "session.created", properties: { sessionID: "ses_raw2", info: { id: "ses_raw2", title: "t", time: { created: 40_000 } } } }])
    assert.equal(posts().length, n + 1)
    assert.ok(posts().at(-1).body.events.some((e) => e.event_id === "msg_b3"))
    // every event arrived once
    const ids = posts().flatMap((p) => p.body.events.map((e) => e.event_id))
    assert.equal(ids.length, new Set(ids).size)
  } finally {
    await d.close()
  }
})

test("daemon down: events stay buffered inside a backoff window, one warning, then arrive once after it", async () => {
  const d = await rawDaemon()
  try {
    const clock = { t: 0 }
    const { hooks, send, logs } = await rawHooks(d, clock, { rawBackoffMs: 1000 })
    d.server.down = true
    await send([...TURN, idle()])
    assert.equal(d.requests.length, 1) // the preflight failed (503): nothing posted
    assert.ok(hooks._state.stream.waiting(clock.t))
    assert.equal(logs.filter(([l]) => l === "warn").length, 1)
    assert.match(logs[0][1], /live capture paused/)
    // inside the window: no I/O at all
    await send([idle(), { type: "session.error", properties: { sessionID: SES } }])
    assert.equal(d.requests.length, 1)
    // after the window, still down: the window doubles, no second warning
    clock.t = 1000
    await send([idle()])
    assert.equal(d.requests.length, 2)
    assert.equal(hooks._state.stream.health.nextCheckAt, 3000)
    assert.equal(logs.filter(([l]) => l === "warn").length, 1)
    // the daemon is back: after the window, the buffered events arrive once, and the stream says so
    d.server.down = false
    clock.t = 3000
    await send([idle()])
    const posts = d.requests.filter((r) => r.method === "POST")
    assert.equal(posts.length, 1)
    assert.deepEqual(posts[0].body.events.map((e) => e.event_id), ["msg_u1", "prt_t1", "msg_a1", "msg_a2"])
    assert.match(logs.at(-1)[1], /resumed/)
    await send([idle()])
    assert.equal(d.requests.filter((r) => r.method === "POST").length, 1)
  } finally {
    await d.close()
  }
})

test("a project without a store (404) is not streamed; CODEMEMORY_NO_CAPTURE never streams", async () => {
  const d = await rawDaemon()
  d.server.removeAllListeners("request")
  d.server.on("request", (req, res) => {
    d.requests.push({ path: req.url })
    res.writeHead(404, { "content-type": "application/json" })
    res.end(JSON.stringify({ error: "no codememory store for /repo" }))
  })
  try {
    const clock = { t: 0 }
    const { hooks, send, logs } = await rawHooks(d, clock)
    await send([...TURN, idle()])
    assert.equal(d.requests.length, 1)
    assert.equal(logs.length, 0) // not an outage
    assert.equal(hooks._state.raw.sessions.size, 0) // nothing kept
    const off = await rawHooks(d, clock, { rawEvents: false })
    await off.send([...TURN, idle()])
    assert.equal(d.requests.length, 1)
  } finally {
    await d.close()
  }
})
