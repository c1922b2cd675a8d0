// The optional query model ("subcortical" option) and the optional daemon autostart ("autoStartDaemon"), against
// real local HTTP servers: one plays an OpenAI-compatible chat endpoint, one plays the daemon (as plugin.test.js).
import assert from "node:assert/strict"
import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { test } from "node:test"

import {
  SUBCORTICAL_PROMPT,
  createHooks,
  deriveQuery,
  hudInput,
  mergeDerived,
  parseSubcortical,
  resolveConfig,
  resolveSubcortical,
  subcorticalMessage,
} from "../src/index.ts"

const SES = "ses_sub1"
const KEY_ENV = "CODEMEMORY_TEST_SUBCORTICAL_KEY"
const KEY = "sk-test-0123456789-very-secret"

function user(text) {
  return { info: { id: "msg_u1", sessionID: SES, role: "user", agent: "build", model: { providerID: "p", modelID: "m" } }, parts: [{ type: "text", text }] }
}
function toolPart(tool, input, output) {
  return { type: "tool", tool, callID: `call_${tool}`, state: { status: "completed", input, output } }
}
const CONVERSATION = [
  user("Add retries to the webhook worker in src/webhook_worker.py; the HTTPError from `fetchPayload` keeps failing."),
  {
    info: { id: "msg_a1", sessionID: SES, role: "assistant" },
    parts: [
      toolPart("read", { filePath: "/repo/src/webhook_worker.py" }, "import requests\n" + "x".repeat(2000)),
      toolPart("bash", { command: "pytest tests/test_worker.py" }, "E   ModuleNotFoundError: No module named requests\n1 failed"),
    ],
  },
]
const MEM = { id: "mem_0000abcd", text: "Retry webhooks with exponential backoff (max 5)", category: "decision", importance: 0.9 }
const GOOD = { query_expansion: ["webhook retry policy", "exponential backoff for failed deliveries"], entities: ["tenacity", "fetchPayload"] }

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
async function until(cond, ms = 3000) {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting")
    await sleep(5)
  }
}

/** The daemon stand-in: /health, /retrieve (records bodies). */
async function fakeDaemon() {
  const requests = []
  const server = createServer((req, res) => {
    let raw = ""
    req.on("data", (c) => (raw += c))
    req.on("end", () => {
      requests.push({ path: req.url, body: raw ? JSON.parse(raw) : null })
      res.writeHead(req.url === "/health" || req.url === "/retrieve" ? 200 : 404, { "content-type": "application/json" })
      res.end(JSON.stringify(req.url === "/retrieve" ? { memories: [MEM], degraded: false } : req.url === "/health" ? { status: "ok" } : { error: "nf" }))
    })
  })
  await new Promise((r) => server.listen(0, "127.0.0.1", r))
  const state = mkdtempSync(join(tmpdir(), "cm-sub-"))
  writeFileSync(join(state, "token"), "secret-token\n")
  writeFileSync(join(state, "daemon.json"), JSON.stringify({ pid: 1, host: "127.0.0.1", port: server.address().port }))
  const retrieves = () => requests.filter((r) => r.path === "/retrieve" && r.body.query_expansion[0] !== "zqxjvkwpf").map((r) => r.body)
  return { server, requests, retrieves, state, close: () => close(server) }
}

/** An OpenAI-compatible chat endpoint; `behave` decides each answer: {delayMs, status, body, content}. */
async function fakeModel(behave) {
  const requests = []
  const server = createServer((req, res) => {
    let raw = ""
    req.on("data", (c) => (raw += c))
    req.on("end", () => {
      const body = raw ? JSON.parse(raw) : null
      requests.push({ path: req.url, method: req.method, auth: req.headers.authorization, body })
      const b = server.behave(req, body)
      setTimeout(() => {
        if (res.destroyed) return
        res.writeHead(b.status ?? 200, { "content-type": "application/json" })
        const content = typeof b.content === "string" ? b.content : JSON.stringify(b.content ?? GOOD)
        if (typeof b.body === "string") return res.end(b.body) // raw text, not JSON
        res.end(JSON.stringify(b.body ?? { id: "c1", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] }))
      }, b.delayMs ?? 0)
    })
  })
  server.behave = behave ?? (() => ({}))
  await new Promise((r) => server.listen(0, "127.0.0.1", r))
  return { server, requests, baseURL: `http://127.0.0.1:${server.address().port}/v1`, close: () => close(server) }
}

