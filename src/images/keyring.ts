/**
 * The docker keyring (upstream pkg/credentialprovider keyring.go and secrets/secrets.go): registry
 * credentials indexed by registry key, looked up with an image's repository. Three sources feed
 * it, unioned in upstream's order: the pod's imagePullSecrets (MakeDockerKeyring), the node's
 * docker config file (docker-config.ts) and the credential provider exec plugins
 * (credentialprovider/). The pod's secrets are read from the secret cache in API server mode
 * (src/apimode/pull-secrets.ts, upstream getPullSecretsForPod); standalone mode has no secrets to
 * read, so a static pod's pull secrets are reported missing and its pulls use the node's keyring.
 *
 * Matching is upstream's URLsMatchStr: a key is a schemeless URL whose host labels may be globs
 * ("*.example.com", "prefix.*.io"); the label count and the port must be equal and the key's path
 * must be a string prefix of the image's path. Keys are tried in reverse lexical order, so
 * "quay.io/coreos" comes before "quay.io". An image of the default registry (docker.io) with no
 * other match takes the "index.docker.io" credentials.
 */
import { createHash } from 'node:crypto';
import type { AuthConfig } from '../cri/types.js';
import { ContainerStartError } from '../errors.js';

/** The parts of a core/v1 Secret the keyring reads (data values base64, as the API serves them). */
export interface PullSecret {
  metadata?: { name?: string; namespace?: string; uid?: string };
  type?: string;
  data?: Record<string, string>;
}

/** One entry of a docker config: upstream DockerConfigEntry (auth decodes to username:password). */
export interface DockerConfigEntry {
  username?: string;
  password?: string;
  auth?: string;
  email?: string;
  identitytoken?: string;
  registrytoken?: string;
}

/** registry key → entry: a .dockercfg file, the "auths" of a config.json, a plugin's response. */
export type DockerConfig = Record<string, DockerConfigEntry>;

/** upstream DockerKeyring. Lookup takes an image repository (upstream passes repoToPull). */
export interface DockerKeyring {
  lookup(image: string): Promise<AuthConfig[]>;
}

const DEFAULT_REGISTRY_HOST = 'index.docker.io';

