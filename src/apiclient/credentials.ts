/**
 * Bearer credentials that follow rotation. @kubernetes/client-node resolves a kubeconfig user's
 * `tokenFile` once at load and runs an `exec` plugin only when asked, so a client built on its
 * headers keeps a stale token forever. Like client-go, the token file is re-read every minute
 * (cachingTokenSource) and after a 401; an exec plugin (client.authentication.k8s.io
 * ExecCredential) is run again once its status.expirationTimestamp has passed or after a 401.
 * Concurrent callers share one read or one plugin run.
 */
import { execFile } from 'node:child_process';
import { readFile, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { ApiError, ApiLimitError, errorMessage } from '../errors.js';
import { realClock, type Clock } from '../util/clock.js';
import { API_LIMITS, formatBytes } from './limits.js';

const readFileAsync = promisify(readFile);
const execFileAsync = promisify(execFile);

export interface Credentials {
  /** The Authorization header value for the next request, or undefined (TLS client cert only). */
  authorization(): Promise<string | undefined>;
  /** The server answered 401: read or run again before the next request. */
  invalidate(): void;
}

/** A kubeconfig `users[].user.exec` stanza (the fields we use). */
export interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  apiVersion?: string;
}

/** The token-bearing fields of the current kubeconfig user (paths made absolute). */
export interface UserCredentials {
  token?: string;
  tokenFile?: string;
  exec?: ExecConfig;
}

const credentialsError = (why: string, cause?: unknown) => new ApiError(401, 'CredentialsUnavailable', `credentials: ${why}`, { cause });

/** Caches one value until `staleAt`; one refresh at a time. */
class Cached {
  private value: string | undefined;
  private staleAt = 0;
  private inflight: Promise<string | undefined> | undefined;

  constructor(private readonly fetch: () => Promise<{ value: string; staleAt: number }>, private readonly clock: Clock) {}

  get(): Promise<string | undefined> {
    if (this.value !== undefined && this.clock.now() < this.staleAt) return Promise.resolve(this.value);
    this.inflight ??= this.fetch().then(({ value, staleAt }) => {
      this.value = value;
      this.staleAt = staleAt;
      return value;
    }).finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  invalidate(): void {
    this.staleAt = 0;
  }
}

function bearer(token: string): string | undefined {
  const t = token.trim();
  return t ? `Bearer ${t}` : undefined;
}

function tokenFileCredentials(path: string, clock: Clock): Credentials {
  const cache = new Cached(async () => {
    try {
      return { value: await readFileAsync(path, 'utf8'), staleAt: clock.now() + API_LIMITS.tokenFileRereadMs };
    } catch (err) {
      throw credentialsError(`token file ${path}: ${errorMessage(err)}`, err);
    }
  }, clock);
  return { authorization: async () => bearer((await cache.get()) ?? ''), invalidate: () => cache.invalidate() };
}

/** Runs the plugin and returns its token and when to run it again (never: until a 401). */
async function runExecPlugin(exec: ExecConfig, clock: Clock): Promise<{ value: string; staleAt: number }> {
  const apiVersion = exec.apiVersion ?? 'client.authentication.k8s.io/v1';
  const env = { ...process.env, ...Object.fromEntries((exec.env ?? []).map((e) => [e.name, e.value])), KUBERNETES_EXEC_INFO: JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false } }) };
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync(exec.command, exec.args ?? [], { env, timeout: API_LIMITS.execPluginTimeoutMs, maxBuffer: API_LIMITS.execPluginOutputBytes, encoding: 'utf8' }));
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
      throw new ApiLimitError(exec.command, `${formatBytes(API_LIMITS.execPluginOutputBytes)} (exec plugin output limit)`, 'exec credential plugin output', { cause: err });
    }
    throw credentialsError(`exec plugin ${exec.command}: ${errorMessage(err)}`, err);
  }
  let status: { token?: unknown; expirationTimestamp?: unknown } | undefined;
  try {
    status = (JSON.parse(stdout) as { status?: typeof status }).status;
  } catch (err) {
    throw credentialsError(`exec plugin ${exec.command} printed no ExecCredential JSON: ${errorMessage(err)}`, err);
  }
  if (typeof status?.token !== 'string' || !status.token) throw credentialsError(`exec plugin ${exec.command}: ExecCredential has no status.token`);
  const expires = typeof status.expirationTimestamp === 'string' ? Date.parse(status.expirationTimestamp) : NaN;
  // Wall-clock expiry mapped onto the (possibly fake) clock.
  return { value: status.token, staleAt: Number.isFinite(expires) ? clock.now() + (expires - Date.now()) : Infinity };
}

function execCredentials(exec: ExecConfig, clock: Clock): Credentials {
  const cache = new Cached(() => runExecPlugin(exec, clock), clock);
  return { authorization: async () => bearer((await cache.get()) ?? ''), invalidate: () => cache.invalidate() };
}

/** Credentials for the user's fields: exec, then tokenFile, then a static token; undefined when none. */
export function userCredentials(user: UserCredentials, clock: Clock = realClock): Credentials | undefined {
  if (user.exec) return execCredentials(user.exec, clock);
  if (user.tokenFile) return tokenFileCredentials(user.tokenFile, clock);
  if (user.token) {
    const header = bearer(user.token);
    return { authorization: () => Promise.resolve(header), invalidate: () => undefined };
  }
  return undefined;
}

type RawConfig = {
  'current-context'?: string;
  contexts?: { name?: string; context?: { user?: string } }[];
  users?: { name?: string; user?: { token?: string; tokenFile?: string; exec?: ExecConfig } }[];
};

/** The current user's token, tokenFile and exec of the kubeconfig at `path` (relative paths resolved as kubectl does). */
export function readUserCredentials(path: string): UserCredentials {
  const raw = (parseYaml(readFileSync(path, 'utf8')) ?? {}) as RawConfig;
  const userName = raw.contexts?.find((c) => c.name === raw['current-context'])?.context?.user;
  const user = raw.users?.find((u) => u.name === userName)?.user ?? {};
  const abs = (p: string) => (isAbsolute(p) ? p : join(dirname(path), p));
  return {
    token: user.token,
    tokenFile: user.tokenFile ? abs(user.tokenFile) : undefined,
    exec: user.exec?.command ? { ...user.exec, command: user.exec.command.includes('/') ? abs(user.exec.command) : user.exec.command } : undefined,
  };
}
