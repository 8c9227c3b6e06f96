/**
 * loadConfig: command line + optional KubeletConfiguration file → one validated, frozen Config.
 * Flags override the file (as upstream). Every problem is collected and reported at once in a
 * ConfigError whose message names the flag or field; nothing half-valid escapes this module. Its
 * code is KTS_ERR_FLAG when the command line itself is malformed (an unknown flag, a flag without
 * its value, a stray argument), else KTS_ERR_CONFIG.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError, errorMessage } from '../errors.js';
import { tryParseQuantity } from '../util/quantity.js';
import { sysctlPatternProblem } from '../util/sysctl.js';
import { EVICTION_SIGNALS, FIELDS, RESERVABLE_RESOURCES, type FieldSpec } from './schema.js';
import { UPSTREAM_FIELDS } from './upstream-names.js';
import { acceptFileFields, acceptFlags, acceptedHelpSection, unusedUpstreamFlags } from './accepted.js';
import { applyDependentDefaults, convertTaints, isZeroValue } from './defaults.js';
import { parseDuration } from '../util/duration.js';
import { CGROUP_DRIVERS } from './cgroup-drivers.js';
import { renderHelp } from './help.js';
import type { Config, KubeletConfiguration, KubeletFlags } from './types.js';
import { parseManifestUrlHeaders } from './flag-values.js';
import { convertFeatureGates, featureGateProblems } from './feature-gates.js';
import { verificationConfigProblems } from './image-credentials.js';
import { parseNodeIPArgument } from '../node/node-ip.js';
import {
  AUTH_FLAGS,
  applyAuthFlags,
  convertAuthentication,
  convertAuthorization,
  convertCipherSuites,
  convertTlsVersion,
} from './auth.js';

export const CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
export const CONFIG_KIND = 'KubeletConfiguration';

/** Flags that exist only on the command line (upstream KubeletFlags). */
const FLAG_ONLY: Record<string, { key: keyof KubeletFlags | 'help' | 'version'; bool?: boolean; help: string }> = {
  config: { key: 'config', help: 'KubeletConfiguration file (kubelet.config.k8s.io/v1beta1).' },
  'root-dir': { key: 'rootDir', help: 'Directory for kubelet-ts state (default /var/lib/kubelet).' },
  'hostname-override': { key: 'hostnameOverride', help: 'Node name to use instead of the host name.' },
  'node-ip': { key: 'nodeIP', help: 'IP address of the node (host IP of pods).' },
  'housekeeping-interval': {
    key: 'housekeepingIntervalMs',
    help: 'Stats housekeeping and eviction monitoring period (default 10s).',
  },
  'node-labels': {
    key: 'nodeLabels',
    help: 'Labels of this node, key=value pairs separated by commas (matched by pod nodeSelector and node affinity).',
  },
  kubeconfig: { key: 'kubeconfig', help: 'kubeconfig of the API server; absent = standalone mode.' },
  'bootstrap-kubeconfig': {
    key: 'bootstrapKubeconfig',
    help: 'kubeconfig with bootstrap credentials: when --kubeconfig is missing or its client certificate expired, request one (TLS bootstrap) and write --kubeconfig.',
  },
  'cert-dir': { key: 'certDir', help: 'Where issued certificates are kept (default <root-dir>/pki).' },
  'logging-format': {
    key: 'loggingFormat',
    help: "Log format: text (default; klog's one-line header) or json (component-base's fields).",
  },
  v: {
    key: 'verbosity',
    help: 'Log verbosity: a line of level V(n) is written when n <= v; info and warnings are V(0), debug V(2), trace V(4).',
  },
  runonce: {
    key: 'runOnce',
    bool: true,
    help: 'Run the pods of the static sources once, print a result per pod, exit (non-zero when one failed).',
  },
  'lock-file': { key: 'lockFile', help: 'Hold an exclusive lock on this file while running.' },
  'image-credential-provider-config': {
    key: 'imageCredentialProviderConfig',
    help: 'CredentialProviderConfig file (or directory of *.json/*.yaml/*.yml files): the credential provider exec plugins.',
  },
  'image-credential-provider-bin-dir': {
    key: 'imageCredentialProviderBinDir',
    help: 'Directory holding the credential provider plugin executables named in --image-credential-provider-config.',
  },
  'exit-on-lock-contention': {
    key: 'exitOnLockContention',
    bool: true,
    help: 'With --lock-file: exit cleanly when another process opens the lock file.',
  },
  help: { key: 'help', bool: true, help: 'Print this help and exit.' },
  version: { key: 'version', bool: true, help: 'Print the version and exit.' },
};

