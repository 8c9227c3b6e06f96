/**
 * Prometheus text exposition (0.0.4) written by hand for /metrics/resource and /metrics/cadvisor:
 * prom-client cannot attach sample timestamps, and uint64 counters must be printed exactly.
 */

export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Record<string, string>;
export type SampleValue = bigint | number;

const escapeLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

/** Nanoseconds as exact decimal seconds ("12.000340001" → trailing zeros trimmed). */
export function nsToSeconds(ns: bigint): string {
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return frac ? `${ns / 1_000_000_000n}.${frac}` : `${ns / 1_000_000_000n}`;
}

function formatValue(v: SampleValue): string {
  if (typeof v === 'bigint') return v.toString();
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  return String(v);
}

/** Families are written in the order first declared, each with its samples together. */
export class Exposition {
  private readonly families = new Map<string, { type: string; help: string; lines: string[] }>();

  family(name: string, type: 'counter' | 'gauge', help: string): this {
    if (!this.families.has(name)) this.families.set(name, { type, help, lines: [] });
    return this;
  }

  /** A sample; `value` a string is written as is (already exact decimal). */
  sample(name: string, labels: Labels, value: SampleValue | string, timestampMs?: number): void {
    const fam = this.families.get(name);
    if (!fam) throw new Error(`metric family ${name} not declared`);
    const ls = Object.entries(labels)
      .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
      .join(',');
    const v = typeof value === 'string' ? value : formatValue(value);
    fam.lines.push(`${name}${ls ? `{${ls}}` : ''} ${v}${timestampMs !== undefined ? ` ${timestampMs}` : ''}`);
  }

  text(): string {
    const out: string[] = [];
    for (const [name, f] of this.families) {
      out.push(`# HELP ${name} ${escapeHelp(f.help)}`, `# TYPE ${name} ${f.type}`, ...f.lines);
    }
    return out.length ? out.join('\n') + '\n' : '';
  }
}
