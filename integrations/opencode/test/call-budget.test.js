// What codememory adds to one LLM call (src/call.ts, budget.ts, carried.ts, cold-start.ts, hud.ts, derive.ts): the
// query comes from the current request and the tool calls since it; the plugin's tool definitions, the cold-start
// block (first call only) and the HUD stay within the call's budget, the HUD shrinking first; the HUD never shows a
// memory the call already carries; and there is never an empty block.
import assert from "node:assert/strict"
import { test } from "node:test"

import { tool } from "@opencode-ai/plugin"

import { CallBudget, DEFAULT_CALL_BUDGET, fitBlock } from "../src/budget.ts"
import { carriedIds } from "../src/carried.ts"
import { resolveConfig } from "../src/config.ts"
import { MAX_TOOL_PHRASES, deriveQuery } from "../src/derive.ts"
import { createHooks } from "../src/hooks.ts"
import { HUD_MESSAGE_ID, TURN_MESSAGE_ID, hudInput, latestStep } from "../src/messages.ts"
import { formatHud } from "../src/render.ts"
import { estimateTokens, toolDefinitionTokens } from "../src/tokens.ts"
import { fakeDaemon } from "./fake-daemon.js"

const SES = "ses_budget_call"
const id = (i) => `mem_${i.toString(16).padStart(8, "0")}`
/** Memories of about `chars` characters each. */
const memories = (from, n, chars = 200) =>
  Array.from({ length: n }, (_, i) => ({ id: id(from + i), text: `Memory ${from + i}: ${"lorem ipsum ".repeat(chars / 12)}`.trim(), category: "fact" }))

const user = (text, n = 1) => ({ info: { id: `msg_u${n}`, sessionID: SES, role: "user", agent: "build" }, parts: [{ type: "text", text }] })
const assistant = (n, ...parts) => ({ info: { id: `msg_a${n}`, sessionID: SES, role: "assistant" }, parts })
const toolPart = (name, input, output) => ({ type: "tool", tool: name, callID: `call_${name}_${Math.random()}`, state: { status: "completed", input, output } })

/**
 * Plugin hooks over a fake daemon; `call(messages)` runs one LLM call's hooks and says what codememory added: the
 * cold-start block, the turn's block (the request's memories, beside the user's message) and the step's HUD (tail).
 */
async function plugin(routes, options = {}) {
  const d = await fakeDaemon(routes)
  const hooks = await createHooks({ directory: "/repo" }, { stateDir: d.state, rawEvents: false, tools: false, turnBlockMemories: 50, ...options }, { log: () => {} })
  await hooks._state.ready
  const call = async (messages) => {
    const out = { messages: structuredClone(messages) }
    await hooks["experimental.chat.messages.transform"]({}, out)
    const prompt = { system: ["You are opencode"] }
    await hooks["experimental.chat.system.transform"]({ sessionID: SES }, prompt)
    const last = out.messages.at(-1)
    const hud = last?.info?.id === HUD_MESSAGE_ID ? last.parts[0].text : null
    const turn = out.messages.find((m) => m?.info?.id === TURN_MESSAGE_ID)?.parts[0].text ?? null
    const cold = prompt.system[1] ?? null
    const tokens = hooks._state.budget.toolTokens + estimateTokens(cold) + estimateTokens(turn) + estimateTokens(hud)
    return { hud, turn, cold, tokens, added: out.messages.length - messages.length, messages: out.messages }
  }
  return { d, hooks, call }
}

const ids = (text) => (text ?? "").match(/mem_[0-9a-f]{8}/g) ?? []

