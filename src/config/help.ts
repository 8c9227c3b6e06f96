/**
 * `kubelet-ts --help`: every flag in one aligned column (as pflag prints upstream's), defaults in
 * the flag's own syntax (Go durations such as 1m0s, not milliseconds), then the environment
 * variables the agent reads. test/config/help.test.ts checks that every `process.env` name read
 * under src/ is listed here.
 */
import { AUTH_FLAGS } from './auth.js';
import { FIELDS, type FieldKind } from './schema.js';
import { formatDuration } from '../util/duration.js';

/** The environment variables the agent reads, with what each does. */
export const ENVIRONMENT: ReadonlyArray<readonly [string, string]> = [
  ['KUBELET_TS_ROOT_DIR', 'Default of --root-dir (when the flag is absent).'],
  ['KUBELET_TS_LOG_LEVEL', 'A pino level (trace, debug, info, warn, error, fatal, silent) that overrides -v.'],
  ['KUBELET_TS_NATIVE', '0: run every hot path on its TypeScript twin, without loading the native addon.'],
  [
    'KUBELET_TS_TEST_DEVICE_PLUGIN_STOP_GRACE',
    'Tests only: how long a gone device plugin keeps its capacity (a duration; upstream: 5m, fixed).',
  ],
  ['KUBELET_TS_NATIVE_ADDON', 'Path of the native addon (.node) to load instead of build/Release; it must load.'],
];

/** pflag's type word after the flag name; bools have none. */
const TYPE_WORD: Partial<Record<FieldKind, string>> = {
  duration: 'duration',
  int: 'int32',
  port: 'int32',
  string: 'string',
  endpoint: 'string',
  stringList: 'strings',
  quantity: 'string',
  tlsVersion: 'string',
  cipherSuites: 'strings',
  reservedMap: 'mapStringString',
  headerMap: 'mapStringString',
  evictionMap: 'mapStringString',
  evictionGraceMap: 'mapStringString',
  featureGates: 'mapStringBool',
};

/** A default as it would be typed on the command line; '' when it is the type's zero value (not shown, as pflag). */
export function renderDefault(kind: FieldKind, value: unknown): string {
  if (kind === 'duration') return formatDuration(value as number);
  if (Array.isArray(value)) return value.join(',');
  if (value !== null && typeof value === 'object') {
    const sep = kind === 'evictionMap' ? '<' : '=';
    return Object.entries(value)
      .map(([k, v]) => `${k}${sep}${String(v)}`)
      .join(',');
  }
  if (typeof value === 'string') return value === '' ? '' : JSON.stringify(value);
  if (value === 0 || value === false) return '';
  return String(value);
}

const FLAG_ONLY_TYPES: Record<string, string> = { v: 'int', 'housekeeping-interval': 'duration' };

interface Row {
  name: string;
  type: string;
  help: string;
}

/** Rows padded to one column, the way pflag aligns its usage. */
function table(rows: readonly Row[]): string[] {
  const left = rows.map((r) => `  --${r.name}${r.type ? ` ${r.type}` : ''}`);
  const width = Math.max(...left.map((l) => l.length)) + 3;
  return rows.map((r, i) => left[i]!.padEnd(width) + r.help);
}

export function renderHelp(flagOnly: Readonly<Record<string, { bool?: boolean; help: string }>>): string {
  const rows: Row[] = Object.entries(flagOnly).map(([name, spec]) => ({
    name,
    type: spec.bool ? '' : (FLAG_ONLY_TYPES[name] ?? 'string'),
    help: spec.help,
  }));
  for (const f of FIELDS) {
    if (!f.flag) continue;
    const shown = renderDefault(f.kind, f.default);
    rows.push({
      name: f.flag,
      type: f.kind === 'bool' ? '' : (TYPE_WORD[f.kind] ?? 'string'),
      help: `${f.help} (config: ${f.name}${shown ? `; default ${shown}` : ''})`,
    });
  }
  for (const [name, spec] of Object.entries(AUTH_FLAGS))
    rows.push({ name, type: spec.bool ? '' : name.endsWith('-ttl') ? 'duration' : 'string', help: spec.help });
  const envWidth = Math.max(...ENVIRONMENT.map(([n]) => n.length)) + 5;
  return [
    'Usage: kubelet-ts [flags]',
    '',
    'Flags (override the --config file):',
    ...table(rows),
    '',
    'Environment variables:',
    ...ENVIRONMENT.map(([n, what]) => `  ${n.padEnd(envWidth - 2)}${what}`),
  ].join('\n');
}
