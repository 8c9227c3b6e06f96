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

/**
 * ms → Go's time.Duration.String(): "0s", "500ms", "1.5s", "10s", "1m0s", "1m30s", "4h0m0s".
 * --help and /configz print durations this way, as upstream's flags and KubeletConfiguration do.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${trimFraction(abs)}ms`;
  const h = Math.floor(abs / 3_600_000);
  const m = Math.floor((abs % 3_600_000) / 60_000);
  const s = (abs % 60_000) / 1000;
  let out = sign;
  if (h > 0) out += `${h}h`;
  if (h > 0 || m > 0) out += `${m}m`;
  return `${out}${trimFraction(s)}s`;
}

/** A number without trailing fractional zeros, at most 9 decimals (Go prints down to the ns). */
function trimFraction(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(9).replace(/0+$/, '');
}