// ------------------------------------------------------------------------------------------- the query
test("the query is the current request and the tool calls since it, not the previous request's tool calls", () => {
  const config = resolveConfig({}, {})
  const earlier = [
    user("Why does the billing cron job in src/billing/cron.py run twice?", 1),
    assistant(1, toolPart("read", { filePath: "/repo/src/billing/cron.py" }, "def run(): ..."), toolPart("bash", { command: "pytest tests/test_cron.py" }, "BillingError: ran twice")),
  ]
  const now = [...earlier, user("Which HTTP client do we use for partner API calls?", 2)]
  const d = deriveQuery(hudInput(now, config))
  assert.equal(d.query_expansion[0], "Which HTTP client do we use for partner API calls?")
  assert.deepEqual(d.query_expansion, [d.query_expansion[0]]) // the cron work was another step
  assert.ok(!d.entities.some((e) => /cron|Billing/.test(e)), d.entities)
  // Tool calls made for this request come after the request's words.
  const working = [...now, assistant(2, toolPart("grep", { pattern: "httpx", include: "*.py" }, "src/partners/client.py:3"))]
  const w = deriveQuery(hudInput(working, config))
  assert.equal(w.query_expansion[0], "Which HTTP client do we use for partner API calls?")
  assert.deepEqual(w.query_expansion.slice(1), ["grep httpx *.py"])
  // However many tool calls, the request stays first and they add at most MAX_TOOL_PHRASES phrases.
  const busy = [...now, assistant(2, ...Array.from({ length: 12 }, (_, i) => toolPart("read", { filePath: `/repo/src/m${i}.py` }, "x")))]
  const b = deriveQuery(hudInput(busy, resolveConfig({ toolWindow: 12 }, {})))
  assert.equal(b.query_expansion[0], "Which HTTP client do we use for partner API calls?")
  assert.equal(b.query_expansion.length, 1 + MAX_TOOL_PHRASES)
  assert.equal(b.query_expansion[1], "read /repo/src/m11.py") // newest first
})

test("the step is the newest tool call since the request, with its key arguments and whether it failed", () => {
  const config = resolveConfig({}, {})
  const asked = [user("Which HTTP client do we use for partner API calls?", 1)]
  assert.equal(latestStep(hudInput(asked, config)), null) // the first call of a turn: the request alone
  const failing = { type: "tool", tool: "bash", callID: "call_x", state: { status: "error", input: { command: "make test", timeout: 5 }, error: "exit 2" } }
  const working = [...asked, assistant(1, toolPart("read", { filePath: "/repo/src/client.py", offset: 3 }, "import httpx"), failing)]
  assert.deepEqual(latestStep(hudInput(working, config)), { tool: "bash", args: { command: "make test" }, error: true })
  const later = [...working, user("Thanks. Now commit.", 2)]
  assert.equal(latestStep(hudInput(later, config)), null) // the previous request's calls were another step
})

// ---------------------------------------------------------------------------------------- the budget
test("the tool definitions are counted as OpenCode sends them, from the plugin's own registered tools", async () => {
  const { d, hooks } = await plugin({ "/retrieve": { memories: [] } }, { tools: true })
  try {
    const z = tool.schema
    const sent = Object.entries(hooks.tool).map(([name, def]) =>
      JSON.stringify({ type: "function", function: { name, description: def.description, parameters: z.toJSONSchema(z.object(def.args), { io: "input" }) } }),
    )
    assert.ok(sent.length >= 1)
    assert.equal(hooks._state.budget.toolTokens, estimateTokens(sent.join("")))
    assert.deepEqual(toolDefinitionTokens(hooks.tool, z), { tokens: hooks._state.budget.toolTokens, exact: true })
    // Without zod's toJSONSchema: an estimate, still counting every tool.
    const rough = toolDefinitionTokens(hooks.tool, null)
    assert.equal(rough.exact, false)
    assert.ok(rough.tokens > 0)
  } finally {
    await d.close()
  }
})

