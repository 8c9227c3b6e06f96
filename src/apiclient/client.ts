/**
 * A thin JSON client over node:https. Our kubeconfig loader (kubeconfig.ts, transport.ts) turns
 * the kubeconfig into TLS options and credentials; the requests are ours too, because the
 * kubelet needs what generated clients make awkward
 * clients make awkward: patch content types per call, a watch we can restart from a
 * resourceVersion with an idle timeout, a client-side QPS/burst limiter, and a connection pool
 * we can drop when the server goes away (a pooled connection that silently died kept upstream
 * kubelets from reporting for minutes: kubernetes/kubernetes#87615).
 */
import { request as httpsRequest, type Agent } from 'node:https';
import type { ClientRequest } from 'node:http';
import { ApiError, ApiLimitError, KubeletError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { metrics } from '../metrics/index.js';
import { TokenBucket } from './rate-limiter.js';
import { API_LIMITS, formatBytes } from './limits.js';
import { readCappedBody } from './body.js';
import { LineSplitter } from './line-splitter.js';
import { transportOf, type Transport } from './transport.js';
import type { ApiClient, ApiClientOptions, ApiClients, ApiRequest, WatchEvent } from './types.js';

interface Connection extends Transport {
  /** Watches of every client of this apiserver share one capped pool (API_LIMITS.watchConnections). */
  watchAgent: Agent;
}

function queryString(q: ApiRequest['query']): string {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Network-level failures (as opposed to an HTTP answer): the pool is suspect, reconnect. */
const isConnectionError = (err: unknown) => err instanceof ApiError && err.statusCode === 0;

/** Arms the whole-request deadline of `req` (destroyed with `error()`); returns the disarm function. */
function armDeadline(req: ClientRequest, ms: number, error: () => Error): () => void {
  const t = setTimeout(() => req.destroy(error()), ms);
  return () => clearTimeout(t);
}

/** The error of a deadline passed while a body was still arriving (a drip, not a dead server). */
const deadlineError = (path: string, ms: number, what: string) =>
  new ApiLimitError(path, `${ms / 1000} s (${what})`, 'response');

/** What tells the main client from the heartbeat client. */
interface ClientSettings {
  name: string;
  /** A request's deadline unless it sets its own. */
  timeoutMs: number;
  /** Client-side QPS limit; none for the heartbeat. */
  limiter: TokenBucket | undefined;
  /** A watch with no byte for this long is dead. */
  idleMs: number;
  userAgent: string;
  /** Connections of the request pool. */
  maxSockets: number;
}

/** One watch: ApiClient.watch's arguments and the request headers. */
interface WatchCall<T> {
  headers: Record<string, string>;
  path: string;
  query: ApiRequest['query'];
  onEvent: (e: WatchEvent<T>) => void;
  signal: AbortSignal;
}

class HttpsApiClient implements ApiClient {
  /** Requests only: watches hold a connection each for minutes, in the shared watch pool. */
  private agent: Agent;
  readonly name: string;

  constructor(
    private readonly conn: Connection,
    private readonly settings: ClientSettings,
  ) {
    this.name = settings.name;
    this.agent = conn.newAgent(settings.maxSockets);
  }

  /** Running watches are left alone: they fail (and are restarted) on their own. */
  resetConnections(): void {
    this.agent.destroy();
    this.agent = this.conn.newAgent(this.settings.maxSockets);
  }

  close(): void {
    this.agent.destroy();
    this.conn.watchAgent.destroy();
  }

  private async headers(extra: Record<string, string> = {}): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.settings.userAgent,
      ...extra,
    };
    const auth = await this.conn.credentials?.authorization();
    if (auth) headers.authorization = auth;
    return headers;
  }

  async request<T = unknown>(r: ApiRequest): Promise<T> {
    try {
      return await this.requestOnce<T>(r);
    } catch (err) {
      // A rotated credential: read or run it again and retry once (the server did nothing on a 401).
      if (!(err instanceof ApiError && err.statusCode === 401 && this.conn.credentials)) throw err;
      this.conn.credentials.invalidate();
      return this.requestOnce<T>(r);
    }
  }

  private async requestOnce<T>(r: ApiRequest): Promise<T> {
    await this.settings.limiter?.acquire();
    const body = r.body === undefined ? undefined : JSON.stringify(r.body);
    const path = `${r.path}${queryString(r.query)}`;
    const host = this.conn.base.host;
    const started = performance.now();
    let code = '<error>';
    try {
      const { status, text } = await this.roundTrip(r, path, body);
      code = String(status);
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      if (status >= 200 && status < 300) return parsed as T;
      const st = (parsed ?? {}) as { reason?: string; message?: string };
      throw new ApiError(
        status,
        st.reason ?? 'Unknown',
        `${r.method} ${r.path}: ${status} ${st.message ?? text.slice(0, 200)}`,
      );
    } catch (err) {
      if (err instanceof ApiLimitError) throw err;
      if (err instanceof ApiError) {
        if (isConnectionError(err)) this.resetConnections();
        throw err;
      }
      throw new ApiError(0, 'BadResponse', `${r.method} ${r.path}: ${errorMessage(err)}`, { cause: err });
    } finally {
      metrics.restClientRequests.inc({ code, method: r.method, host });
      metrics.restClientRequestDuration.observe({ verb: r.method, host }, (performance.now() - started) / 1000);
    }
  }

  private async roundTrip(
    r: ApiRequest,
    path: string,
    body: string | undefined,
  ): Promise<{ status: number; text: string }> {
    const url = new URL(path, this.conn.base);
    const extra: Record<string, string> = {};
    if (body !== undefined) {
      extra['content-type'] = r.contentType ?? 'application/json';
      // Explicit length: node sends a DELETE body without one otherwise, which servers reject.
      extra['content-length'] = String(Buffer.byteLength(body));
    }
    const headers = await this.headers(extra);
    const deadlineMs = r.timeoutMs ?? this.settings.timeoutMs;
    const maxBytes = r.maxBodyBytes ?? API_LIMITS.objectBytes;
    const limitName = r.maxBodyBytes === undefined ? 'object size limit' : 'response body limit';
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, { method: r.method, agent: this.agent, headers, timeout: deadlineMs });
      const connectionFailed = (why: string, cause?: unknown) =>
        new ApiError(0, 'ConnectionFailed', `${r.method} ${url.pathname}: ${why}`, { cause });
      let answering = false;
      // No answer at all is a dead connection (the pool is reset); a body still dripping in is a limit.
      const disarm = armDeadline(req, deadlineMs, () =>
        answering
          ? deadlineError(url.pathname, deadlineMs, 'request deadline')
          : connectionFailed(`no answer within ${deadlineMs} ms`),
      );
      const fail = (err: Error) => {
        disarm();
        reject(err instanceof KubeletError ? err : connectionFailed(errorMessage(err), err));
      };
      req.on('timeout', () => req.destroy(connectionFailed(`no answer within ${deadlineMs} ms`)));
      req.on('error', fail);
      req.on('response', (res) => {
        answering = true;
        readCappedBody(req, res, { path: url.pathname, maxBytes, name: limitName }).then((buf) => {
          disarm();
          r.onBodyBytes?.(buf.length);
          resolve({ status: res.statusCode ?? 0, text: buf.toString('utf8') });
        }, fail);
      });
      req.end(body);
    });
  }

  watch<T>(
    path: string,
    query: ApiRequest['query'],
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return this.headers()
      .then((headers) => this.watchWith<T>({ headers, path, query, onEvent, signal }))
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.statusCode === 401) this.conn.credentials?.invalidate();
        throw err;
      });
  }

  private watchWith<T>({ headers, path, query, onEvent, signal }: WatchCall<T>): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return resolve();
      const url = new URL(`${path}${queryString({ ...query, watch: 'true' })}`, this.conn.base);
      const req = httpsRequest(url, {
        method: 'GET',
        agent: this.conn.watchAgent,
        headers,
        timeout: this.settings.idleMs,
      });
      const onAbort = () => req.destroy();
      signal.addEventListener('abort', onAbort, { once: true });
      // A server that keeps dripping bytes past its own timeoutSeconds is cut by us.
      const serverTimeout = Number(query?.timeoutSeconds ?? 0);
      const disarm =
        serverTimeout > 0
          ? armDeadline(req, serverTimeout * 1000 + API_LIMITS.watchDeadlineSlackMs, () =>
              deadlineError(path, serverTimeout * 1000 + API_LIMITS.watchDeadlineSlackMs, 'watch deadline'),
            )
          : () => undefined;
      let handlerError: unknown;
      let settled = false;
      const connectionFailed = (why: string, cause?: unknown) =>
        new ApiError(0, 'ConnectionFailed', `watch ${path}: ${why}`, { cause });
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        disarm();
        signal.removeEventListener('abort', onAbort);
        if (handlerError !== undefined) reject(handlerError);
        else if (err && !signal.aborted)
          reject(err instanceof KubeletError ? err : connectionFailed(errorMessage(err), err));
        else resolve();
      };
      const stop = (err: unknown) => {
        handlerError = err;
        req.destroy();
      };
      // The socket timeout doubles as the idle timeout: any byte (an event or a bookmark) resets it.
      req.on('timeout', () => req.destroy(connectionFailed(`watch idle for ${this.settings.idleMs} ms`)));
      req.on('error', (err) => finish(err));
      req.on('close', () => finish(connectionFailed('watch connection closed')));
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          readCappedBody(req, res, { path, maxBytes: API_LIMITS.objectBytes, name: 'object size limit' }).then(
            (buf) =>
              finish(
                new ApiError(
                  res.statusCode ?? 0,
                  res.statusCode === 401 ? 'Unauthorized' : 'WatchFailed',
                  `watch ${path}: ${res.statusCode} ${buf.toString('utf8', 0, 200)}`,
                ),
              ),
            (err: Error) => finish(err),
          );
          return;
        }
        const lines = new LineSplitter(API_LIMITS.watchLineBytes);
        res.on('data', (chunk: Buffer) => {
          if (handlerError !== undefined) return;
          const complete = lines.push(chunk);
          if (!complete)
            return stop(
              new ApiLimitError(
                path,
                `${formatBytes(API_LIMITS.watchLineBytes)} (watch event line limit)`,
                'watch event',
              ),
            );
          for (const line of complete) {
            const event = parseWatchLine<T>(line, path);
            if (event instanceof ApiError) return stop(event);
            if (event === undefined) continue;
            try {
              onEvent(event);
            } catch (err) {
              // The handler's own error (e.g. 410 Gone) reaches the caller as it was thrown.
              return stop(err);
            }
          }
        });
        res.on('end', () => finish());
        res.on('error', (err) => finish(err));
        res.on('aborted', () => finish(connectionFailed('watch connection aborted')));
      });
      req.end();
    });
  }
}

