// What an instant local query model (the `subcortical` option) adds to the per-LLM-call hook
// (experimental.chat.messages.transform): the hook timed without and with a model, against stand-ins for the daemon
// and for an OpenAI-compatible endpoint on 127.0.0.1 (both answering at once), so only the plugin's own work and the
// extra local HTTP round trip are measured.
//
//   node bench/subcortical-latency.mjs [CALLS]
//
// Prints one JSON object: {runtime, calls, without: {p50_ms, p95_ms}, with_model: {p50_ms, p95_ms}, added_p50_ms}.
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { createHooks } from "../../../src/codememory/data/opencode/codememory.js"

const calls = Number(process.argv[2] ?? "200")
const MEM = { id: "mem_0000abcd", text: "Retry webhooks with exponential backoff (max 5)", category: "decision", importance: 0.9 }
const ANSWER = { query_expansion: ["webhook retry policy"], entities: ["fetchPayload"] }
const CONVERSATION = [
  { info: { id: "msg_u", sessionID: "ses_bench", role: "user" }, parts: [{ type: "text", text: "Add retries to the webhook worker; `fetchPayload` keeps failing." }] },
  {
    info: { id: "msg_a", sessionID: "ses_bench", role: "assistant" },
    parts: [{ type: "tool", tool: "read", state: { status: "completed", input: { filePath: "/repo/src/webhook_worker.py" }, output: "import requests\n" } }],
  },
]

/** @param {(url: string) => unknown} answer */
async function serve(answer) {
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(answer(req.url ?? "")))
    })
  })
  await new Promise((r) => server.listen(0, "127.0.0.1", () => r(undefined)))
  return { server, port: /** @type {import("node:net").AddressInfo} */ (server.address()).port }
}

const daemon = await serve((url) => (url === "/retrieve" ? { memories: [MEM], degraded: false } : { status: "ok" }))
const model = await serve(() => ({ choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify(ANSWER) } }] }))
const state = mkdtempSync(join(tmpdir(), "cm-bench-"))
writeFileSync(join(state, "token"), "secret-token\n")
writeFileSync(join(state, "daemon.json"), JSON.stringify({ pid: 1, port: daemon.port }))

/** @param {Record<string, unknown>} extra */
async function measure(extra) {
  const options = { stateDir: state, tools: false, coldStart: false, rawEvents: false, ...extra }
  const hooks = await createHooks({ directory: "/repo" }, options, { log: () => {} })
  await hooks._state.ready
  const transform = hooks["experimental.chat.messages.transform"]
  const once = async () => {
    const t0 = performance.now()
    await transform({}, { messages: structuredClone(CONVERSATION) })
    return performance.now() - t0
  }
  for (let i = 0; i < 10; i++) await once()
  const ms = []
  for (let i = 0; i < calls; i++) ms.push(await once())
  ms.sort((a, b) => a - b)
  return { p50_ms: ms[Math.floor(calls / 2)], p95_ms: ms[Math.floor(calls * 0.95)] }
}

const without = await measure({})
const withModel = await measure({ subcortical: { baseURL: `http://127.0.0.1:${model.port}/v1`, model: "tiny-q4" } })
daemon.server.close()
model.server.close()
const runtime = typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.versions.node}`
console.log(JSON.stringify({ runtime, calls, without, with_model: withModel, added_p50_ms: withModel.p50_ms - without.p50_ms }))