function close(server) {
  server.closeAllConnections?.()
  return new Promise((r) => server.close(r))
}

async function hooksWith(daemon, model, sub = {}, extra = {}, clock = { t: 0 }) {
  const logs = []
  const hooks = await createHooks(
    { directory: "/repo" },
    { stateDir: daemon.state, tools: false, coldStart: false, rawEvents: false, coldStartTimeoutMs: 10_000, subcortical: { baseURL: model.baseURL, model: "tiny-q4", apiKeyEnv: KEY_ENV, ...sub }, ...extra },
    { now: () => clock.t, log: (l, m) => logs.push([l, m]) },
  )
  await hooks._state.ready
  return { hooks, logs, clock }
}

async function transform(hooks, messages = CONVERSATION) {
  const output = { messages: structuredClone(messages) }
  await hooks["experimental.chat.messages.transform"]({}, output)
  return output.messages
}

const DETERMINISTIC = deriveQuery(hudInput(CONVERSATION, resolveConfig({}, {}), []))

// ------------------------------------------------------------------------------------------ pure parts
test("resolveSubcortical: off without a model; Ollama and the documented defaults otherwise", () => {
  assert.equal(resolveSubcortical(undefined), null)
  assert.equal(resolveSubcortical({ baseURL: "http://x/v1" }), null)
  assert.equal(resolveSubcortical({ model: "m", enabled: false }), null)
  assert.deepEqual(resolveSubcortical({ model: "gemma3:1b" }), {
    baseURL: "http://127.0.0.1:11434/v1",
    model: "gemma3:1b",
    apiKeyEnv: null,
    timeoutMs: 800,
    maxTokens: 256,
    inputChars: 4000,
    jsonMode: true,
    backoffMs: 30_000,
    backoffMaxMs: 600_000,
  })
  const c = resolveSubcortical({ model: "m", baseURL: "https://api.example.com/v1/", timeoutMs: 1, apiKeyEnv: "K", jsonMode: false })
  assert.equal(c.baseURL, "https://api.example.com/v1")
  assert.equal(c.timeoutMs, 50)
  assert.equal(c.jsonMode, false)
  const d = resolveConfig({}, {})
  assert.equal(d.subcortical, null)
  assert.equal(d.autoStartDaemon, false)
  assert.equal(d.codememoryBin, "codememory")
})

test("parseSubcortical validates the answer: arrays of short strings, capped; anything else throws", () => {
  assert.deepEqual(parseSubcortical(JSON.stringify(GOOD)), GOOD)
  // a fence or words around the object, a ';'-separated string, non-strings and duplicates dropped
  const messy = '```json\n{"query_expansion": "a b c; d e f;  ; A B C", "entities": ["x", 3, null, "X", "  y\\n z ", "' + "e".repeat(101) + '"]}\n```'
  assert.deepEqual(parseSubcortical(messy), { query_expansion: ["a b c", "d e f"], entities: ["x", "y z"] })
  const big = parseSubcortical(JSON.stringify({ query_expansion: Array.from({ length: 20 }, (_, i) => `p${i} ` + "w".repeat(300)), entities: Array.from({ length: 40 }, (_, i) => `e${i}`) }))
  assert.equal(big.query_expansion.length, 8)
  assert.ok(big.query_expansion.every((p) => p.length <= 160))
  assert.equal(big.entities.length, 16)
  assert.deepEqual(parseSubcortical('{"entities": ["only"]}'), { query_expansion: [], entities: ["only"] })
  for (const bad of ["", "sure! here you go", "{not json}", "[1,2]", '{"answer": "x"}', '{"query_expansion": 5}', '{"query_expansion": ["a"], "entities": "x"}', null]) {
    assert.throws(() => parseSubcortical(bad), undefined, String(bad))
  }
})

