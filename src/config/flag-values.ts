/** Flag values with a syntax of their own, parsed once at the edge. */

/**
 * Parses --manifest-url-header values (upstream syntax: comma-separated `key:value`, the flag
 * repeatable, a repeated key adds a value in order). Returns the map or a problem.
 */
export function parseManifestUrlHeaders(raw: string): { value?: Record<string, string[]>; problem?: string } {
  const out: Record<string, string[]> = {};
  for (const part of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const i = part.indexOf(':');
    if (i <= 0) return { problem: `"${part}" must look like key:value` };
    (out[part.slice(0, i).trim()] ??= []).push(part.slice(i + 1).trim());
  }
  return { value: out };
}