export type LoadResult = { kind: 'run'; config: Config } | { kind: 'help'; text: string } | { kind: 'version' };

const REPEATABLE = new Set(['manifest-url-header']);

interface ParsedArgs {
  values: Map<string, string>;
  problems: string[];
}

/** The flags we act on → whether each is a bool. */
function ourFlags(): Map<string, boolean> {
  const ours = new Map<string, boolean>();
  for (const f of FIELDS) if (f.flag) ours.set(f.flag, f.kind === 'bool');
  for (const [name, spec] of Object.entries(FLAG_ONLY)) ours.set(name, spec.bool === true);
  for (const [name, spec] of Object.entries(AUTH_FLAGS)) ours.set(name, spec.bool);
  return ours;
}

const OUR_FLAGS = ourFlags();
const OUR_FIELDS: ReadonlySet<string> = new Set(FIELDS.map((f) => f.name));
/** Upstream flags accepted but not acted on (upstream-names.ts minus ours). */
const UNUSED_FLAGS = unusedUpstreamFlags(new Set(OUR_FLAGS.keys()));

/** Split argv into flag → raw string. Accepts --f=v, --f v, -f=v, -f v, and bare booleans. */
function parseArgv(argv: readonly string[]): ParsedArgs {
  const known = new Map(OUR_FLAGS);
  for (const [name, kind] of UNUSED_FLAGS) known.set(name, kind === 'bool');
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
    // A repeated header flag adds headers (upstream --manifest-url-header is repeatable).
    if (REPEATABLE.has(name) && values.has(name)) value = `${values.get(name)},${value}`;
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
      if (ms === undefined) return bad('must be a duration such as "20s", "1m30s" or "500ms"');
      if (spec.min !== undefined && ms < spec.min) return bad(`must be at least ${spec.min / 1000}s`);
      return { value: ms };
    }
    case 'stringList': {
      if (typeof raw === 'string')
        return {
          value: raw
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        };
      if (Array.isArray(raw) && raw.every((s) => typeof s === 'string')) return { value: raw };
      return bad('must be a list of strings');
    }
    case 'reservedMap':
      return convertMap(
        raw,
        where,
        { sep: '=', what: 'a map of resource to quantity such as {cpu: 200m, memory: 500Mi}' },
        (k, v) => {
          if (!RESERVABLE_RESOURCES.includes(k))
            return `unknown resource "${k}" (one of ${RESERVABLE_RESOURCES.join(', ')})`;
          const q = tryParseQuantity(v);
          return q === undefined || q < 0 ? `"${v}" is not a non-negative quantity` : undefined;
        },
      );
    case 'quantity': {
      const q = typeof raw === 'string' || typeof raw === 'number' ? tryParseQuantity(raw) : undefined;
      return q === undefined || q <= 0 ? bad('must be a positive quantity such as "10Mi"') : { value: String(raw) };
    }
    case 'evictionGraceMap':
      return convertMap(
        raw,
        where,
        { sep: '=', what: 'a map of eviction signal to grace period such as {memory.available: 1m30s}' },
        (k, v) => {
          if (!EVICTION_SIGNALS.includes(k))
            return `unknown eviction signal "${k}" (one of ${EVICTION_SIGNALS.join(', ')})`;
          return parseDuration(v) === undefined ? `grace period "${v}" must be a duration (1m30s)` : undefined;
        },
      );
    case 'evictionMap':
      return convertMap(
        raw,
        where,
        { sep: '<', what: 'a map of eviction signal to threshold such as {memory.available: 100Mi}' },
        (k, v) => {
          if (!EVICTION_SIGNALS.includes(k))
            return `unknown eviction signal "${k}" (one of ${EVICTION_SIGNALS.join(', ')})`;
          return isThreshold(v) ? undefined : `threshold "${v}" must be a quantity (100Mi) or a percentage (10%)`;
        },
      );
    case 'headerMap':
      return convertHeaderMap(raw, where);
    case 'authentication':
      return convertAuthentication(raw, where);
    case 'authorization':
      return convertAuthorization(raw, where);
    case 'tlsVersion':
      return convertTlsVersion(raw, where);
    case 'cipherSuites':
      return convertCipherSuites(raw, where);
    case 'taints':
      return convertTaints(raw, where);
    case 'featureGates':
      return convertFeatureGates(raw, where);
    case 'userNamespaces':
      return convertUserNamespaces(raw, where);
  }
}

