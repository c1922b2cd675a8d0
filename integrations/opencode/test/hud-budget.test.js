// The HUD's budget and caps (src/config.ts, src/derive.ts, src/hud.ts, src/cold-start.ts): what /retrieve and
// /memory/recent are asked for is bounded whatever the options or the conversation, and the daemon's own limits
// (max_memories, max_new, token_budget) are the configured ones, clamped to their ranges.
import assert from "node:assert/strict"
import { test } from "node:test"

import { resolveConfig } from "../src/config.ts"
import { MAX_ENTITIES, MAX_PHRASES, MAX_TOOL_PHRASES, deriveQuery } from "../src/derive.ts"
import { createHooks } from "../src/hooks.ts"
import { retrieveBody } from "../src/hud.ts"
import { TURN_MESSAGE_ID, hudInput } from "../src/messages.ts"
import { fakeDaemon } from "./fake-daemon.js"

const SES = "ses_budget"
const MEMORIES = Array.from({ length: 3 }, (_, i) => ({ id: `mem_0000000${i}`, text: `memory ${i}`, category: "fact" }))

/** A long session: a wordy user message and 60 finished tool calls with long paths, commands and outputs. */
function longConversation() {
  const words = Array.from({ length: 40 }, (_, i) => `Sentence ${i} about fetchPayload${i} in src/mod${i}/file${i}.py.`).join(" ")
  const parts = Array.from({ length: 60 }, (_, i) => ({
    type: "tool",
    tool: i % 2 ? "bash" : "read",
    state: {
      status: i % 7 ? "completed" : "error",
      input: i % 2 ? { command: `pytest tests/test_${i}.py ${"-k x ".repeat(80)}` } : { filePath: `/repo/src/pkg${i}/${"deep/".repeat(60)}m${i}.py` },
      output: `ValueError${i}: failed ${"x".repeat(5000)}`,
      error: `TimeoutError${i}: command failed`,
    },
  }))
  return [
    { info: { id: "msg_u", sessionID: SES, role: "user", agent: "build" }, parts: [{ type: "text", text: words }] },
    { info: { id: "msg_a", sessionID: SES, role: "assistant" }, parts },
  ]
}

test("the daemon's limits: defaults, and options clamped to their ranges", () => {
  const derived = { query_expansion: ["q"], entities: ["e"] }
  const defaults = retrieveBody(resolveConfig({}, {}), "/repo", SES, derived, ["mem_0000000a"])
  assert.deepEqual(defaults, {
    query_expansion: ["q"],
    entities: ["e"],
    pinned_memory_ids: ["mem_0000000a"],
    exclude_memory_ids: [],
    project_root: "/repo",
    session_id: SES,
    max_memories: 4,
    max_new: 3,
    token_budget: 1200,
  })
  assert.equal(retrieveBody(resolveConfig({}, {}), "/repo", SES, { ...derived, request_phrases: 0 }, []).request_phrases, 0)
  const step = { tool: "read", args: { filePath: "/repo/src/client.py" }, error: false }
  assert.deepEqual(retrieveBody(resolveConfig({}, {}), "/repo", SES, derived, [], [], 1200, step).step, step)
  const high = retrieveBody(resolveConfig({ maxMemories: 500, maxNew: 99.6, tokenBudget: 1e9 }, {}), "/repo", SES, derived, [])
  assert.deepEqual([high.max_memories, high.max_new, high.token_budget], [50, 50, 100_000])
  const low = retrieveBody(resolveConfig({ maxMemories: 0, maxNew: -3, tokenBudget: "250" }, {}), "/repo", SES, derived, [])
  assert.deepEqual([low.max_memories, low.max_new, low.token_budget], [1, 1, 250])
  const junk = retrieveBody(resolveConfig({ maxMemories: "many", maxNew: null, tokenBudget: {} }, {}), "/repo", SES, derived, [])
  assert.deepEqual([junk.max_memories, junk.max_new, junk.token_budget], [4, 3, 1200])
})

