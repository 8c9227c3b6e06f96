/**
 * Credentials that follow rotation, from the kubeconfig user (kubeconfig.ts). A client built on
 * static headers keeps a stale token forever. Like client-go, the token file is re-read every minute
 * (cachingTokenSource) and after a 401; an exec plugin (client.authentication.k8s.io
 * ExecCredential) is run again once its status.expirationTimestamp has passed or after a 401.
 * Concurrent callers share one read or one plugin run.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs';
import { promisify } from 'node:util';
import { ApiError, ApiLimitError, errorMessage } from '../errors.js';
import { realClock, type Clock } from '../util/clock.js';
import { API_LIMITS, formatBytes } from './limits.js';
import type { ExecConfig, KubeconfigUser } from './kubeconfig.js';

const readFileAsync = promisify(readFile);
const execFileAsync = promisify(execFile);

export interface Credentials {
  /** The Authorization header value for the next request, or undefined (TLS client cert only). */
  authorization(): Promise<string | undefined>;
  /** The server answered 401: read or run again before the next request. */
  invalidate(): void;
}

/** The credential fields of the current kubeconfig user (paths made absolute). */
export type UserCredentials = Pick<KubeconfigUser, 'token' | 'tokenFile' | 'exec' | 'username' | 'password'>;

const credentialsError = (why: string, cause?: unknown) =>
  new ApiError(401, 'CredentialsUnavailable', `credentials: ${why}`, { cause });

/** Caches one value until `staleAt`; one refresh at a time. */
class Cached {
  private value: string | undefined;
  private staleAt = 0;
  private inflight: Promise<string | undefined> | undefined;

  constructor(
    private readonly fetch: () => Promise<{ value: string; staleAt: number }>,
    private readonly clock: Clock,
  ) {}

  get(): Promise<string | undefined> {
    if (this.value !== undefined && this.clock.now() < this.staleAt) return Promise.resolve(this.value);
    this.inflight ??= this.fetch()
      .then(({ value, staleAt }) => {
        this.value = value;
        this.staleAt = staleAt;
        return value;
      })
      .finally(() => (this.inflight = undefined));
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
  const { apiVersion } = exec;
  const env = {
    ...process.env,
    ...Object.fromEntries((exec.env ?? []).map((e) => [e.name, e.value])),
    KUBERNETES_EXEC_INFO: JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false } }),
  };
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync(exec.command, exec.args ?? [], {
      env,
      timeout: API_LIMITS.execPluginTimeoutMs,
      maxBuffer: API_LIMITS.execPluginOutputBytes,
      encoding: 'utf8',
    }));
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
      throw new ApiLimitError(
        exec.command,
        `${formatBytes(API_LIMITS.execPluginOutputBytes)} (exec plugin output limit)`,
        'exec credential plugin output',
        { cause: err },
      );
    }
    throw credentialsError(`exec plugin ${exec.command}: ${errorMessage(err)}`, err);
  }
  let reply: { apiVersion?: unknown; status?: { token?: unknown; expirationTimestamp?: unknown } };
  try {
    reply = JSON.parse(stdout) as typeof reply;
  } catch (err) {
    throw credentialsError(`exec plugin ${exec.command} printed no ExecCredential JSON: ${errorMessage(err)}`, err);
  }
  // As client-go: a plugin answering in another version than configured is misconfigured.
  if (reply.apiVersion !== apiVersion)
    throw credentialsError(
      `exec plugin ${exec.command} answered apiVersion ${JSON.stringify(reply.apiVersion)}, configured ${apiVersion}`,
    );
  const status = reply.status;
  if (typeof status?.token !== 'string' || !status.token)
    throw credentialsError(`exec plugin ${exec.command}: ExecCredential has no status.token`);
  const expires = typeof status.expirationTimestamp === 'string' ? Date.parse(status.expirationTimestamp) : NaN;
  // Wall-clock expiry mapped onto the (possibly fake) clock.
  return { value: status.token, staleAt: Number.isFinite(expires) ? clock.now() + (expires - Date.now()) : Infinity };
}

function execCredentials(exec: ExecConfig, clock: Clock): Credentials {
  const cache = new Cached(() => runExecPlugin(exec, clock), clock);
  return { authorization: async () => bearer((await cache.get()) ?? ''), invalidate: () => cache.invalidate() };
}

const staticCredentials = (header: string | undefined): Credentials => ({
  authorization: () => Promise.resolve(header),
  invalidate: () => undefined,
});

/** Credentials for the user's fields: exec, then tokenFile, then a static token, then basic auth; undefined when none. */
export function userCredentials(user: UserCredentials, clock: Clock = realClock): Credentials | undefined {
  if (user.exec) return execCredentials(user.exec, clock);
  if (user.tokenFile) return tokenFileCredentials(user.tokenFile, clock);
  if (user.token) return staticCredentials(bearer(user.token));
  if (user.username !== undefined)
    return staticCredentials(`Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`);
  return undefined;
}