test("a call's codememory tokens never exceed the budget, whatever the daemon answers; the HUD shrinks first", async () => {
  // A daemon that ignores every budget: 30 long memories for the cold start and for each HUD.
  const routes = { "/memory/recent": { memories: memories(1, 30), total: 30 }, "/retrieve": { memories: memories(100, 30) } }
  const first = [user("Add retries to the webhook worker")]
  const later = [...first, assistant(1, toolPart("read", { filePath: "/repo/src/worker.py" }, "code"))]
  const roomy = await plugin(routes, { tools: true, callBudgetTokens: 100_000, coldStartTokens: 300 })
  let reference
  try {
    reference = await roomy.call(first)
  } finally {
    await roomy.d.close()
  }
  const probe = await plugin({}, { tools: true })
  const tools = probe.hooks._state.budget.toolTokens
  await probe.d.close()
  for (const over of [0, 20, 60, 150, 300, 500, 900]) {
    const budget = tools + over
    const { d, call } = await plugin(routes, { tools: true, callBudgetTokens: budget, coldStartTokens: 300 })
    try {
      const a = await call(first)
      const b = await call(later)
      for (const c of [a, b]) assert.ok(c.tokens <= budget, `${c.tokens} > ${budget} (room ${over})`)
      assert.equal(b.cold, null)
      assert.equal(a.hud, null) // the turn's first call: its block is the turn's
      if (a.cold && a.turn) {
        // Both fit: the block is the one a roomy budget gives (it did not shrink), the turn's took what was left.
        assert.equal(a.cold, reference.cold)
        assert.ok(ids(a.turn).length < ids(reference.turn).length)
      }
      if (over >= 500) assert.ok(a.cold && a.turn && b.turn, `room ${over}: every block`)
      if (b.hud) assert.ok(b.turn, "the HUD gets what the turn's block leaves")
      if (over <= 20) assert.ok(!a.turn && !b.turn && !b.hud, `room ${over}: no room for a block`)
      // The later call carries the turn's block, counted in its budget: what the first call showed, and what the
      // request called for that the first call's cold start showed or left no room for.
      for (const m of ids(a.turn)) assert.ok(ids(b.turn).includes(m), `${m} left the turn's block`)
    } finally {
      await d.close()
    }
  }
})

test("a cold-start block that is only the last session's hand-off still counts: the turn's block fits what it leaves", async () => {
  // No memory in the cold-start block (so no ids), only the hand-off lines; the daemon offers far more than fits.
  const handoff = ["Last codex session: move the webhook worker onto the job queue (2026-11-20)", `Done: ${"queue wiring, ".repeat(20)}`, `Still to do: ${"retry policy, ".repeat(20)}`]
  const routes = { "/memory/recent": { memories: [], total: 0, last_session: handoff }, "/retrieve": { memories: memories(100, 30) } }
  const probe = await plugin({}, { tools: true })
  const tools = probe.hooks._state.budget.toolTokens
  await probe.d.close()
  const budget = tools + 400
  const { d, call } = await plugin(routes, { tools: true, callBudgetTokens: budget, coldStartTokens: 300 })
  try {
    const a = await call([user("Add retries to the webhook worker")])
    assert.ok(a.cold && ids(a.cold).length === 0, "a hand-off-only cold-start block")
    assert.ok(a.tokens <= budget, `${a.tokens} > ${budget}`)
    assert.ok(a.turn, "the turn's block takes what is left")
  } finally {
    await d.close()
  }
})

