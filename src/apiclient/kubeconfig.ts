/**
 * Our own kubeconfig loader (clientcmd's v1 Config, the fields a node agent needs). We used
 * @kubernetes/client-node's KubeConfig for this, but importing that package costs a bare Node
 * process ~57 MiB of RSS (docs/perf-log.md, Where the memory goes) for a few dozen lines of YAML reading.
 *
 * Handled: current-context; clusters[].cluster server, certificate-authority(-data),
 * insecure-skip-tls-verify, tls-server-name, proxy-url; users[].user client-certificate(-data),
 * client-key(-data), token, tokenFile, username/password, exec (client.authentication.k8s.io
 * v1 and v1beta1). Relative paths are resolved against the kubeconfig's directory, as
 * clientcmd does. Only the one file named is read (no KUBECONFIG merging: the kubelet takes one
 * --kubeconfig). Every problem is a KubeconfigError (KTS_ERR_KUBECONFIG) naming the field.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { errorMessage, kubeletErrorClass } from '../errors.js';
import { parseYamlDocument } from '../util/yaml-lazy.js';

export class KubeconfigError extends kubeletErrorClass('KTS_ERR_KUBECONFIG') {}

/** A kubeconfig `users[].user.exec` stanza (the fields we use). */
export interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  apiVersion: string;
}

/** The exec credential API versions client-go still speaks (v1alpha1 was removed in 1.24). */
export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

export interface KubeconfigCluster {
  server: URL;
  /** PEM bundle from certificate-authority-data or the certificate-authority file. */
  ca?: Buffer;
  insecureSkipTlsVerify: boolean;
  /** SNI and the name the server certificate is checked against, when it differs from the URL's host. */
  tlsServerName?: string;
  proxyUrl?: URL;
}

export interface KubeconfigUser {
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  /** Absolute; re-read while running (credentials.ts). */
  tokenFile?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
}

export interface Kubeconfig {
  path: string;
  context: string;
  cluster: KubeconfigCluster;
  user: KubeconfigUser;
}

type Raw = Record<string, unknown>;

const isRecord = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads and checks the kubeconfig at `path`. */
export function loadKubeconfig(path: string): Kubeconfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`--kubeconfig ${path}: ${errorMessage(err)}`, { cause: err });
  }
  return parseKubeconfig(text, path);
}

/** Parses kubeconfig `text`; `path` names it in errors and anchors relative paths. */
export function parseKubeconfig(text: string, path: string): Kubeconfig {
  const fail = (why: string, cause?: unknown): never => {
    throw new KubeconfigError(`--kubeconfig ${path}: ${why}`, { cause });
  };
  let raw: unknown;
  try {
    raw = parseYamlDocument(text);
  } catch (err) {
    fail(`not YAML: ${errorMessage(err)}`, err);
  }
  if (!isRecord(raw)) return fail('not a kubeconfig (expected a mapping with clusters, users and contexts)');
  const reader = new FieldReader(path, fail);
  const contextName = raw['current-context'];
  if (typeof contextName !== 'string' || !contextName) return fail('current-context is not set');
  const context = reader.named(raw, 'contexts', contextName, 'context');
  const clusterName = reader.str(context, 'cluster', `contexts[${contextName}].context`);
  if (!clusterName) return fail(`context ${JSON.stringify(contextName)} names no cluster`);
  const userName = reader.str(context, 'user', `contexts[${contextName}].context`);
  const cluster = reader.cluster(
    reader.named(raw, 'clusters', clusterName, 'cluster'),
    `clusters[${clusterName}].cluster`,
  );
  // A context without a user is valid (anonymous, or TLS trust only).
  const user = userName ? reader.user(reader.named(raw, 'users', userName, 'user'), `users[${userName}].user`) : {};
  return { path, context: contextName, cluster, user };
}

/** Typed field access over the raw document; every error names the field. */
class FieldReader {
  private readonly dir: string;

  constructor(
    path: string,
    private readonly fail: (why: string, cause?: unknown) => never,
  ) {
    this.dir = dirname(path);
  }

  /** The `key` body of the entry of list `list` called `name`, e.g. clusters[name].cluster. */
  named(raw: Raw, list: string, name: string, key: string): Raw {
    const entries = raw[list] ?? [];
    if (!Array.isArray(entries)) return this.fail(`${list} is not a list`);
    const entry: unknown = entries.find((e) => isRecord(e) && e.name === name);
    if (!isRecord(entry)) return this.fail(`${list} has no entry named ${JSON.stringify(name)}`);
    const body = entry[key] ?? {};
    return isRecord(body) ? body : this.fail(`${list}[${name}].${key} is not a mapping`);
  }

