/**
 * codememory's tools in OpenCode, the only ones it gets (`codememory init` does not register the MCP server there):
 * `memory_search`, `memory_get`, `memory_store`, `memory_transcript` over the daemon's `/memory/*` endpoints, and the
 * session tools (session-tools.ts) over `/sessions/*`. Names, descriptions and arguments are the MCP tools' as the
 * MCP server lists them (src/codememory/mcp/tools/; tests/install/test_tool_names.py compares them), and so is the
 * result JSON. Every word here is sent with every LLM call (benchmarks/bench_tool_defs.py measures it).
 *
 * A failing daemon makes the tool call fail with the daemon's error (OpenCode shows it to the model as the tool's
 * error), never the plugin.
 */
import type { ToolDefinition } from "@opencode-ai/plugin"

import type { Config } from "./config.ts"
import { request } from "./daemon.ts"
import { type Call, sessionTools } from "./session-tools.ts"

/**
 * zod, for the tools' argument schemas: @opencode-ai/plugin's (OpenCode installs it, which brings zod, into
 * `.opencode/node_modules` of every project with a plugin), else a bare zod; null when neither imports. Imported at
 * run time, never bundled: the schemas must be the zod OpenCode itself uses.
 */
async function importZod(): Promise<any> {
  try {
    return (await import("@opencode-ai/plugin")).tool.schema
  } catch {
    try {
      return (await import("zod")).z
    } catch {
      return null
    }
  }
}

/** Tool arguments without the ones the model left out (undefined or null). */
function defined(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined && v !== null))
}

export const MEMORY_ID = /^mem_[0-9a-f]{8}$/
const CATEGORIES = "decision, rejected_alternative, convention, preference, gotcha, fact, todo, note"

/** The recall and session tools, or null when no zod is importable. */
export async function recallTools(config: Config, projectRoot: string): Promise<Record<string, ToolDefinition> | null> {
  const z = await importZod()
  if (!z) return null
  const call: Call = async (path, args, directory) => {
    const body = { project_root: config.projectRoot ?? directory ?? projectRoot, ...defined(args) }
    return JSON.stringify(await request(config, "POST", path, body, config.toolTimeoutMs))
  }
  const memoryId = z.string().regex(MEMORY_ID)
  return {
    memory_search: {
      description:
        "Search project memory (decisions, conventions, gotchas, todos) by words, paths or names; a question works. OR, " +
        'NOT, "phrase", prefix* are strict.',
      args: {
        query: z.string(),
        limit: z.number().int().min(1).max(50).optional(),
        category: z.string().optional().describe("Only this category (comma-separate several)."),
      },
      execute: (args: any, ctx: any) => call("/memory/search", args, ctx?.directory),
    },
    memory_get: {
      description: "Full memory records by id, with links and entities.",
      args: { ids: z.array(memoryId) },
      execute: (args: any, ctx: any) => call("/memory/get", { ids: args.ids }, ctx?.directory),
    },
    memory_store: {
      description:
        "Save one durable fact for future sessions (a decision and why, a convention, a gotcha, a todo); self-contained, " +
        "never secrets.",
      args: {
        text: z.string(),
        category: z.string().optional().describe(`One of: ${CATEGORIES}.`),
        tags: z.array(z.string()).optional(),
        importance: z.number().min(0).max(1).optional(),
        supersedes: z.array(memoryId).optional().describe("Ids of memories it replaces."),
      },
      execute: (args: any, ctx: any) => call("/memory/store", { ...args, entered_by: "opencode" }, ctx?.directory),
    },
    memory_transcript: {
      description:
        "What was said and done in the captured turn behind a memory, a session (ses_...) or a daily-log anchor. Secrets " +
        "removed.",
      args: {
        reference: z.string(),
      },
      execute: (args: any, ctx: any) => call("/memory/transcript", args, ctx?.directory),
    },
    ...sessionTools(z, call),
  }
}