test("the budget: the plugin option, else the project's setting from the daemon, else 2,000", async () => {
  const asked = []
  const routes = {
    "/retrieve": (body) => {
      asked.push(body.token_budget)
      return [200, { memories: memories(1, 40), call_budget_tokens: 300 }]
    },
  }
  const { d, hooks, call } = await plugin(routes, { tokenBudget: 100_000 })
  try {
    assert.equal(hooks._state.budget.total, 300) // learnt from the warm-up answer
    const c = await call([user("deploy day?"), assistant(1)])
    assert.ok(c.tokens <= 300 && c.turn, c)
    assert.ok(asked.at(-1) < 300)
  } finally {
    await d.close()
  }
  const fixed = await plugin(routes, { callBudgetTokens: 150, tokenBudget: 100_000 })
  try {
    assert.equal(fixed.hooks._state.budget.total, 150)
    assert.ok((await fixed.call([user("deploy day?"), assistant(1)])).tokens <= 150)
  } finally {
    await fixed.d.close()
  }
  // Tool definitions over the budget: no block can fit, and the user is told once.
  const logs = []
  const tight = await fakeDaemon({ "/retrieve": { memories: memories(1, 3) } })
  try {
    const hooks = await createHooks({ directory: "/repo" }, { stateDir: tight.state, rawEvents: false, callBudgetTokens: 100 }, { log: (l, m) => logs.push([l, m]) })
    await hooks._state.ready
    assert.ok(hooks._state.budget.toolTokens > 100)
    assert.equal(logs.length, 1)
    assert.match(logs[0][1], /memory tools alone take \d+ tokens, over the per-call budget of 100/)
    const out = { messages: [user("deploy day?"), assistant(1)] }
    await hooks["experimental.chat.messages.transform"]({}, out)
    assert.equal(out.messages.length, 2)
  } finally {
    await tight.close()
  }
  const budget = new CallBudget(null, 10)
  assert.equal(budget.total, DEFAULT_CALL_BUDGET)
  budget.learn({ call_budget_tokens: "lots" })
  assert.equal(budget.left(90), DEFAULT_CALL_BUDGET - 100)
  assert.equal(new CallBudget(5, 10).left(), 0)
})

test("fitBlock drops the lowest-ranked memories until the rendered block fits, and gives no block when none fits", () => {
  const ms = memories(1, 5, 100)
  const all = fitBlock(ms, formatHud, 10_000)
  assert.equal(all.shown.length, 5)
  assert.equal(all.tokens, estimateTokens(all.text))
  const three = fitBlock(ms, formatHud, estimateTokens(formatHud(ms.slice(0, 3))))
  assert.deepEqual(three.shown.map((m) => m.id), ms.slice(0, 3).map((m) => m.id))
  assert.deepEqual(fitBlock(ms, formatHud, 20), { text: null, shown: [], tokens: 0 })
})

// -------------------------------------------------------------------------------------- no repeats
test("the HUD never repeats what the call carries: the cold-start block, earlier blocks, memory tool results", async () => {
  const retrieved = []
  const routes = {
    "/memory/recent": { memories: memories(1, 3, 40), total: 3 },
    // A daemon that ignores exclude_memory_ids: the plugin still leaves them out.
    "/retrieve": (body) => {
      if (body.session_id) retrieved.push(body) // not the warm-up at load
      return [200, { memories: memories(1, 8, 40) }]
    },
  }
  const { d, call } = await plugin(routes)
  try {
    const first = await call([user("webhook retries")])
    assert.deepEqual(ids(first.cold), [id(1), id(2), id(3)])
    assert.deepEqual(ids(first.turn), [id(4), id(5), id(6), id(7), id(8)])
    // A later call of that turn whose memory_search result shows one of the block's memories: the block leaves it out.
    const found = JSON.stringify({ results: [{ id: id(5), text: "y" }] })
    const searched = await call([user("webhook retries"), assistant(1, toolPart("memory_search", { query: "webhook" }, found))])
    assert.deepEqual(ids(searched.turn), [id(1), id(2), id(3), id(4), id(6), id(7), id(8)])
    // The request's memories are asked with the cold start's (its block is this call's only), shown without them.
    assert.deepEqual(retrieved[0].exclude_memory_ids, [])

    // The next request: a call whose messages show memories (a memory_search result, an earlier HUD block).
    const search = JSON.stringify({ results: [{ id: id(4), text: "x" }, { id: id(5), text: "y" }] })
    const earlierHud = formatHud([{ id: id(6), text: "z" }])
    const messages = [
      user("webhook retries"),
      assistant(1, toolPart("memory_search", { query: "webhook" }, search)),
      { info: { id: "msg_old_hud", sessionID: SES, role: "user" }, parts: [{ type: "text", text: earlierHud, synthetic: true }] },
      user("and the dead letters?", 2),
    ]
    assert.deepEqual(carriedIds(messages).sort(), [id(4), id(5), id(6)])
    const next = await call(messages)
    assert.equal(next.cold, null)
    const shown = ids(next.turn)
    for (const carried of [id(4), id(5), id(6)]) assert.ok(!shown.includes(carried), `${carried} shown again`)
    assert.deepEqual(shown, [id(1), id(2), id(3), id(7), id(8)]) // the cold start's memories may come back now
    assert.deepEqual(retrieved.at(-1).exclude_memory_ids.sort(), [id(4), id(5), id(6)])
    // Pins the call already carries are not sent as pins.
    assert.ok(!retrieved.at(-1).pinned_memory_ids.some((p) => [id(4), id(5), id(6)].includes(p)))

    // A later call of that turn: its HUD leaves out the turn's block too.
    const later = await call([...messages, assistant(2, toolPart("read", { filePath: "/repo/src/dead.py" }, "code"))])
    assert.deepEqual(ids(later.turn), shown)
    assert.deepEqual(ids(later.hud), [id(4), id(5), id(6)].filter((m) => !carriedIds(messages).includes(m)))
    assert.equal(later.hud, null) // everything the daemon offers is carried already
    assert.deepEqual(retrieved.at(-1).exclude_memory_ids.sort(), [id(1), id(2), id(3), id(4), id(5), id(6), id(7), id(8)])
    // Within one call no id appears twice across the blocks.
    for (const c of [first, next, later]) {
      const all = [...ids(c.cold), ...ids(c.turn), ...ids(c.hud)]
      assert.equal(new Set(all).size, all.length)
    }
  } finally {
    await d.close()
  }
})

