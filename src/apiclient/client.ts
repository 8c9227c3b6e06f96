/**
 * A thin JSON client over node:https. @kubernetes/client-node loads the kubeconfig and turns it
 * into TLS options and credentials (applyToHTTPSOptions: CA, client certificate and key, bearer
 * token); the requests themselves are ours, because the kubelet needs what its generated
 * clients make awkward: patch content types per call, a watch we can restart from a
 * resourceVersion with an idle timeout, a client-side QPS/burst limiter, and a connection pool
 * we can drop when the server goes away (a pooled connection that silently died kept upstream
 * kubelets from reporting for minutes: kubernetes/kubernetes#87615).
 */
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiError, KubeletError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { metrics } from '../metrics/index.js';
import { TokenBucket } from './rate-limiter.js';
import type { ApiClient, ApiClientOptions, ApiClients, ApiRequest, WatchEvent } from './types.js';

interface Connection {
  base: URL;
  /** ca/cert/key/headers as client-node computed them from the kubeconfig. */
  tls: RequestOptions;
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

class HttpsApiClient implements ApiClient {
  private agent: Agent;
  /** Watches hold a connection each for minutes: their own pool, so requests never queue behind them. */
  private watchAgent: Agent;

  constructor(private readonly conn: Connection, readonly name: string, private readonly timeoutMs: number, private readonly limiter: TokenBucket | undefined, private readonly idleMs: number, private readonly userAgent: string) {
    this.agent = this.newAgent(32);
    this.watchAgent = this.newAgent(Infinity);
  }

  private newAgent(maxSockets: number): Agent {
    return new Agent({ keepAlive: true, maxSockets, ca: this.conn.tls.ca, cert: this.conn.tls.cert, key: this.conn.tls.key, rejectUnauthorized: this.conn.tls.rejectUnauthorized });
  }