/** "auth" is base64("user:password"), padded or not (upstream decodeDockerConfigFieldAuth). */
function decodeAuth(field: string): { username: string; password: string } | undefined {
  const decoded = Buffer.from(field.trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i < 0 ? undefined : { username: decoded.slice(0, i), password: decoded.slice(i + 1) };
}

const ENTRY_STRINGS = ['username', 'password', 'auth', 'email', 'identitytoken', 'registrytoken'] as const;

/**
 * What upstream's DockerConfigEntry.UnmarshalJSON would refuse in a docker config (a secret's,
 * the node's file, a plugin's answer), naming the registry key; undefined when all is well.
 */
export function dockerConfigProblem(cfg: unknown): string | undefined {
  if (typeof cfg !== 'object' || cfg === null || Array.isArray(cfg)) return 'the docker config is not a map';
  for (const [loc, entry] of Object.entries(cfg as Record<string, unknown>)) {
    const at = `entry ${JSON.stringify(loc)}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `${at} is not an object`;
    const e = entry as Record<string, unknown>;
    const bad = ENTRY_STRINGS.find((k) => e[k] !== undefined && e[k] !== null && typeof e[k] !== 'string');
    if (bad) return `${at}: ${bad} must be a string`;
    if (typeof e.auth === 'string' && e.auth !== '' && !decodeAuth(e.auth))
      return `${at}: auth must be formatted as base64(username:password)`;
  }
  return undefined;
}

/**
 * No serverAddress: containerd parses it as a URL and drops (or, for "host:port", fails on)
 * credentials whose address is not the image's host with a scheme; the keyring already chose
 * them for this image, as upstream's keyring entries carry none.
 */
function toAuth(entry: DockerConfigEntry): AuthConfig {
  const auth: AuthConfig = {};
  let { username, password } = entry;
  const decoded = typeof entry.auth === 'string' && entry.auth ? decodeAuth(entry.auth) : undefined;
  if (decoded) ({ username, password } = decoded);
  if (username) auth.username = username;
  if (password !== undefined) auth.password = password;
  if (entry.identitytoken) auth.identityToken = entry.identitytoken;
  if (entry.registrytoken) auth.registryToken = entry.registrytoken;
  return auth;
}

/** A schemeless URL → host labels, port and path (upstream ParseSchemelessURL + SplitURL). */
function splitUrl(url: string): { labels: string[]; port: string; path: string } {
  const slash = url.indexOf('/');
  const hostPort = slash < 0 ? url : url.slice(0, slash);
  const path = slash < 0 ? '' : url.slice(slash);
  const colon = hostPort.lastIndexOf(':');
  const host = colon < 0 ? hostPort : hostPort.slice(0, colon);
  const port = colon < 0 ? '' : hostPort.slice(colon + 1);
  return { labels: host.split('.'), port, path };
}

/** Go's filepath.Match for one host label: `*`, `?` and `[...]` classes. */
function globMatch(glob: string, target: string): boolean {
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) return false; // a malformed pattern matches nothing (Go: ErrBadPattern)
      re += `[${glob.slice(i + 1, end).replace(/\\/g, '\\\\')}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  try {
    return new RegExp(`${re}$`).test(target);
  } catch {
    return false; // a class such as [z-a]: Go's ErrBadPattern, no match
  }
}

/** upstream URLsMatchStr: whether the registry key `glob` applies to `target`. */
export function urlsMatchStr(glob: string, target: string): boolean {
  const g = splitUrl(glob);
  const t = splitUrl(target);
  if (g.port !== t.port || g.labels.length !== t.labels.length) return false;
  if (!t.path.startsWith(g.path)) return false;
  return g.labels.every((label, i) => globMatch(label, t.labels[i]!));
}

/** upstream isDefaultRegistryMatch: the image pulls from Docker Hub. */
export function isDefaultRegistryMatch(image: string): boolean {
  const slash = image.indexOf('/');
  const first = slash < 0 ? image : image.slice(0, slash);
  if (first === '') return false;
  if (slash < 0) return true;
  if (first === 'docker.io' || first === 'index.docker.io') return true;
  return !/[.:]/.test(first);
}

/** A docker config key → the index key: scheme dropped, "/v1/" and "/v2/" prefixes dropped. */
function indexKey(loc: string): string {
  const noScheme = loc.replace(/^https?:\/\//, '');
  const slash = noScheme.indexOf('/');
  const host = slash < 0 ? noScheme : noScheme.slice(0, slash);
  let path = slash < 0 ? '' : noScheme.slice(slash);
  if (path.startsWith('/v1/') || path.startsWith('/v2/')) path = path.slice(3);
  return path.length > 0 && path !== '/' ? host + path : host;
}

/** The secret a credential came from (upstream TrackedAuthConfig.Source): its coordinates. */
export interface SecretCoordinates {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * upstream TrackedAuthConfig: a credential with the pod secret it came from (none: the node's
 * config file or a plugin) and the hash of its content, which the pull records keep.
 */
export interface TrackedAuth {
  auth: AuthConfig;
  source?: SecretCoordinates;
  hash: string;
}

/** sha256 of the credential's content: equal credentials in two secrets hash the same. */
export function hashAuth(auth: AuthConfig): string {
  const fields = [auth.username, auth.password, auth.auth, auth.identityToken, auth.registryToken];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

const track = (auth: AuthConfig, source?: SecretCoordinates): TrackedAuth => ({
  auth,
  hash: hashAuth(auth),
  ...(source ? { source } : {}),
});

/** upstream BasicDockerKeyring: credentials by registry key, most specific key first. */
export class BasicDockerKeyring implements DockerKeyring {
  private index: string[] = [];
  private readonly creds = new Map<string, TrackedAuth[]>();

  /** `source`: the pod secret `cfg` came from, kept with each credential for the pull records. */
  add(cfg: DockerConfig, source?: SecretCoordinates): this {
    for (const [loc, entry] of Object.entries(cfg)) {
      if (!entry || typeof entry !== 'object') continue;
      const key = indexKey(loc);
      if (!this.creds.has(key)) this.creds.set(key, []);
      this.creds.get(key)!.push(track(toAuth(entry), source));
    }
    this.index = [...this.creds.keys()].sort().reverse();
    return this;
  }

  lookupTracked(image: string): TrackedAuth[] {
    const out: TrackedAuth[] = [];
    for (const key of this.index) if (urlsMatchStr(key, image)) out.push(...this.creds.get(key)!);
    if (out.length === 0 && isDefaultRegistryMatch(image)) return [...(this.creds.get(DEFAULT_REGISTRY_HOST) ?? [])];
    return out;
  }

  lookupSync(image: string): AuthConfig[] {
    return this.lookupTracked(image).map((t) => t.auth);
  }

  lookup(image: string): Promise<AuthConfig[]> {
    return Promise.resolve(this.lookupSync(image));
  }
}

/** upstream UnionDockerKeyring: every keyring's credentials, in keyring order. */
export class UnionDockerKeyring implements DockerKeyring {
  constructor(private readonly keyrings: readonly DockerKeyring[]) {}

  async lookup(image: string): Promise<AuthConfig[]> {
    const out: AuthConfig[] = [];
    for (const k of this.keyrings) out.push(...(await k.lookup(image)));
    return out;
  }
}

function decodeSecretJson(value: string): unknown {
  try {
    if (typeof value !== 'string') return undefined; // a hostile apiserver's number or object
    return JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The docker config of one secret: `.dockerconfigjson` of a kubernetes.io/dockerconfigjson secret
 * or `.dockercfg` of a kubernetes.io/dockercfg secret (upstream checks type and key together).
 * Upstream fails the whole keyring on malformed JSON; the pull then fails, and so it does here.
 */
function secretConfig(secret: PullSecret): DockerConfig | undefined {
  const data = secret.data ?? {};
  const json = data['.dockerconfigjson'];
  const cfg = data['.dockercfg'];
  const name = secret.metadata?.name ?? '';
  if (secret.type === 'kubernetes.io/dockerconfigjson' && json) {
    const parsed = decodeSecretJson(json) as { auths?: DockerConfig } | undefined;
    if (!parsed || typeof parsed !== 'object') throw malformed(name, '.dockerconfigjson');
    return checked(parsed.auths ?? {}, name, '.dockerconfigjson');
  }
  if (secret.type === 'kubernetes.io/dockercfg' && cfg) {
    const parsed = decodeSecretJson(cfg) as DockerConfig | undefined;
    if (!parsed || typeof parsed !== 'object') throw malformed(name, '.dockercfg');
    return checked(parsed, name, '.dockercfg');
  }
  return undefined;
}

/** A pull secret whose docker config is not JSON: upstream MakeDockerKeyring's error. */
function malformed(name: string, key: string, why = 'is not valid JSON'): ContainerStartError {
  return new ContainerStartError('KTS_ERR_IMAGE_PULL', 'ErrImagePull', `image pull secret "${name}": ${key} ${why}`);
}

/** The config when its entries decode (upstream's JSON decode fails the keyring otherwise). */
function checked(cfg: DockerConfig, name: string, key: string): DockerConfig {
  const problem = dockerConfigProblem(cfg);
  if (problem) throw malformed(name, key, `is not a valid docker config: ${problem}`);
  return cfg;
}

/**
 * upstream secrets.MakeDockerKeyring: the pod's docker config secrets, then `node` (the node's
 * config file and the plugins); just `node` when no secret holds a docker config.
 */
export function makeDockerKeyring(secrets: readonly PullSecret[], node?: DockerKeyring): DockerKeyring {
  const fromSecrets = secretsKeyring(secrets);
  if (!fromSecrets) return node ?? new BasicDockerKeyring();
  return node ? new UnionDockerKeyring([fromSecrets, node]) : fromSecrets;
}

/** The pod's docker config secrets in one keyring, each credential tracked to its secret; none: undefined. */
function secretsKeyring(secrets: readonly PullSecret[]): BasicDockerKeyring | undefined {
  const keyring = new BasicDockerKeyring();
  let found = 0;
  for (const s of secrets) {
    const cfg = secretConfig(s);
    if (!cfg) continue;
    const m = s.metadata ?? {};
    keyring.add(cfg, { namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '' });
    found++;
  }
  return found > 0 ? keyring : undefined;
}

/**
 * makeDockerKeyring's lookup with each credential's source (upstream's keyring Lookup returning
 * TrackedAuthConfig): the pod secrets' credentials first, then the node's (no source).
 */
export async function lookupTracked(
  secrets: readonly PullSecret[],
  node: DockerKeyring | undefined,
  repo: string,
): Promise<TrackedAuth[]> {
  const fromSecrets = secretsKeyring(secrets)?.lookupTracked(repo) ?? [];
  const fromNode = node ? (await node.lookup(repo)).map((auth) => track(auth)) : [];
  return [...fromSecrets, ...fromNode];
}

/**
 * upstream parsers.ParseImageName's repoToPull: the normalized repository, without tag or digest
 * ("busybox" → "docker.io/library/busybox"). Keyrings and plugins are asked with this.
 */
export function repoToPull(image: string): string {
  const noDigest = image.split('@')[0]!;
  const slash = noDigest.indexOf('/');
  const first = slash < 0 ? '' : noDigest.slice(0, slash);
  const hasHost = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const named = hasHost ? noDigest : `docker.io/${slash < 0 ? 'library/' : ''}${noDigest}`;
  const lastSlash = named.lastIndexOf('/');
  const colon = named.lastIndexOf(':');
  return colon > lastSlash ? named.slice(0, colon) : named;
}
