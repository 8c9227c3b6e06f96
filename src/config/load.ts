/**
 * loadConfig: command line + optional KubeletConfiguration file → one validated, frozen Config.
 * Flags override the file (as upstream). Every problem is collected and reported at once in a
 * ConfigError whose message names the flag or field; nothing half-valid escapes this module.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parse as parseYaml } from 'yaml';
import { ConfigError, errorMessage } from '../errors.js';
import { ACCEPTED_UNUSED, FIELDS, parseDuration, type FieldSpec } from './schema.js';
import type { Config, KubeletConfiguration, KubeletFlags } from './types.js';

export const CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
export const CONFIG_KIND = 'KubeletConfiguration';

/** Flags that exist only on the command line (upstream KubeletFlags). */
const FLAG_ONLY: Record<string, { key: keyof KubeletFlags | 'help' | 'version'; bool?: boolean; help: string }> = {
  config: { key: 'config', help: 'KubeletConfiguration file (kubelet.config.k8s.io/v1beta1).' },
  'root-dir': { key: 'rootDir', help: 'Directory for kubelet-ts state (default /var/lib/kubelet).' },
  'hostname-override': { key: 'hostnameOverride', help: 'Node name to use instead of the host name.' },
  'node-ip': { key: 'nodeIP', help: 'IP address of the node (host IP of pods).' },
  kubeconfig: { key: 'kubeconfig', help: 'kubeconfig of the API server; absent = standalone mode.' },
  'logging-format': { key: 'loggingFormat', help: 'json (default) or text.' },
  v: { key: 'verbosity', help: 'Log verbosity (0 info, 1-3 debug, 4+ trace).' },
  help: { key: 'help', bool: true, help: 'Print this help and exit.' },
  version: { key: 'version', bool: true, help: 'Print the version and exit.' },
};

export type LoadResult = { kind: 'run'; config: Config } | { kind: 'help'; text: string } | { kind: 'version' };

interface ParsedArgs { values: Map<string, string>; problems: string[] }

/** Split argv into flag → raw string. Accepts --f=v, --f v, -f=v, -f v, and bare booleans. */
function parseArgv(argv: readonly string[]): ParsedArgs {
  const known = new Map<string, boolean>();
  for (const f of FIELDS) if (f.flag) known.set(f.flag, f.kind === 'bool');
  for (const [name, spec] of Object.entries(FLAG_ONLY)) known.set(name, spec.bool === true);
  const values = new Map<string, string>();
  const problems: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--?([A-Za-z][\w-]*)(?:=(.*))?$/s.exec(arg);
    if (!m) {
      problems.push(`unexpected argument "${arg}" (flags look like --name=value)`);
      continue;
    }
    const name = m[1]!;
    if (!known.has(name)) {
      problems.push(`unknown flag: --${name}`);
      continue;
    }
    let value = m[2];
    if (value === undefined) {
      if (known.get(name)) value = 'true';
      else if (i + 1 < argv.length) value = argv[++i]!;
      else {
        problems.push(`flag --${name} needs a value`);
        continue;
      }
    }
    values.set(name, value);
  }
  return { values, problems };
}

/** Convert one raw value to the field's type, or return a problem string. */
function convert(spec: FieldSpec, raw: unknown, where: string): { value?: unknown; problem?: string } {
  const bad = (why: string) => ({ problem: `${where}: ${why} (got ${JSON.stringify(raw)})` });
  switch (spec.kind) {
    case 'string':
      return typeof raw === 'string' ? { value: raw } : bad('must be a string');
    case 'endpoint':
      if (typeof raw !== 'string') return bad('must be a string');
      if (raw !== '' && !/^(unix:\/\/)?\//.test(raw)) return bad('must be unix:///path or an absolute socket path');
      return { value: raw };
    case 'bool':
      if (typeof raw === 'boolean') return { value: raw };
      if (raw === 'true' || raw === 'false') return { value: raw === 'true' };
      return bad('must be true or false');
    case 'port':
    case 'int': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isInteger(n)) return bad('must be an integer');
      if (spec.kind === 'port' && (n < 0 || n > 65535)) return bad('must be a port number 0-65535');
      if (spec.min !== undefined && n < spec.min) return bad(`must be at least ${spec.min}`);
      return { value: n };
    }
    case 'duration': {
      const ms = typeof raw === 'string' ? parseDuration(raw) : undefined;
      return ms === undefined ? bad('must be a duration such as "20s", "1m30s" or "500ms"') : { value: ms };
    }
    case 'stringList': {
      if (typeof raw === 'string') return { value: raw.split(',').map((s) => s.trim()).filter(Boolean) };
      if (Array.isArray(raw) && raw.every((s) => typeof s === 'string')) return { value: raw };
      return bad('must be a list of strings');
    }
  }
}