test("the query stays bounded for a long session: the request's phrases and 4 of the tool calls, 24 entities, clipped inputs", () => {
  const config = resolveConfig({ toolWindow: 50, resultChars: 40 }, {})
  const input = hudInput(longConversation(), config, [])
  assert.ok(input.userText.length <= 2000)
  assert.equal(input.tools.length, 50)
  for (const t of input.tools) {
    assert.ok(t.output.length <= 40, t.output)
    for (const v of Object.values(t.args)) assert.ok(v.length <= 200, v)
  }
  const d = deriveQuery(input)
  assert.ok(d.query_expansion.length <= MAX_PHRASES)
  assert.equal(d.query_expansion.length, 2 + MAX_TOOL_PHRASES) // the request's two phrases (40 sentences), the tools'
  assert.equal(d.request_phrases, 2) // both the request's: the daemon holds what either found at later calls
  assert.equal(d.entities.length, MAX_ENTITIES)
  assert.ok(d.query_expansion.every((p) => p.length <= 300))
  assert.ok(d.entities.every((e) => e.length <= 200))
  // toolWindow is itself capped: at most 50 tool calls are read
  assert.equal(hudInput(longConversation(), resolveConfig({ toolWindow: 1000 }, {}), []).tools.length, 50)
})

test("through the hooks: /retrieve and /memory/recent get the clamped limits and a bounded query; the turn's block shows what came back", async () => {
  const d = await fakeDaemon({ "/retrieve": { memories: MEMORIES }, "/memory/recent": { memories: MEMORIES.slice(0, 1), total: 40 } })
  try {
    const options = { stateDir: d.state, tools: false, rawEvents: false, maxMemories: 80, maxNew: 0, tokenBudget: 64, coldStartLimit: 0, coldStartTokens: 1e9, toolWindow: 50, turnBlockMemories: 50 }
    const hooks = await createHooks({ directory: "/repo" }, options, { log: () => {} })
    await hooks._state.ready
    // The session's first call (no answer of the model yet): the cold-start block, then the HUD.
    const [request] = longConversation()
    const first = { messages: [request] }
    await hooks["experimental.chat.messages.transform"]({}, first)
    const system = { system: ["You are a coding agent."] }
    await hooks["experimental.chat.system.transform"]({ sessionID: SES }, system)
    const recent = d.requests.find((r) => r.path === "/memory/recent").body
    assert.equal(recent.limit, 1)
    assert.ok(recent.token_budget > 0 && recent.token_budget < 2000) // within the call's budget, not 1e9
    assert.match(system.system[1], /Important and recent \(1 of 40\):/)
    // ... and the turn's block, right after the request: what came back but the cold start's memory (the block
    // the turn keeps has it: the cold start is this call's only), pinned.
    assert.equal(first.messages[1].info.id, TURN_MESSAGE_ID)
    const lines = (text) => text.split("\n").filter((l) => l.startsWith("- ["))
    assert.equal(lines(first.messages[1].parts[0].text).length, MEMORIES.length - 1)
    assert.deepEqual(hooks._state.sessions.get(SES).pinned, MEMORIES.map((m) => m.id))

    const output = { messages: longConversation() }
    await hooks["experimental.chat.messages.transform"]({}, output)
    const asked = d.requests.filter((r) => r.path === "/retrieve").at(-1).body
    assert.deepEqual([asked.max_memories, asked.max_new], [50, 1])
    assert.ok(asked.token_budget > 0 && asked.token_budget <= 64) // tokenBudget caps the HUD inside the call's budget
    assert.ok(asked.query_expansion.length <= MAX_PHRASES && asked.entities.length <= MAX_ENTITIES)
    assert.equal(asked.request_phrases, 2)
    assert.equal(asked.request_carried, true) // a later call of the turn: the turn's block is in it
    // The turn's block stays right after the request, all of it; the daemon's answer is carried: no HUD.
    assert.deepEqual(output.messages.map((m) => m.info.id), ["msg_u", TURN_MESSAGE_ID, "msg_a"])
    assert.equal(lines(output.messages[1].parts[0].text).length, MEMORIES.length)
  } finally {
    await d.close()
  }
})
