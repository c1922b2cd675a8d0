/** Small string helpers shared by the modules: clipping, one-line, case-insensitive dedupe. */

/** `s` cut to `n` characters, the last one "…" when it was cut. */
export function clip(s: string, n: number): string {
  if (n <= 0) return ""
  return s.length <= n ? s : s.slice(0, Math.max(0, n - 1)) + "…"
}

/** Every run of whitespace made one space, trimmed. */
export function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim()
}

/** `items` without repeats, first occurrence kept (strings compared case-insensitively). */
export function dedupe<T>(items: T[]): T[] {
  const seen = new Set<unknown>()
  const out: T[] = []
  for (const x of items) {
    const key = typeof x === "string" ? x.toLowerCase() : x
    if (seen.has(key)) continue
    seen.add(key)
    out.push(x)
  }
  return out
}