test("mergeDerived: the model's phrases and entities first, then the deterministic ones, deduped and capped", () => {
  const m = mergeDerived({ query_expansion: ["A", "b"], entities: ["fetchPayload", "tenacity"] }, { query_expansion: ["a", "c", ...Array.from({ length: 10 }, (_, i) => `d${i}`)], entities: ["FETCHPAYLOAD", "HTTPError"] })
  assert.deepEqual(m.query_expansion, ["A", "b", "c", "d0", "d1", "d2", "d3", "d4"])
  assert.deepEqual(m.entities, ["fetchPayload", "tenacity", "HTTPError"])
  // the model's phrases lead: the daemon takes the first for the request, as before; without them, the base's count
  assert.equal("request_phrases" in mergeDerived({ query_expansion: ["A"], entities: [] }, { query_expansion: ["b", "c"], entities: [], request_phrases: 2 }), false)
  assert.equal(mergeDerived({ query_expansion: [], entities: ["x"] }, { query_expansion: ["b", "c"], entities: [], request_phrases: 2 }).request_phrases, 2)
})

test("subcorticalMessage carries the user's words and the tool calls, bounded", () => {
  const input = hudInput(CONVERSATION, resolveConfig({}, {}), [])
  const msg = subcorticalMessage(input, 4000)
  assert.match(msg, /Add retries to the webhook worker/)
  assert.match(msg, /2\. bash command="pytest tests\/test_worker.py"/)
  assert.match(msg, /ModuleNotFoundError/)
  assert.ok(subcorticalMessage({ userText: "z".repeat(50_000), tools: input.tools, pinned: [] }, 1000).length <= 1000)
})

// ------------------------------------------------------------------------------------ over HTTP
test("a good answer is used: Bearer key from the env var, JSON mode, the model's phrases first in /retrieve", async () => {
  const d = await fakeDaemon()
  const m = await fakeModel()
  process.env[KEY_ENV] = KEY
  try {
    const { hooks, logs } = await hooksWith(d, m)
    assert.equal(m.requests.length, 0) // nothing asked at load
    const out = await transform(hooks)
    assert.equal(out.length, CONVERSATION.length + 1) // the turn's block
    assert.equal(m.requests.length, 1)
    const r = m.requests[0]
    assert.equal(r.path, "/v1/chat/completions")
    assert.equal(r.auth, `Bearer ${KEY}`)
    assert.equal(r.body.model, "tiny-q4")
    assert.deepEqual(r.body.response_format, { type: "json_object" })
    assert.equal(r.body.stream, false)
    assert.equal(r.body.max_tokens, 256)
    assert.equal(r.body.messages[0].role, "system")
    assert.equal(r.body.messages[0].content, SUBCORTICAL_PROMPT)
    assert.match(r.body.messages[1].content, /webhook worker[\s\S]*pytest tests\/test_worker\.py/)
    const [body] = d.retrieves()
    assert.deepEqual(body.query_expansion.slice(0, 2), GOOD.query_expansion)
    assert.equal(body.query_expansion[2], DETERMINISTIC.query_expansion[0]) // then the deterministic phrases
    assert.ok(body.query_expansion.length <= 8)
    assert.deepEqual(body.entities.slice(0, 2), GOOD.entities)
    assert.ok(body.entities.includes("src/webhook_worker.py") && body.entities.filter((e) => e === "fetchPayload").length === 1)
    assert.equal(logs.length, 0)
    assert.equal(hooks._state.subcortical.last.model, "used")
  } finally {
    delete process.env[KEY_ENV]
    await m.close()
    await d.close()
  }
})