/** One watch line: the event, undefined for a blank line, or an ApiError for garbage. */
function parseWatchLine<T>(line: Buffer, path: string): WatchEvent<T> | ApiError | undefined {
  const text = line.toString('utf8').trim();
  if (!text) return undefined;
  try {
    const e = JSON.parse(text) as WatchEvent<T>;
    if (
      typeof e === 'object' &&
      e !== null &&
      typeof e.type === 'string' &&
      typeof e.object === 'object' &&
      e.object !== null
    )
      return e;
  } catch (err) {
    return new ApiError(
      0,
      'BadWatchEvent',
      `watch ${path}: event is not JSON (${errorMessage(err)}): ${JSON.stringify(text.slice(0, 80))}`,
      { cause: err },
    );
  }
  return new ApiError(
    0,
    'BadWatchEvent',
    `watch ${path}: event has no type and object: ${JSON.stringify(text.slice(0, 80))}`,
  );
}

/** Loads `kubeconfigPath` and builds the main and heartbeat clients. */
export async function createApiClients(kubeconfigPath: string, opts: ApiClientOptions = {}): Promise<ApiClients> {
  const transport = transportOf(kubeconfigPath);
  const conn: Connection = { ...transport, watchAgent: transport.newAgent(API_LIMITS.watchConnections) };
  const ua = opts.userAgent ?? 'kubelet-ts';
  const idle = opts.watchIdleTimeoutMs ?? 300_000;
  const main = new HttpsApiClient(conn, {
    name: 'main',
    timeoutMs: opts.timeoutMs ?? API_LIMITS.requestDeadlineMs,
    limiter: new TokenBucket(opts.qps ?? 50, opts.burst ?? 100),
    idleMs: idle,
    userAgent: ua,
    maxSockets: API_LIMITS.requestConnections,
  });
  const heartbeat = new HttpsApiClient(conn, {
    name: 'heartbeat',
    timeoutMs: opts.heartbeatTimeoutMs ?? 10_000,
    limiter: undefined,
    idleMs: idle,
    userAgent: ua,
    maxSockets: API_LIMITS.heartbeatConnections,
  });
  log('apiclient').info(
    {
      server: conn.base.origin,
      qps: opts.qps ?? 50,
      burst: opts.burst ?? 100,
      maxConnections: API_LIMITS.maxConnections,
    },
    'API server clients ready',
  );
  return {
    main,
    heartbeat,
    server: conn.base.origin,
    close: () => {
      main.close();
      heartbeat.close();
    },
    // A rotated client certificate (the kubeconfig names the store's current link): new TLS for
    // every new connection, and every open one dropped, watches too, as upstream closes all
    // connections on rotation so nothing keeps talking with the old identity.
    async reloadTls() {
      const fresh = transportOf(kubeconfigPath);
      conn.tls = fresh.tls;
      conn.newAgent = fresh.newAgent; // the agent factory holds the TLS settings
      const oldWatchAgent = conn.watchAgent;
      conn.watchAgent = fresh.newAgent(API_LIMITS.watchConnections);
      main.resetConnections();
      heartbeat.resetConnections();
      oldWatchAgent.destroy();
    },
  };
}