/** upstream's userNamespaces.idsPerPod bounds (validation_linux.go), the unit being 65536. */
const USERNS_UNIT = 65536;

/** userNamespaces: {idsPerPod} checked as upstream ValidateKubeletConfiguration checks it. */
function convertUserNamespaces(raw: unknown, where: string): { value?: unknown; problem?: string } {
  if (raw === null) return { value: Object.freeze({}) };
  if (typeof raw !== 'object' || Array.isArray(raw))
    return { problem: `${where}: must be an object such as {idsPerPod: 65536} (got ${JSON.stringify(raw)})` };
  const unknown = Object.keys(raw).filter((k) => k !== 'idsPerPod');
  if (unknown.length > 0) return { problem: `${where}: unknown field "${unknown[0]}"` };
  const ids = (raw as { idsPerPod?: unknown }).idsPerPod;
  if (ids === undefined || ids === null) return { value: Object.freeze({}) };
  const at = `${where}: invalid configuration: userNamespaces.idsPerPod`;
  if (typeof ids !== 'number' || !Number.isInteger(ids))
    return { problem: `${at} must be an integer (got ${JSON.stringify(ids)})` };
  if (ids < USERNS_UNIT) return { problem: `${at} must not be less than ${USERNS_UNIT}` };
  if (ids % USERNS_UNIT !== 0) return { problem: `${at} must be a multiple of ${USERNS_UNIT}` };
  if (ids > 0xffff_ffff) return { problem: `${at} must not be more than ${0xffff_ffff}` };
  return { value: Object.freeze({ idsPerPod: ids }) };
}

/** staticPodURLHeader: {name: [values]} in the file, `key:value,...` on the command line. */
function convertHeaderMap(raw: unknown, where: string): { value?: unknown; problem?: string } {
  if (typeof raw === 'string') {
    const r = parseManifestUrlHeaders(raw);
    return r.problem ? { problem: `${where}: ${r.problem}` } : { value: Object.freeze(r.value) };
  }
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    const entries = Object.entries(raw);
    const ok = entries.every(([, v]) => Array.isArray(v) && v.every((x) => typeof x === 'string'));
    if (ok) return { value: Object.freeze(Object.fromEntries(entries)) };
  }
  return { problem: `${where}: must be a map of header name to a list of values (got ${JSON.stringify(raw)})` };
}

/** A threshold value: a non-negative quantity, or a percentage in [0%, 100%]. */
function isThreshold(v: string): boolean {
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(v);
  if (pct) return Number(pct[1]) <= 100;
  const q = tryParseQuantity(v);
  return q !== undefined && q >= 0;
}

/**
 * A string map from the file (a YAML mapping of strings or numbers) or from a flag
 * ("k=v,k2=v2", or "k<v" for eviction thresholds, as upstream's flag syntax). Every entry is
 * checked; all problems of the field are reported in one line. `what` names the expected shape.
 */
function convertMap(
  raw: unknown,
  where: string,
  { sep, what }: { sep: string; what: string },
  check: (k: string, v: string) => string | undefined,
): { value?: unknown; problem?: string } {
  const entries: [string, string][] = [];
  if (typeof raw === 'string') {
    for (const part of raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const i = part.indexOf(sep);
      if (i <= 0) return { problem: `${where}: "${part}" must look like key${sep}value` };
      entries.push([part.slice(0, i).trim(), part.slice(i + 1).trim()]);
    }
  } else if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [k, v] of Object.entries(raw)) {
      if (typeof v !== 'string' && typeof v !== 'number')
        return { problem: `${where}: value of "${k}" must be a string (got ${JSON.stringify(v)})` };
      entries.push([k, String(v)]);
    }
  } else {
    return { problem: `${where}: must be ${what} (got ${JSON.stringify(raw)})` };
  }
  const problems = entries.map(([k, v]) => check(k, v)).filter((p): p is string => p !== undefined);
  if (problems.length > 0) return { problem: `${where}: ${problems.join('; ')}` };
  return { value: Object.freeze(Object.fromEntries(entries)) };
}

