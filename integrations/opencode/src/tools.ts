/**
 * The recall tools `memory_search`, `memory_get`, `memory_store`, `memory_transcript`: the daemon's `/memory/*`
 * endpoints, with the same names, arguments and result JSON as the MCP tools. A failing daemon makes the tool call
 * fail with the daemon's error (OpenCode shows it to the model as the tool's error), never the plugin.
 */
import type { ToolDefinition } from "@opencode-ai/plugin"

import type { Config } from "./config.ts"
import { request } from "./daemon.ts"

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

/** The recall tools, or null when no zod is importable. */
export async function recallTools(config: Config, projectRoot: string): Promise<Record<string, ToolDefinition> | null> {
  const z = await importZod()
  if (!z) return null
  const call = async (path: string, body: Record<string, unknown>, directory: string | undefined) => {
    const result = await request(config, "POST", path, { project_root: config.projectRoot ?? directory ?? projectRoot, ...body }, config.toolTimeoutMs)
    return JSON.stringify(result)
  }
  return {
    memory_search: {
      description:
        "Search this project's memory (codememory): decisions, rejected alternatives, conventions, gotchas, " +
        "preferences, facts and todos recorded by earlier sessions. Use it before choosing a library, pattern or " +
        "approach the project may already have settled. Query syntax is grep-like: memories with all the words " +
        'first, then related ones (a question works); OR, NOT, "exact phrase", prefix* match strictly; paths and ' +
        "symbols match literally. Returns {results: [{id, text, category, importance, tags, created_at, source, " +
        "match, score, why}], degraded, degraded_reason}.",
      args: {
        query: z.string().describe("What to look for: words, a path, an identifier, an error name."),
        limit: z.number().int().min(1).max(50).optional().describe("Maximum results (default 5)."),
        category: z.string().optional().describe("Only this category (or several, comma-separated)."),
        tags: z.array(z.string()).optional().describe("Only memories with all these tags."),
        entity: z.string().optional().describe("Only memories mentioning this library, tool, file or error name."),
        after: z.string().optional().describe("ISO date or words ('2 weeks ago')."),
        before: z.string().optional().describe("ISO date or words ('yesterday')."),
        mode: z.enum(["hybrid", "lexical", "semantic"]).optional().describe("hybrid (default), lexical or semantic."),
      },
      async execute(args: any, ctx: any) {
        return call("/memory/search", defined(args), ctx?.directory)
      },
    },
    memory_get: {
      description:
        "Full records of project memories by id (from memory_search or the developer_context block): every field, " +
        "links to related memories and the entities mentioned. Returns {memories: [...], missing: [ids]}.",
      args: { ids: z.array(z.string()).min(1).max(20).describe("Memory ids, e.g. mem_1a2b3c4d (1 to 20).") },
      async execute(args: any, ctx: any) {
        return call("/memory/get", { ids: args.ids }, ctx?.directory)
      },
    },
    memory_store: {
      description:
        "Save one durable piece of project knowledge for future sessions: a decision and its reason, a rejected " +
        "alternative and why, a convention, a gotcha, a preference, a fact or a todo. Write it to be read without " +
        "this conversation. Never store secrets. Returns {created, duplicate_of, duplicate_reason, embedded, links, memory}.",
      args: {
        text: z.string().describe("One self-contained statement with its reason."),
        category: z.string().optional().describe("decision, rejected_alternative, convention, preference, gotcha, fact, todo, note."),
        tags: z.array(z.string()).optional().describe("Short topic tags."),
        importance: z.number().min(0).max(1).optional().describe("How much this matters, 0 to 1 (default 0.5)."),
        expires: z.string().optional().describe("When it stops being true: ISO date or words ('in 2 weeks')."),
        supersedes: z.array(z.string()).optional().describe("Ids of memories this one replaces."),
      },
      async execute(args: any, ctx: any) {
        return call("/memory/store", { ...defined(args), entered_by: "opencode" }, ctx?.directory)
      },
    },
    memory_transcript: {
      description:
        "What was actually said and done in the captured coding-session turn a memory came from: the user's request, " +
        "the assistant's answers and its tool calls with their input and output. Use it when a memory (from " +
        "memory_search, memory_get or the developer_context block) is too terse to act on, or to read a turn named by " +
        "an anchor in .codememory/memory/*.md. A session id gives its captured turns in order (at most max_turns; ask " +
        "for others with turn). Secrets and <private> spans are removed. Returns {reference, kind (memory, anchor or " +
        "session), memory_id, session_id, turns: [{source, session_id, turn_id, seq, started_at, ended_at, log_path, " +
        "origin, fallback_reason, transcript}], turns_total, truncated}.",
      args: {
        reference: z
          .string()
          .min(1)
          .max(500)
          .describe("A memory id (mem_1a2b3c4d), a daily-log anchor (<!-- session:ses_abc turn:msg_123 -->) or a captured session id (ses_abc)."),
        turn: z
          .union([z.number().int(), z.string().max(200)])
          .optional()
          .describe("With a session id only: one turn, by number (1 = first) or by turn id."),
        max_turns: z.number().int().min(1).max(50).optional().describe("Most turns returned for a session (default 10)."),
      },
      async execute(args: any, ctx: any) {
        return call("/memory/transcript", defined(args), ctx?.directory)
      },
    },
  }
}