  /** Running watches are left alone: they fail (and are restarted) on their own. */
  resetConnections(): void {
    this.agent.destroy();
    this.agent = this.newAgent(32);
  }

  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  async request<T = unknown>(r: ApiRequest): Promise<T> {
    await this.limiter?.acquire();
    const body = r.body === undefined ? undefined : JSON.stringify(r.body);
    const timeoutMs = r.timeoutMs ?? this.timeoutMs;
    const path = `${r.path}${queryString(r.query)}`;
    const host = this.conn.base.host;
    const started = performance.now();
    let code = '<error>';
    try {
      const { status, text } = await this.roundTrip(r.method, path, body, body === undefined ? undefined : r.contentType ?? 'application/json', timeoutMs);
      code = String(status);
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      if (status >= 200 && status < 300) return parsed as T;
      const st = (parsed ?? {}) as { reason?: string; message?: string };
      throw new ApiError(status, st.reason ?? 'Unknown', `${r.method} ${r.path}: ${status} ${st.message ?? text.slice(0, 200)}`);
    } catch (err) {
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

  private roundTrip(method: string, path: string, body: string | undefined, contentType: string | undefined, timeoutMs: number): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const url = new URL(path, this.conn.base);
      const headers: Record<string, string> = { ...(this.conn.tls.headers as Record<string, string> | undefined), accept: 'application/json', 'user-agent': this.userAgent };
      if (contentType) headers['content-type'] = contentType;
      // Explicit length: node sends a DELETE body without one otherwise, which servers reject.
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const req = httpsRequest(url, { method, agent: this.agent, headers, timeout: timeoutMs });
      const connectionFailed = (why: string, cause?: unknown) => new ApiError(0, 'ConnectionFailed', `${method} ${url.pathname}: ${why}`, { cause });
      const fail = (err: Error) => reject(err instanceof ApiError ? err : connectionFailed(errorMessage(err), err));
      req.on('timeout', () => req.destroy(connectionFailed(`no answer within ${timeoutMs} ms`)));
      req.on('error', fail);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', fail);
      });
      req.end(body);
    });
  }

  watch<T>(path: string, query: ApiRequest['query'], onEvent: (e: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return resolve();
      const url = new URL(`${path}${queryString({ ...query, watch: 'true' })}`, this.conn.base);
      const headers: Record<string, string> = { ...(this.conn.tls.headers as Record<string, string> | undefined), accept: 'application/json', 'user-agent': this.userAgent };
      const req = httpsRequest(url, { method: 'GET', agent: this.watchAgent, headers, timeout: this.idleMs });
      const onAbort = () => req.destroy();
      signal.addEventListener('abort', onAbort, { once: true });
      let handlerError: unknown;
      let settled = false;
      const connectionFailed = (why: string, cause?: unknown) => new ApiError(0, 'ConnectionFailed', `watch ${path}: ${why}`, { cause });
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (handlerError !== undefined) reject(handlerError);
        else if (err && !signal.aborted) reject(err instanceof ApiError ? err : connectionFailed(errorMessage(err), err));
        else resolve();
      };
      // The socket timeout doubles as the idle timeout: any byte (an event or a bookmark) resets it.
      req.on('timeout', () => req.destroy(connectionFailed(`watch idle for ${this.idleMs} ms`)));
      req.on('error', (err) => finish(err));
      req.on('close', () => finish(connectionFailed('watch connection closed')));
      req.on('response', (res) => {
        res.setEncoding('utf8');
        let buf = '';
        if (res.statusCode !== 200) {
          res.on('data', (c: string) => (buf += c));
          res.on('end', () => finish(new ApiError(res.statusCode ?? 0, 'WatchFailed', `watch ${path}: ${res.statusCode} ${buf.slice(0, 200)}`)));
          return;
        }
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            let event: WatchEvent<T>;
            try {
              event = JSON.parse(line) as WatchEvent<T>;
            } catch (err) {
              req.destroy(connectionFailed(`bad watch event: ${errorMessage(err)}`, err));
              return;
            }
            try {
              onEvent(event);
            } catch (err) {
              // The handler's own error (e.g. 410 Gone) reaches the caller as it was thrown.
              handlerError = err;
              req.destroy();
              return;
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

function kubeconfigError(path: string, why: string, cause?: unknown): KubeletError {
  return new KubeletError('KTS_ERR_KUBECONFIG', `--kubeconfig ${path}: ${why}`, { cause });
}

/** Loads a kubeconfig and the server of its current cluster; every failure is KTS_ERR_KUBECONFIG. */
export function loadKubeconfig(path: string): { kc: KubeConfig; server: URL } {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(path);
  } catch (err) {
    throw kubeconfigError(path, errorMessage(err), err);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) throw kubeconfigError(path, 'no current cluster with a server (current-context is missing or names no cluster)');
  try {
    return { kc, server: new URL(cluster.server) };
  } catch (err) {
    throw kubeconfigError(path, `cluster server ${JSON.stringify(cluster.server)}: ${errorMessage(err)}`, err);
  }
}

/** Loads `kubeconfigPath` and builds the main and heartbeat clients. */
export async function createApiClients(kubeconfigPath: string, opts: ApiClientOptions = {}): Promise<ApiClients> {
  const { kc, server } = loadKubeconfig(kubeconfigPath);
  const tls: RequestOptions = {};
  try {
    await kc.applyToHTTPSOptions(tls);
  } catch (err) {
    throw kubeconfigError(kubeconfigPath, errorMessage(err), err);
  }
  const conn: Connection = { base: server, tls };
  const ua = opts.userAgent ?? 'kubelet-ts';
  const idle = opts.watchIdleTimeoutMs ?? 300_000;
  const main = new HttpsApiClient(conn, 'main', opts.timeoutMs ?? 30_000, new TokenBucket(opts.qps ?? 50, opts.burst ?? 100), idle, ua);
  const heartbeat = new HttpsApiClient(conn, 'heartbeat', opts.heartbeatTimeoutMs ?? 10_000, undefined, idle, ua);
  log('apiclient').info({ server: conn.base.origin, qps: opts.qps ?? 50, burst: opts.burst ?? 100 }, 'API server clients ready');
  return { main, heartbeat, server: conn.base.origin, close: () => { main.close(); heartbeat.close(); } };
}
