/**
 * The CredentialProviderConfig of --image-credential-provider-config (upstream
 * pkg/credentialprovider/plugin/config.go): one file, or a directory whose *.json, *.yaml and
 * *.yml files are read in lexical order and their providers merged (a name twice is an error).
 * Decoding is strict, as upstream's: an unknown field is an error naming it. Validation is
 * upstream's validateCredentialProviderConfig; every problem is reported at once, at start-up.
 *
 * tokenAttributes (service account tokens for plugins, upstream's
 * KubeletServiceAccountTokenForCredentialProviders, beta and on by default in 1.35) is not
 * implemented: a provider that sets it is refused, naming the field, rather than run without it.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { ConfigError, errorMessage } from '../../errors.js';
import { parseDuration } from '../../util/duration.js';
import { parseYamlDocument } from '../../util/yaml-lazy.js';

/** The config file's groups/versions upstream's kubelet decodes. */
const CONFIG_API_VERSIONS = [
  'kubelet.config.k8s.io/v1',
  'kubelet.config.k8s.io/v1beta1',
  'kubelet.config.k8s.io/v1alpha1',
];
/** The exec plugin protocol versions (upstream apiVersions). */
export const PLUGIN_API_VERSIONS = [
  'credentialprovider.kubelet.k8s.io/v1',
  'credentialprovider.kubelet.k8s.io/v1beta1',
  'credentialprovider.kubelet.k8s.io/v1alpha1',
];

/** One validated provider (upstream kubeletconfig.CredentialProvider). */
export interface CredentialProvider {
  name: string;
  matchImages: string[];
  defaultCacheDurationMs: number;
  apiVersion: string;
  args: string[];
  env: { name: string; value: string }[];
}

const PROVIDER_FIELDS = new Set([
  'name',
  'matchImages',
  'defaultCacheDuration',
  'apiVersion',
  'args',
  'env',
  'tokenAttributes',
]);

/** The files a path names: itself, or a directory's config files in lexical order. */
function configFiles(path: string): string[] {
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (err) {
    throw new ConfigError([
      `--image-credential-provider-config: unable to access path "${path}": ${errorMessage(err)}`,
    ]);
  }
  if (!isDir) return [path];
  const files = readdirSync(path, { withFileTypes: true })
    .filter((e) => !e.isDirectory() && ['.json', '.yaml', '.yml'].includes(extname(e.name)))
    .map((e) => join(path, e.name))
    .sort();
  if (files.length === 0)
    throw new ConfigError([`--image-credential-provider-config: no configuration files found in directory "${path}"`]);
  return files;
}

/** One file → its raw providers, or problems (wrong kind/apiVersion, unknown top-level fields). */
function decodeFile(file: string, problems: string[]): Record<string, unknown>[] {
  let doc: unknown;
  try {
    doc = parseYamlDocument(readFileSync(file, 'utf8'));
  } catch (err) {
    problems.push(`${file}: ${errorMessage(err)}`);
    return [];
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    problems.push(`${file}: not a CredentialProviderConfig object`);
    return [];
  }
  const o = doc as Record<string, unknown>;
  if (o.kind !== 'CredentialProviderConfig')
    problems.push(`${file}: kind must be CredentialProviderConfig (got ${JSON.stringify(o.kind)})`);
  if (!CONFIG_API_VERSIONS.includes(String(o.apiVersion)))
    problems.push(
      `${file}: apiVersion must be one of ${CONFIG_API_VERSIONS.join(', ')} (got ${JSON.stringify(o.apiVersion)})`,
    );
  for (const k of Object.keys(o))
    if (!['kind', 'apiVersion', 'providers'].includes(k)) problems.push(`${file}: unknown field "${k}"`);
  if (o.providers !== undefined && !Array.isArray(o.providers)) problems.push(`${file}: providers must be a list`);
  return Array.isArray(o.providers) ? (o.providers as Record<string, unknown>[]) : [];
}

const stringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** upstream ParseSchemelessURL's failures that matter: empty, spaces, a port that is not a number. */
function matchImageProblem(m: string): string | undefined {
  if (m === '') return 'must not be empty';
  if ([...m].some((c) => c.charCodeAt(0) <= 0x20)) return 'must not contain spaces or control characters';
  const host = m.split('/')[0]!;
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1))) return `invalid port "${host.slice(colon + 1)}"`;
  return undefined;
}

function validateName(name: unknown, at: string, problems: string[]): string {
  if (typeof name !== 'string' || name === '') {
    problems.push(`${at}.name: Required value`);
    return '';
  }
  if (name.includes('/')) problems.push(`${at}.name: Invalid value "${name}": provider name cannot contain '/'`);
  if (name.includes(' ')) problems.push(`${at}.name: Invalid value "${name}": provider name cannot contain spaces`);
  if (name === '.' || name === '..')
    problems.push(`${at}.name: Invalid value "${name}": provider name cannot be '${name}'`);
  return name;
}

