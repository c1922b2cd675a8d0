/**
 * The session tools in OpenCode: `checkpoint`, `search_sessions`, `list_sessions`, `get_session_files`, the MCP tools
 * of the same names (as the MCP server lists them) over the daemon's `/sessions/*` endpoints, which run the same
 * operations with the same limits. A checkpoint made here is OpenCode's (the daemon's default tool name), as one made
 * through the MCP server from OpenCode was.
 */
import type { ToolDefinition } from "@opencode-ai/plugin"

/** POST `args` (without the ones left out) for the project of `directory`; the answer as JSON text. */
export type Call = (path: string, args: Record<string, unknown>, directory: string | undefined) => Promise<string>

const STATUSES = ["open", "frozen", "closed"] as const

export function sessionTools(z: any, call: Call): Record<string, ToolDefinition> {
  const bullets = () => z.array(z.string()).optional()
  return {
    checkpoint: {
      description:
        "Save this coding session to .codememory/sessions/ (at ~70% context, before a commit, at a task's end). Lists " +
        "are appended; work_pending replaces. The first call needs a slug.",
      args: {
        slug: z.string().optional().describe("2-4 hyphenated words."),
        session_id: z.string().optional().describe("Default: this conversation's."),
        goal: z.string().optional().describe("What is built or fixed, and the target."),
        work_completed: bullets(),
        work_pending: bullets().describe("Every task still to do."),
        decisions: bullets().describe("'**Label:** Rationale.' each."),
        plan_files: z
          .array(
            z.object({
              path: z.string(),
              header: z.string().optional().describe("Its first heading, exactly."),
            }),
          )
          .optional(),
        status: z.enum(STATUSES).optional().describe("frozen at the context limit, closed at the end."),
      },
      execute: (args: any, ctx: any) => call("/sessions/checkpoint", args, ctx?.directory),
    },
    search_sessions: {
      description:
        "Find earlier coding sessions; to continue one, read the file at its markdown_path.",
      args: {
        query: z.string().describe("What the session was about; may name dates ('last week'), a tool, paths."),
        scope: z.enum(["project", "global"]).optional().describe("global: every project on this machine."),
      },
      execute: (args: any, ctx: any) => call("/sessions/search", args, ctx?.directory),
    },
    list_sessions: {
      description: "Recent coding sessions, newest first.",
      args: {
        limit: z.number().int().min(1).max(100).optional(),
      },
      execute: (args: any, ctx: any) => call("/sessions/list", args, ctx?.directory),
    },
    get_session_files: {
      description: "Files a coding session created, modified or deleted.",
      args: { session_id: z.string() },
      execute: (args: any, ctx: any) => call("/sessions/files", args, ctx?.directory),
    },
  }
}