test("no apiKeyEnv (Ollama): no Authorization header; jsonMode false: no response_format", async () => {
  const d = await fakeDaemon()
  const m = await fakeModel()
  try {
    const { hooks } = await hooksWith(d, m, { apiKeyEnv: undefined, jsonMode: false })
    await transform(hooks)
    assert.equal(m.requests[0].auth, undefined)
    assert.equal(m.requests[0].body.response_format, undefined)
  } finally {
    await m.close()
    await d.close()
  }
})

test("a slow model: deterministic query within ~timeoutMs, then skipped (no request) until the window; retried in the background", async () => {
  const d = await fakeDaemon()
  const m = await fakeModel(() => ({ delayMs: 2000 }))
  try {
    const { hooks, logs, clock } = await hooksWith(d, m, { timeoutMs: 100, backoffMs: 1000 })
    const out = await transform(hooks) // cut off at timeoutMs, not the model's 2 s (the log below names the cut-off)
    assert.equal(out.length, CONVERSATION.length + 1) // the call still got its memories
    assert.deepEqual(d.retrieves()[0].query_expansion, DETERMINISTIC.query_expansion)
    assert.deepEqual(d.retrieves()[0].entities, DETERMINISTIC.entities)
    assert.equal(m.requests.length, 1)
    assert.equal(logs.length, 1)
    assert.equal(logs[0][0], "warn")
    assert.match(logs[0][1], /query model tiny-q4 unavailable \(no answer within 100 ms\)/)
    // Backed off: the next calls do not touch the model at all.
    for (let i = 0; i < 5; i++) {
      clock.t += 100
      await transform(hooks)
    }
    assert.equal(m.requests.length, 1)
    assert.equal(hooks._state.subcortical.last.model, "skipped")
    assert.deepEqual(d.retrieves().at(-1).query_expansion, DETERMINISTIC.query_expansion)
    // After the window: this call still goes without the model while it is re-tried in the background.
    m.server.behave = () => ({})
    clock.t += 1000
    await transform(hooks)
    assert.equal(hooks._state.subcortical.last.model, "skipped")
    assert.deepEqual(d.retrieves().at(-1).query_expansion, DETERMINISTIC.query_expansion)
    await until(() => !hooks._state.subcortical.health.checking)
    assert.equal(m.requests.length, 2)
    assert.equal(logs.at(-1)[0], "info")
    assert.match(logs.at(-1)[1], /answering again/)
    await transform(hooks) // the model is back in the path
    assert.equal(m.requests.length, 3)
    assert.deepEqual(d.retrieves().at(-1).query_expansion.slice(0, 2), GOOD.query_expansion)
    assert.deepEqual(logs.map((l) => l[0]), ["warn", "info"])
  } finally {
    await m.close()
    await d.close()
  }
})