/** --housekeeping-interval: a positive duration, default 10s (upstream cAdvisor housekeeping). */
function parseHousekeeping(raw: string | undefined, problems: string[]): number {
  if (raw === undefined) return 10_000;
  const ms = parseDuration(raw);
  if (ms === undefined || ms <= 0) problems.push(`--housekeeping-interval: "${raw}" must be a positive duration (10s)`);
  return ms ?? 10_000;
}

/** The test-only grace knob (a Go duration); upstream's constant (5 min) when unset. */
function testDeviceGrace(raw: string | undefined, problems: string[]): { deviceEndpointStopGraceMs?: number } {
  if (raw === undefined || raw === '') return {};
  const ms = parseDuration(raw);
  if (ms === undefined || ms <= 0) {
    problems.push(`KUBELET_TS_TEST_DEVICE_PLUGIN_STOP_GRACE: "${raw}" must be a positive duration (10s)`);
    return {};
  }
  return { deviceEndpointStopGraceMs: ms };
}

/** --node-labels: key=value pairs; keys and values follow the label syntax. */
function parseNodeLabels(raw: string | undefined, problems: string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  if (raw === undefined) return labels;
  const key =
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
  const value = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
  for (const part of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const i = part.indexOf('=');
    const k = i < 0 ? part : part.slice(0, i);
    const v = i < 0 ? '' : part.slice(i + 1);
    if (i < 0 || !key.test(k) || !value.test(v))
      problems.push(`--node-labels: "${part}" is not a valid key=value label`);
    else labels[k] = v;
  }
  return labels;
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
  if (obj.apiVersion !== CONFIG_API_VERSION)
    problems.push(`${path}: apiVersion must be ${CONFIG_API_VERSION} (got ${JSON.stringify(obj.apiVersion)})`);
  if (obj.kind !== CONFIG_KIND) problems.push(`${path}: kind must be ${CONFIG_KIND} (got ${JSON.stringify(obj.kind)})`);
  return obj;
}

