// Time the plugin's per-LLM-call hook (experimental.chat.messages.transform) against a running daemon, the way
// OpenCode calls it: realistic conversations (a user message and up to five finished tool calls), one session.
// Runs under Node or Bun (`BUN_BE_BUN=1 opencode hook-latency.mjs ...`, the runtime OpenCode uses).
//
//   node hook-latency.mjs STATE_DIR PROJECT_ROOT CALLS WARMUP
//
// Prints one JSON object: {runtime, first_ms, samples_ms: [...], injected, errors}. benchmarks/bench_plugin.py
// drives it with the daemon up, killed (port refusing) and absent (no daemon.json).
import { createHooks } from "../../../src/codememory/data/opencode/codememory.js"

const [stateDir, projectRoot, callsArg = "200", warmupArg = "10"] = process.argv.slice(2)
const calls = Number(callsArg)
const warmup = Number(warmupArg)

const PATHS = ["src/webhooks/worker.py", "src/billing/invoice.ts", "api/routes/users.go", "infra/terraform/main.tf", "src/auth/session.py", "web/components/Checkout.tsx"]
const COMMANDS = ["pytest tests/test_worker.py -x", "npm run build", "go test ./...", "terraform plan", "ruff check src"]
const ERRORS = ["ModuleNotFoundError: No module named 'requests'", "TypeError: Cannot read properties of undefined (reading 'id')", "ECONNRESET while calling the payments API", "1 failed, 12 passed"]
const ASKS = [
  "Add retries with backoff to the webhook worker",
  "Why does checkout fail for guests after the session refactor?",
  "Move the invoice rounding to the billing service",
  "Fix the flaky users API test",
]

function conversation(i) {
  const user = { info: { id: "msg_u", sessionID: "ses_bench", role: "user", agent: "build", model: { providerID: "p", modelID: "m" } }, parts: [{ type: "text", text: ASKS[i % ASKS.length] }] }
  const parts = []
  for (let k = 0; k < 1 + (i % 5); k++) {
    const j = i + k
    parts.push(
      k % 2
        ? { type: "tool", tool: "bash", state: { status: "completed", input: { command: COMMANDS[j % COMMANDS.length] }, output: `${ERRORS[j % ERRORS.length]}\n${"log line\n".repeat(40)}` } }
        : { type: "tool", tool: "read", state: { status: "completed", input: { filePath: `/repo/${PATHS[j % PATHS.length]}` }, output: "x = 1\n".repeat(200) } },
    )
  }
  return [user, { info: { id: "msg_a", sessionID: "ses_bench", role: "assistant" }, parts }]
}

const hooks = await createHooks({ directory: projectRoot }, { stateDir, tools: false, retryMinMs: 3_600_000 }, { log: () => {} })
await hooks._state.ready // OpenCode loads plugins well before the first LLM call
const transform = hooks["experimental.chat.messages.transform"]
let injected = 0
let errors = 0

async function once(i) {
  const output = { messages: conversation(i) }
  const before = output.messages.length
  const t0 = performance.now()
  await transform({}, output)
  const ms = performance.now() - t0
  if (output.messages.length > before) injected++
  return ms
}

const first = await once(0)
for (let i = 1; i <= warmup; i++) await once(i)
injected = 0
const samples = []
for (let i = 0; i < calls; i++) samples.push(await once(i + warmup + 1))
errors = hooks._state.health.down ? 1 : 0
const runtime = typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.versions.node}`
console.log(JSON.stringify({ runtime, first_ms: first, samples_ms: samples, injected, errors, reason: hooks._state.health.reason }))