test("invalid JSON or an HTTP 500: the deterministic query, one warning, and the key never in logs or traces", async () => {
  for (const [behave, reason] of [
    [() => ({ content: "Sure! The queries are: webhook retries" }), /no JSON object in the answer/],
    [() => ({ content: '{"query_expansion": ["unterminated' }), /no JSON object|invalid JSON/],
    [() => ({ content: { answer: 42 } }), /neither query_expansion nor entities/],
    [() => ({ body: "<html>Bad Gateway</html>" }), /the endpoint did not answer JSON/],
    [(req) => ({ status: 500, body: { error: { message: `upstream failed for key ${req.headers.authorization}` } } }), /HTTP 500: upstream failed for key Bearer \[redacted\]/],
    [(req) => ({ status: 401, body: { error: `Incorrect API key provided: ${req.headers.authorization.slice(7)}` } }), /HTTP 401: Incorrect API key provided: \[redacted\]/],
  ]) {
    const d = await fakeDaemon()
    const m = await fakeModel(behave)
    const traceFile = join(d.state, "trace.jsonl")
    process.env[KEY_ENV] = KEY
    try {
      const { hooks, logs, clock } = await hooksWith(d, m, {}, { traceFile })
      const out = await transform(hooks)
      assert.equal(out.length, CONVERSATION.length + 1)
      assert.deepEqual(d.retrieves()[0].query_expansion, DETERMINISTIC.query_expansion)
      assert.equal(m.requests[0].auth, `Bearer ${KEY}`) // the key was sent...
      assert.equal(logs.length, 1)
      assert.match(logs[0][1], reason)
      clock.t += 10
      await transform(hooks)
      assert.equal(m.requests.length, 1) // backed off
      const trace = readFileSync(traceFile, "utf8")
      assert.match(trace, /"subcortical":\{"model":"failed"/)
      for (const text of [...logs.map((l) => l[1]), trace]) assert.ok(!text.includes(KEY) && !text.includes(KEY.slice(0, 12)), text) // ...and never logged
    } finally {
      delete process.env[KEY_ENV]
      await m.close()
      await d.close()
    }
  }
})

test("a model that refuses connections: fallback at once, one warning", async () => {
  const d = await fakeDaemon()
  const m = await fakeModel()
  await m.close()
  try {
    const { hooks, logs } = await hooksWith(d, m)
    await transform(hooks)
    assert.deepEqual(d.retrieves()[0].query_expansion, DETERMINISTIC.query_expansion)
    assert.equal(logs.length, 1)
    assert.match(logs[0][1], /unreachable \(ECONNREFUSED\)/)
  } finally {
    await d.close()
  }
})

test("calls that skip the daemon do not ask the model; a subcortical option without a model warns and stays off", async () => {
  const m = await fakeModel()
  try {
    const { hooks } = await hooksWith({ state: mkdtempSync(join(tmpdir(), "cm-sub-")) }, m) // no daemon.json
    for (let i = 0; i < 3; i++) assert.equal((await transform(hooks)).length, CONVERSATION.length)
    assert.equal(m.requests.length, 0)
    const logs = []
    const off = await createHooks({ directory: "/repo" }, { stateDir: mkdtempSync(join(tmpdir(), "cm-sub-")), tools: false, coldStart: false, rawEvents: false, subcortical: { baseURL: m.baseURL } }, { log: (l, x) => logs.push([l, x]) })
    assert.equal(off._state.subcortical, null)
    assert.ok(logs.some(([l, x]) => l === "warn" && /subcortical option has no model/.test(x)))
  } finally {
    await m.close()
  }
})

// ---------------------------------------------------------------------------------------- autostart
/** A stand-in `codememory` executable: appends its arguments to `marker`, then runs `then` (shell), exits with `code`. */
function fakeBin(dir, { code = 0, then = "" } = {}) {
  const marker = join(dir, "spawned.txt")
  const bin = join(dir, "codememory")
  writeFileSync(bin, `#!/bin/sh\necho "$@" >> "${marker}"\n${then}\nexit ${code}\n`)
  chmodSync(bin, 0o755)
  return { bin, marker, lines: () => (existsSync(marker) ? readFileSync(marker, "utf8").trim().split("\n") : []) }
}

async function hooksNoModel(state, extra = {}, clock = { t: 0 }) {
  const logs = []
  const hooks = await createHooks({ directory: "/repo" }, { stateDir: state, tools: false, coldStart: false, rawEvents: false, retryMinMs: 100, ...extra }, { now: () => clock.t, log: (l, m) => logs.push([l, m]) })
  await hooks._state.ready
  return { hooks, logs, clock }
}

test("autoStartDaemon: no daemon.json → `codememory daemon start` spawned once, the calls not waiting for it", async () => {
  const state = mkdtempSync(join(tmpdir(), "cm-auto-"))
  const release = join(state, "release")
  const fake = fakeBin(state, { then: `while [ ! -e "${release}" ]; do sleep 0.01; done` })
  const { hooks, logs, clock } = await hooksNoModel(state, { autoStartDaemon: true, codememoryBin: fake.bin })
  // The load-time warm-up found no daemon: the start is under way (it does not end until released); calls go on
  // without memory meanwhile.
  for (let i = 0; i < 20; i++) {
    clock.t += 1000 // background /health checks fall due and fail again
    assert.equal((await transform(hooks)).length, CONVERSATION.length)
  }
  assert.equal(hooks._state.autoStart.exit, null)
  writeFileSync(release, "")
  await until(() => hooks._state.autoStart.exit !== null)
  for (let i = 0; i < 20; i++) {
    clock.t += 1000
    await transform(hooks)
  }
  assert.deepEqual(fake.lines(), ["daemon start"])
  assert.equal(hooks._state.autoStart.attempts, 1)
  assert.ok(logs.some(([l, m]) => l === "info" && /starting it/.test(m)))
  assert.ok(!logs.some(([, m]) => /could not start/.test(m)))
})

test("autoStartDaemon off (the default): nothing is spawned", async () => {
  const state = mkdtempSync(join(tmpdir(), "cm-auto-"))
  const fake = fakeBin(state)
  const { hooks, clock } = await hooksNoModel(state, { codememoryBin: fake.bin })
  for (let i = 0; i < 5; i++) {
    clock.t += 1000
    await transform(hooks)
  }
  assert.deepEqual(fake.lines(), [])
  assert.equal(hooks._state.autoStart.attempts, 0)
})

test("autoStartDaemon: once the start succeeds the daemon is checked at once and memories come back", async () => {
  const d = await fakeDaemon()
  renameSync(join(d.state, "daemon.json"), join(d.state, "daemon.json.off")) // not running
  const fake = fakeBin(d.state, { then: `mv "${join(d.state, "daemon.json.off")}" "${join(d.state, "daemon.json")}"` })
  try {
    const { hooks, logs } = await hooksNoModel(d.state, { autoStartDaemon: true, codememoryBin: fake.bin, retryMinMs: 3_600_000, retryMaxMs: 3_600_000 })
    assert.ok(hooks._state.health.down)
    assert.equal((await transform(hooks)).length, CONVERSATION.length)
    // The clock stands still, so only the autostart's own /health check can bring the daemon back.
    await until(() => !hooks._state.health.down)
    assert.equal((await transform(hooks)).length, CONVERSATION.length + 1)
    assert.deepEqual(fake.lines(), ["daemon start"])
    assert.match(logs.at(-1)[1], /resumed/)
  } finally {
    await d.close()
  }
})

test("autoStartDaemon: a failing start is logged once; another attempt only after autoStartRetryMs; a port that refuses counts as absent", async () => {
  const d = await fakeDaemon()
  await d.close() // daemon.json names a port nothing listens on
  const fake = fakeBin(d.state, { code: 1 })
  const { hooks, logs, clock } = await hooksNoModel(d.state, { autoStartDaemon: true, codememoryBin: fake.bin, autoStartRetryMs: 60_000 })
  await until(() => hooks._state.autoStart.exit !== null && !hooks._state.autoStart.running)
  for (let i = 0; i < 10; i++) {
    clock.t += 5000
    await transform(hooks)
    await sleep(2)
  }
  assert.deepEqual(fake.lines(), ["daemon start"])
  clock.t = 200_000 // past the window: the next failure tries again
  await transform(hooks)
  for (let i = 0; i < 5 && hooks._state.autoStart.attempts < 2; i++) {
    clock.t += 5000
    await transform(hooks)
    await sleep(20)
  }
  await until(() => fake.lines().length === 2 && !hooks._state.autoStart.running)
  assert.equal(logs.filter(([, m]) => /could not start the daemon/.test(m)).length, 1)
  assert.match(logs.find(([, m]) => /could not start/.test(m))[1], /exit 1/)
  // A missing executable is a failure too, never an exception in the call.
  const missing = await hooksNoModel(mkdtempSync(join(tmpdir(), "cm-auto-")), { autoStartDaemon: true, codememoryBin: join(d.state, "no-such-codememory") })
  await until(() => missing.logs.some(([, m]) => /could not start/.test(m)))
  assert.match(missing.logs.find(([, m]) => /could not start/.test(m))[1], /ENOENT/)
})