test("the HUD never repeats the turn's block, however many memory ids the turn's tool outputs show", async () => {
  // A daemon that ignores exclude_memory_ids and offers the same memories at every call.
  const { d, call } = await plugin({ "/retrieve": { memories: memories(1, 3, 40) } }, { coldStart: false })
  try {
    const asked = [user("webhook retries")]
    const first = await call(asked)
    assert.deepEqual(ids(first.turn), [id(1), id(2), id(3)])
    // A command that printed more memory ids than the daemon takes as exclusions (say `codememory list --json`).
    const listed = JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ id: id(0x1000 + i), text: "x" })), null, 1)
    const later = await call([
      ...asked,
      assistant(1, toolPart("bash", { command: "codememory list --json" }, listed), toolPart("read", { filePath: "/repo/src/worker.py" }, "code")),
    ])
    assert.deepEqual(ids(later.turn), [id(1), id(2), id(3)])
    const all = [...ids(later.turn), ...ids(later.hud)]
    assert.equal(new Set(all).size, all.length, `shown twice in one call: ${all}`)
  } finally {
    await d.close()
  }
})

// ---------------------------------------------------------------------------------- no empty block
test("never an empty block: nothing left after the exclusions, nothing valid, or no room means no block at all", async () => {
  const cold = memories(1, 2, 40)
  const cases = [
    ["everything is already in the call", { "/memory/recent": { memories: cold, total: 2 }, "/retrieve": { memories: cold } }, {}],
    ["nothing valid", { "/memory/recent": { memories: [{ id: "nope", text: "x" }], total: 1 }, "/retrieve": { memories: [{ id: id(9), text: "  " }] } }, {}],
    ["no room", { "/memory/recent": { memories: cold, total: 2 }, "/retrieve": { memories: memories(5, 3) } }, { callBudgetTokens: 10 }],
  ]
  for (const [why, routes, options] of cases) {
    const { d, call } = await plugin(routes, options)
    try {
      const c = await call([user("webhook retries")])
      assert.equal(c.hud, null, why)
      assert.equal(c.added, 0, why) // no message appended
      if (why !== "everything is already in the call") assert.equal(c.cold, null, why)
      const later = await call([user("webhook retries"), assistant(1)])
      if (why === "no room") assert.equal(d.requests.filter((r) => r.path === "/retrieve").length, 1, "no room: not even asked")
      assert.ok(!later.hud || ids(later.hud).length > 0, why)
    } finally {
      await d.close()
    }
  }
})
