/**
 * zod as the plugin's tools are built with it: @opencode-ai/plugin's (OpenCode installs it, with zod, into
 * `.opencode/node_modules` of every project with a plugin), else a bare zod; null when neither imports. Imported at
 * run time, never bundled. (tools.ts imports it the same way for the schemas; here it turns them into the JSON Schema
 * OpenCode sends, to count what the definitions cost.)
 */
export async function importZod(): Promise<any> {
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