/** Cross-field rules of the fields this file's daemon features read (upstream ValidateKubeletConfiguration). */
function checkDaemonFields(kc: KubeletConfiguration, flags: KubeletFlags, problems: string[]): void {
  const hi = kc.imageGCHighThresholdPercent;
  const lo = kc.imageGCLowThresholdPercent;
  if (hi > 100) problems.push(`imageGCHighThresholdPercent (--image-gc-high-threshold): must be 0-100 (got ${hi})`);
  if (lo > 100) problems.push(`imageGCLowThresholdPercent (--image-gc-low-threshold): must be 0-100 (got ${lo})`);
  if (lo >= hi)
    problems.push(`imageGCLowThresholdPercent (${lo}) must be less than imageGCHighThresholdPercent (${hi})`);
  if (kc.staticPodURL && !/^https?:\/\//.test(kc.staticPodURL))
    problems.push(`staticPodURL (--manifest-url): "${kc.staticPodURL}" must be an http:// or https:// URL`);
  if (kc.shutdownGracePeriodCriticalPodsMs > kc.shutdownGracePeriodMs)
    problems.push('shutdownGracePeriodCriticalPods must not be greater than shutdownGracePeriod');
  if (kc.serializeImagePulls && kc.maxParallelImagePulls > 1)
    problems.push('maxParallelImagePulls must be 0 or 1 when serializeImagePulls is true');
  const { imagePullCredentialsVerificationPolicy: policy, preloadedImagesVerificationAllowlist: allow } = kc;
  problems.push(...verificationConfigProblems(policy, allow));
  if (flags.exitOnLockContention && !flags.lockFile) problems.push('--exit-on-lock-contention needs --lock-file');
  problems.push(...enforceNodeAllocatableProblems(kc));
  for (const p of kc.allowedUnsafeSysctls) {
    const problem = sysctlPatternProblem(p);
    if (problem) problems.push(`allowedUnsafeSysctls (--allowed-unsafe-sysctls): ${problem}`);
  }
  if (!(CGROUP_DRIVERS as readonly string[]).includes(kc.cgroupDriver)) {
    problems.push(
      `cgroupDriver (--cgroup-driver): "${kc.cgroupDriver}" is not a cgroup driver; use ${CGROUP_DRIVERS.map((d) => `"${d}"`).join(' or ')} (the same as containerd's runc SystemdCgroup option: true for "systemd")`,
    );
  }
}

/** The keys enforceNodeAllocatable accepts (upstream kubetypes *EnforcementKey, NodeAllocatableNoneKey). */
export const ENFORCEMENT_KEYS = [
  'pods',
  'system-reserved',
  'kube-reserved',
  'system-reserved-compressible',
  'kube-reserved-compressible',
  'none',
] as const;

/** upstream ValidateKubeletConfiguration's enforceNodeAllocatable rules. */
export function enforceNodeAllocatableProblems(
  kc: Pick<
    KubeletConfiguration,
    'enforceNodeAllocatable' | 'systemReservedCgroup' | 'kubeReservedCgroup' | 'cgroupsPerQOS'
  >,
): string[] {
  const keys = kc.enforceNodeAllocatable;
  const field = 'enforceNodeAllocatable (--enforce-node-allocatable)';
  const out: string[] = [];
  const cgroupNeeded = (key: string, cgroup: string, what: string): void => {
    if (keys.includes(key) && cgroup === '') out.push(`${what} must be specified when "${key}" is in ${field}`);
  };
  for (const k of keys) {
    if (!(ENFORCEMENT_KEYS as readonly string[]).includes(k))
      out.push(`${field}: "${k}" is not an option; use ${ENFORCEMENT_KEYS.map((o) => `"${o}"`).join(', ')}`);
  }
  if (keys.includes('none') && keys.length > 1)
    out.push(`${field} may not contain other enforcements when "none" is specified`);
  for (const what of ['system', 'kube'] as const) {
    if (keys.includes(`${what}-reserved`) && keys.includes(`${what}-reserved-compressible`))
      out.push(`${field}: "${what}-reserved" and "${what}-reserved-compressible" cannot be specified together`);
  }
  cgroupNeeded('system-reserved', kc.systemReservedCgroup, 'systemReservedCgroup (--system-reserved-cgroup)');
  cgroupNeeded(
    'system-reserved-compressible',
    kc.systemReservedCgroup,
    'systemReservedCgroup (--system-reserved-cgroup)',
  );
  cgroupNeeded('kube-reserved', kc.kubeReservedCgroup, 'kubeReservedCgroup (--kube-reserved-cgroup)');
  cgroupNeeded('kube-reserved-compressible', kc.kubeReservedCgroup, 'kubeReservedCgroup (--kube-reserved-cgroup)');
  if (!kc.cgroupsPerQOS && keys.some((k) => k !== 'none'))
    out.push(`${field} of ${JSON.stringify(keys)} is not supported unless cgroupsPerQOS (--cgroups-per-qos) is true`);
  return out;
}

/** The upstream field and flag names not acted on: each is held to upstream's default (unacted-defaults.ts). */
export function unactedNames(): { fields: string[]; flags: string[] } {
  const fields = Object.keys(UPSTREAM_FIELDS).filter((n) => !OUR_FIELDS.has(n));
  return { fields, flags: [...UNUSED_FLAGS.keys()] };
}

export function helpText(): string {
  return [renderHelp(FLAG_ONLY), ...acceptedHelpSection(OUR_FIELDS, new Set(OUR_FLAGS.keys()))].join('\n');
}

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): LoadResult {
  const { values, problems } = parseArgv(argv);
  // A malformed command line is KTS_ERR_FLAG even when value problems are reported with it.
  const malformedCommandLine = problems.length > 0;
  if (values.get('help') === 'true') return { kind: 'help', text: helpText() };
  if (values.get('version') === 'true') return { kind: 'version' };

  const file = values.has('config') ? readConfigFile(values.get('config')!, problems) : {};
  const accepted = [
    ...acceptFileFields(file, OUR_FIELDS, values.get('config') ?? '', problems),
    ...acceptFlags(values, UNUSED_FLAGS, problems),
  ];
  const kubelet: Record<string, unknown> = {};
  for (const f of FIELDS) {
    let value = f.default;
    // Zero in the file means the default for upstream's non-pointer fields (defaults.go).
    if (f.name in file && !(f.zeroDefault && isZeroValue(f.kind, file[f.name]))) {
      const r = convert(f, file[f.name], `config field ${f.name}`);
      if (r.problem) problems.push(r.problem);
      else value = r.value;
    }
    if (f.flag && values.has(f.flag)) {
      const r = convert(f, values.get(f.flag), `--${f.flag}`);
      if (r.problem) problems.push(r.problem);
      // --feature-gates adds to the file's gates, winning per gate (upstream kubeletConfigFlagPrecedence).
      else value = f.kind === 'featureGates' ? { ...(value as object), ...(r.value as object) } : r.value;
    }
    kubelet[f.key] = value;
  }
  applyDependentDefaults(kubelet, file, values);
  kubelet.featureGates = Object.freeze(kubelet.featureGates as Record<string, boolean>);
  problems.push(...featureGateProblems(kubelet.featureGates as Record<string, boolean>, 'featureGates'));
  applyAuthFlags(kubelet, values, problems);

  const verbosityRaw = values.get('v') ?? '0';
  const verbosity = /^\d+$/.test(verbosityRaw) ? Number(verbosityRaw) : NaN;
  if (Number.isNaN(verbosity)) problems.push(`-v: must be a non-negative integer (got "${verbosityRaw}")`);
  const loggingFormat = values.get('logging-format') ?? 'text';
  if (loggingFormat !== 'json' && loggingFormat !== 'text')
    problems.push(`--logging-format: must be json or text (got "${loggingFormat}")`);
  const nodeIP = values.get('node-ip');
  const nodeIPs = parseNodeIPFlag(nodeIP, problems);

  const flags: KubeletFlags = {
    config: values.get('config'),
    rootDir: values.get('root-dir') ?? env.KUBELET_TS_ROOT_DIR ?? '/var/lib/kubelet',
    hostnameOverride: values.get('hostname-override'),
    nodeIP,
    nodeIPs,
    kubeconfig: values.get('kubeconfig'),
    bootstrapKubeconfig: values.get('bootstrap-kubeconfig'),
    certDir:
      values.get('cert-dir') ?? join(values.get('root-dir') ?? env.KUBELET_TS_ROOT_DIR ?? '/var/lib/kubelet', 'pki'),
    loggingFormat: loggingFormat as 'json' | 'text',
    verbosity,
    nodeLabels: Object.freeze(parseNodeLabels(values.get('node-labels'), problems)),
    runOnce: values.get('runonce') === 'true',
    lockFile: values.get('lock-file'),
    imageCredentialProviderConfig: values.get('image-credential-provider-config') || undefined,
    imageCredentialProviderBinDir: values.get('image-credential-provider-bin-dir') || undefined,
    exitOnLockContention: values.get('exit-on-lock-contention') === 'true',
    housekeepingIntervalMs: parseHousekeeping(values.get('housekeeping-interval'), problems),
    ...testDeviceGrace(env.KUBELET_TS_TEST_DEVICE_PLUGIN_STOP_GRACE, problems),
  };
  checkDaemonFields(kubelet as unknown as KubeletConfiguration, flags, problems);
  if (flags.bootstrapKubeconfig && !flags.kubeconfig)
    problems.push('--bootstrap-kubeconfig needs --kubeconfig: the path the bootstrapped kubeconfig is written to');
  const nodeName = (flags.hostnameOverride ?? hostname()).trim().toLowerCase();
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(nodeName))
    problems.push(`node name "${nodeName}" is not a valid DNS subdomain (set --hostname-override)`);
  if (problems.length > 0) throw new ConfigError(problems, malformedCommandLine ? 'KTS_ERR_FLAG' : 'KTS_ERR_CONFIG');

  const config: Config = {
    kubelet: Object.freeze(kubelet as unknown as KubeletConfiguration),
    flags: Object.freeze(flags),
    nodeName,
    acceptedNotActedOn: Object.freeze(accepted),
  };
  return { kind: 'run', config: Object.freeze(config) };
}

/**
 * --node-ip as upstream splits it (cloud providers are refused, so dual stack is allowed). An
 * entry that is not an IP is refused here, where upstream logs and ignores it.
 */
function parseNodeIPFlag(raw: string | undefined, problems: string[]): readonly string[] {
  if (raw === undefined) return [];
  const parsed = parseNodeIPArgument(raw, '');
  for (const bad of parsed.invalid) problems.push(`--node-ip: "${bad}" is not an IP address (in "${raw}")`);
  if (parsed.error) problems.push(`--node-ip: "${raw}": ${parsed.error}`);
  return Object.freeze(parsed.ips);
}