function validateCacheDuration(raw: unknown, at: string, problems: string[]): number {
  if (raw === undefined || raw === null) {
    problems.push(`${at}.defaultCacheDuration: Required value`);
    return 0;
  }
  // Go durations may be negative; parseDuration reads the magnitude.
  const neg = typeof raw === 'string' && raw.startsWith('-');
  const abs = typeof raw === 'string' ? parseDuration(neg ? raw.slice(1) : raw) : undefined;
  const ms = abs === undefined ? undefined : neg ? -abs : abs;
  if (ms === undefined) problems.push(`${at}.defaultCacheDuration: not a duration (got ${JSON.stringify(raw)})`);
  else if (ms < 0) problems.push(`${at}.defaultCacheDuration: must be greater than or equal to 0`);
  return ms ?? 0;
}

function validateEnv(raw: unknown, at: string, problems: string[]): { name: string; value: string }[] {
  if (raw === undefined) return [];
  const ok =
    Array.isArray(raw) &&
    raw.every((e) => e && typeof e === 'object' && typeof e.name === 'string' && typeof e.value === 'string');
  if (!ok) problems.push(`${at}.env: must be a list of {name, value} strings`);
  return ok ? (raw as { name: string; value: string }[]).map(({ name, value }) => ({ name, value })) : [];
}

function validateProvider(p: Record<string, unknown>, at: string, problems: string[]): CredentialProvider {
  for (const k of Object.keys(p)) if (!PROVIDER_FIELDS.has(k)) problems.push(`${at}: unknown field "${k}"`);
  const name = validateName(p.name, at, problems);
  const apiVersion = typeof p.apiVersion === 'string' ? p.apiVersion : '';
  if (!apiVersion) problems.push(`${at}.apiVersion: Required value`);
  else if (!PLUGIN_API_VERSIONS.includes(apiVersion))
    problems.push(
      `${at}.apiVersion: Unsupported value "${apiVersion}": supported values: ${PLUGIN_API_VERSIONS.join(', ')}`,
    );
  const matchImages = stringList(p.matchImages) ? p.matchImages : [];
  if (matchImages.length === 0)
    problems.push(`${at}.matchImages: Required value: at least 1 item in matchImages is required`);
  for (const m of matchImages) {
    const why = matchImageProblem(m);
    if (why) problems.push(`${at}.matchImages: Invalid value "${m}": match image is invalid: ${why}`);
  }
  const defaultCacheDurationMs = validateCacheDuration(p.defaultCacheDuration, at, problems);
  if (p.args !== undefined && !stringList(p.args)) problems.push(`${at}.args: must be a list of strings`);
  const env = validateEnv(p.env, at, problems);
  if (p.tokenAttributes !== undefined)
    problems.push(
      `${at}.tokenAttributes: not supported by kubelet-ts (service account tokens for credential providers, ` +
        'upstream KubeletServiceAccountTokenForCredentialProviders); remove it or give the plugin its own credentials',
    );
  return { name, matchImages, defaultCacheDurationMs, apiVersion, args: stringList(p.args) ? p.args : [], env };
}

/**
 * upstream readCredentialProviderConfig + validateCredentialProviderConfig: the providers of
 * `path`, in file then list order, or a ConfigError naming every problem.
 */
export function readCredentialProviderConfig(path: string): CredentialProvider[] {
  const problems: string[] = [];
  const providers: CredentialProvider[] = [];
  const seen = new Set<string>();
  for (const file of configFiles(path)) {
    decodeFile(file, problems).forEach((raw, i) => {
      const at = `${file}: providers[${i}]`;
      if (!raw || typeof raw !== 'object') return void problems.push(`${at}: not an object`);
      const p = validateProvider(raw, at, problems);
      if (p.name && seen.has(p.name)) problems.push(`${at}.name: Duplicate value "${p.name}"`);
      seen.add(p.name);
      providers.push(p);
    });
  }
  if (providers.length === 0 && problems.length === 0)
    problems.push(`${path}: providers: Required value: at least 1 item in plugins is required`);
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `--image-credential-provider-config: ${p}`));
  return providers;
}

/**
 * upstream readCredentialProviderConfig's hash, for kubelet_credential_provider_config_info:
 * SHA-256 over each config file (sorted, as read) prefixed by its length as a big-endian uint64,
 * written `sha256:<hex>` as image digests are.
 */
export function credentialProviderConfigHash(path: string): string {
  const hasher = createHash('sha256');
  for (const file of configFiles(path)) {
    const data = readFileSync(file);
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(data.length));
    hasher.update(len).update(data);
  }
  return `sha256:${hasher.digest('hex')}`;
}
