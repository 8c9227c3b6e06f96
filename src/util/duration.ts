/** Go durations (time.ParseDuration's units), as KubeletConfiguration fields and flags write them. */

/** Parse a Go duration string ("1m30s", "500ms", "20s", "1h"). Returns ms or undefined. */
export function parseDuration(s: string): number | undefined {
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  const scale: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * scale[m[2]!]!;
    pos = re.lastIndex;
  }
  return pos === 0 ? undefined : Math.round(total);
}