  str(obj: Raw, key: string, where: string): string | undefined {
    const v = obj[key];
    if (v === undefined || v === null || v === '') return undefined;
    return typeof v === 'string' ? v : this.fail(`${where}.${key} is not a string`);
  }

  bool(obj: Raw, key: string, where: string): boolean {
    const v = obj[key];
    if (v === undefined || v === null) return false;
    return typeof v === 'boolean' ? v : this.fail(`${where}.${key} is not true or false`);
  }

  abs(p: string): string {
    return isAbsolute(p) ? p : join(this.dir, p);
  }

  /** The bytes of `<key>-data` (base64) or of the file `<key>` names; the data wins, as in clientcmd. */
  material(obj: Raw, key: string, where: string): Buffer | undefined {
    const data = this.str(obj, `${key}-data`, where);
    if (data !== undefined) {
      if (!/^[A-Za-z0-9+/=\s]+$/.test(data)) return this.fail(`${where}.${key}-data is not base64`);
      return Buffer.from(data, 'base64');
    }
    const file = this.str(obj, key, where);
    if (file === undefined) return undefined;
    try {
      return readFileSync(this.abs(file));
    } catch (err) {
      return this.fail(`${where}.${key} ${this.abs(file)}: ${errorMessage(err)}`, err);
    }
  }

  url(value: string, field: string, protocols: string[]): URL {
    let u: URL;
    try {
      u = new URL(value);
    } catch (err) {
      return this.fail(`${field} ${JSON.stringify(value)} is not a URL`, err);
    }
    if (!protocols.includes(u.protocol))
      this.fail(
        `${field} ${JSON.stringify(value)}: scheme must be ${protocols.map((p) => p.slice(0, -1)).join(' or ')}`,
      );
    return u;
  }

  cluster(c: Raw, where: string): KubeconfigCluster {
    const server = this.str(c, 'server', where);
    if (!server) return this.fail(`${where}.server is not set`);
    const proxy = this.str(c, 'proxy-url', where);
    return {
      server: this.url(server, `${where}.server`, ['https:', 'http:']),
      ca: this.material(c, 'certificate-authority', where),
      insecureSkipTlsVerify: this.bool(c, 'insecure-skip-tls-verify', where),
      tlsServerName: this.str(c, 'tls-server-name', where),
      // socks5 is what client-go also allows; we tunnel through HTTP CONNECT only.
      proxyUrl: proxy ? this.url(proxy, `${where}.proxy-url`, ['http:', 'https:']) : undefined,
    };
  }

  user(u: Raw, where: string): KubeconfigUser {
    const cert = this.material(u, 'client-certificate', where);
    const key = this.material(u, 'client-key', where);
    if (Boolean(cert) !== Boolean(key)) this.fail(`${where}: client-certificate and client-key must be given together`);
    const tokenFile = this.str(u, 'tokenFile', where);
    const username = this.str(u, 'username', where);
    const password = this.str(u, 'password', where);
    if (username === undefined && password !== undefined) this.fail(`${where}: password without username`);
    return {
      cert,
      key,
      username,
      password,
      token: this.str(u, 'token', where),
      tokenFile: tokenFile ? this.abs(tokenFile) : undefined,
      exec: u.exec === undefined || u.exec === null ? undefined : this.exec(u.exec, `${where}.exec`),
    };
  }

  exec(e: unknown, where: string): ExecConfig {
    if (!isRecord(e)) return this.fail(`${where} is not a mapping`);
    const command = this.str(e, 'command', where);
    if (!command) return this.fail(`${where}.command is not set`);
    const apiVersion = this.str(e, 'apiVersion', where);
    if (!apiVersion || !EXEC_API_VERSIONS.includes(apiVersion))
      return this.fail(
        `${where}.apiVersion ${JSON.stringify(apiVersion ?? '')} is not one of ${EXEC_API_VERSIONS.join(', ')}`,
      );
    // The kubelet never has a terminal: a plugin that insists on one cannot work here.
    if (e.interactiveMode === 'Always')
      this.fail(`${where}.interactiveMode Always needs a terminal; the kubelet has none`);
    const args = e.args ?? [];
    if (!Array.isArray(args) || !args.every((a) => typeof a === 'string'))
      return this.fail(`${where}.args is not a list of strings`);
    const env = e.env ?? [];
    if (
      !Array.isArray(env) ||
      !env.every((v) => isRecord(v) && typeof v.name === 'string' && typeof v.value === 'string')
    )
      return this.fail(`${where}.env is not a list of {name, value} strings`);
    // A bare name is looked up on PATH; a path with a slash is relative to the kubeconfig.
    return {
      command: command.includes('/') ? this.abs(command) : command,
      args,
      env: env as ExecConfig['env'],
      apiVersion,
    };
  }
}