function readConfigFile(path: string, problems: string[]): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    problems.push(`--config ${path}: ${errorMessage(err)}`);
    return {};
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    problems.push(`--config ${path}: must be a KubeletConfiguration object`);
    return {};
  }
  const obj = doc as Record<string, unknown>;
  if (obj.apiVersion !== CONFIG_API_VERSION) problems.push(`${path}: apiVersion must be ${CONFIG_API_VERSION} (got ${JSON.stringify(obj.apiVersion)})`);
  if (obj.kind !== CONFIG_KIND) problems.push(`${path}: kind must be ${CONFIG_KIND} (got ${JSON.stringify(obj.kind)})`);
  const byName = new Set(FIELDS.map((f) => f.name));
  for (const key of Object.keys(obj)) {
    if (key !== 'apiVersion' && key !== 'kind' && !byName.has(key) && !ACCEPTED_UNUSED.has(key)) {
      problems.push(`${path}: unknown field "${key}"`);
    }
  }
  return obj;
}

export function helpText(): string {
  const lines = ['Usage: kubelet-ts [flags]', '', 'Flags (override the --config file):'];
  for (const [name, spec] of Object.entries(FLAG_ONLY)) lines.push(`  --${name.padEnd(30)} ${spec.help}`);
  for (const f of FIELDS) if (f.flag) lines.push(`  --${f.flag.padEnd(30)} ${f.help} (config: ${f.name}, default ${JSON.stringify(f.default)})`);
  return lines.join('\n');
}

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): LoadResult {
  const { values, problems } = parseArgv(argv);
  if (values.get('help') === 'true') return { kind: 'help', text: helpText() };
  if (values.get('version') === 'true') return { kind: 'version' };

  const file = values.has('config') ? readConfigFile(values.get('config')!, problems) : {};
  const kubelet: Record<string, unknown> = {};
  for (const f of FIELDS) {
    let value = f.default;
    if (f.name in file) {
      const r = convert(f, file[f.name], `config field ${f.name}`);
      if (r.problem) problems.push(r.problem);
      else value = r.value;
    }
    if (f.flag && values.has(f.flag)) {
      const r = convert(f, values.get(f.flag), `--${f.flag}`);
      if (r.problem) problems.push(r.problem);
      else value = r.value;
    }
    kubelet[f.key] = value;
  }

  const verbosityRaw = values.get('v') ?? '0';
  const verbosity = /^\d+$/.test(verbosityRaw) ? Number(verbosityRaw) : NaN;
  if (Number.isNaN(verbosity)) problems.push(`-v: must be a non-negative integer (got "${verbosityRaw}")`);
  const loggingFormat = values.get('logging-format') ?? 'json';
  if (loggingFormat !== 'json' && loggingFormat !== 'text') problems.push(`--logging-format: must be json or text (got "${loggingFormat}")`);
  const nodeIP = values.get('node-ip');
  if (nodeIP !== undefined && !/^[\d.]+$|^[0-9a-fA-F:]+$/.test(nodeIP)) problems.push(`--node-ip: "${nodeIP}" is not an IP address`);

  const flags: KubeletFlags = {
    config: values.get('config'),
    rootDir: values.get('root-dir') ?? env.KUBELET_TS_ROOT_DIR ?? '/var/lib/kubelet',
    hostnameOverride: values.get('hostname-override'),
    nodeIP,
    kubeconfig: values.get('kubeconfig'),
    loggingFormat: loggingFormat as 'json' | 'text',
    verbosity,
  };
  const nodeName = (flags.hostnameOverride ?? hostname()).trim().toLowerCase();
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(nodeName)) problems.push(`node name "${nodeName}" is not a valid DNS subdomain (set --hostname-override)`);
  if (problems.length > 0) throw new ConfigError(problems);

  const config: Config = {
    kubelet: Object.freeze(kubelet as unknown as KubeletConfiguration),
    flags: Object.freeze(flags),
    nodeName,
  };
  return { kind: 'run', config: Object.freeze(config) };
}
