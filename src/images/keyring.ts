/**
 * imagePullSecrets → CRI AuthConfig (upstream pkg/credentialprovider: the BasicDockerKeyring
 * built from a pod's pull secrets, and its Lookup). Secrets of type
 * kubernetes.io/dockerconfigjson (`.dockerconfigjson`: {"auths": {registry: entry}}) and
 * kubernetes.io/dockercfg (`.dockercfg`: {registry: entry}) are read; an entry has username and
 * password, or `auth` (base64 "user:password"), and optionally identitytoken / registrytoken.
 *
 * Matching, as upstream: the image's registry host (docker.io for a bare name) is compared with
 * each key's host (scheme and path stripped, "index.docker.io" ≡ "docker.io"; a key of the form
 * "*.example.com" matches one label); a key with a path must be a prefix of the image's path.
 * Longer (more specific) keys come first. The secrets themselves are the ImageManager's
 * `pullSecrets` input (upstream kubelet.getPullSecretsForPod). Not wired yet: SyncPod passes
 * none, so a pod's spec.imagePullSecrets are not read (issue 26 reads them from the secret
 * cache); standalone static pods have none anyway (static pods cannot reference API objects).
 */
import type { AuthConfig } from '../cri/types.js';

/** The parts of a core/v1 Secret the keyring reads (data values base64, as the API serves them). */
export interface PullSecret {
  metadata?: { name?: string; namespace?: string };
  type?: string;
  data?: Record<string, string>;
}

interface DockerEntry {
  username?: string;
  password?: string;
  auth?: string;
  identitytoken?: string;
  registrytoken?: string;
  email?: string;
}

interface KeyringEntry {
  host: string;
  path: string;
  key: string;
  auth: AuthConfig;
}

function normalizeHost(h: string): string {
  const host = h.toLowerCase();
  return host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host;
}

/** "https://host:port/path/" → host:port and path. */
function splitKey(key: string): { host: string; path: string } {
  const noScheme = key.replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '');
  const slash = noScheme.indexOf('/');
  const host = normalizeHost(slash < 0 ? noScheme : noScheme.slice(0, slash));
  let path = slash < 0 ? '' : noScheme.slice(slash + 1);
  if (host === 'docker.io' && path === 'v1') path = ''; // the legacy "https://index.docker.io/v1/" key
  return { host, path };
}

/** An image reference → its registry host and repository path (docker.io/library for bare names). */
export function parseImageRegistry(image: string): { host: string; path: string } {
  const noDigest = image.split('@')[0]!;
  const first = noDigest.split('/')[0]!;
  const hasHost = noDigest.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  const rest = hasHost ? noDigest.slice(first.length + 1) : noDigest;
  const repo = rest.replace(/:[^/]*$/, '');
  const host = hasHost ? normalizeHost(first) : 'docker.io';
  return { host, path: !hasHost && !repo.includes('/') ? `library/${repo}` : repo };
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === host) return true;
  if (!pattern.startsWith('*.')) return false;
  const [patHost, patPort] = pattern.slice(2).split(':');
  const [h, port] = host.split(':');
  const dot = h!.indexOf('.');
  return dot > 0 && h!.slice(dot + 1) === patHost && patPort === port;
}

function toAuth(entry: DockerEntry, serverAddress: string): AuthConfig {
  const auth: AuthConfig = { serverAddress };
  let { username, password } = entry;
  if ((!username || password === undefined) && entry.auth) {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i > 0) {
      username = decoded.slice(0, i);
      password = decoded.slice(i + 1);
    }
  }
  if (username) auth.username = username;
  if (password !== undefined) auth.password = password;
  if (entry.identitytoken) auth.identityToken = entry.identitytoken;
  if (entry.registrytoken) auth.registryToken = entry.registrytoken;
  return auth;
}

/** The registry → entry map of one secret, or undefined when it is not a docker config secret. */
function entriesOf(secret: PullSecret): Record<string, DockerEntry> | undefined {
  const data = secret.data ?? {};
  try {
    if (data['.dockerconfigjson'])
      return JSON.parse(Buffer.from(data['.dockerconfigjson'], 'base64').toString('utf8')).auths ?? {};
    if (data['.dockercfg']) return JSON.parse(Buffer.from(data['.dockercfg'], 'base64').toString('utf8'));
  } catch {
    return undefined; // malformed: contributes nothing, as upstream (which logs and skips it)
  }
  return undefined;
}

export class DockerKeyring {
  private readonly entries: KeyringEntry[] = [];

  constructor(secrets: readonly PullSecret[]) {
    for (const s of secrets) {
      for (const [key, entry] of Object.entries(entriesOf(s) ?? {})) {
        if (!entry || typeof entry !== 'object') continue;
        const { host, path } = splitKey(key);
        this.entries.push({ host, path, key, auth: toAuth(entry, key) });
      }
    }
    // Most specific first; a stable sort keeps secret order among equals (upstream: secret order).
    this.entries.sort((a, b) => `${b.host}/${b.path}`.length - `${a.host}/${a.path}`.length);
  }

  /** Every credential that applies to `image`, most specific first. */
  lookup(image: string): AuthConfig[] {
    const { host, path } = parseImageRegistry(image);
    return this.entries
      .filter((e) => hostMatches(e.host, host) && (e.path === '' || path === e.path || path.startsWith(`${e.path}/`)))
      .map((e) => e.auth);
  }
}
