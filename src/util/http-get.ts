/**
 * The one HTTP GET client of lifecycle hooks (kuberuntime) and httpGet probes (prober), as upstream
 * builds and sends it
 * (pkg/probe/http/request.go NewRequestForHTTPGetAction, probe.ResolveContainerPort,
 * httpprobe.RedirectChecker(false), lifecycle/handlers.go runHTTPHandler):
 *
 *  - scheme from the action (lower-cased, default http), host from the action or the pod IP,
 *    port by number or by the name of one of the container's ports, path as written;
 *  - headers from the action; `User-Agent: kube-<purpose>/<version>` and `Accept: *\/*` unless the
 *    action sets them (an empty Accept removes it); a `Host` header becomes the request's host;
 *  - https does not verify the server's certificate (the kubelet cannot know the pod's CA);
 *  - redirects are followed only to the same host name, at most 10; a redirect elsewhere is not
 *    followed and that 3xx response is the result (`nonLocalRedirect`);
 *  - the body is read up to `maxBodyBytes` (10 KiB) and the rest discarded;
 *  - an https request answered in plain HTTP may be retried over http without Authorization
 *    (upstream's ConsistentHTTPGetHandlers fallback): `httpFallback`.
 *
 * Every request has a deadline (`timeoutMs`) and may be cancelled with `signal`.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Container } from '../api/types.js';
import { kubeletErrorClass } from '../errors.js';

/** upstream maxRespBodyLength. */
export const MAX_RESP_BODY_BYTES = 10 * 1024;
const MAX_REDIRECTS = 10;
/** The Kubernetes minor version we report in the User-Agent (kube-lifecycle/1.35). */
const USER_AGENT_VERSION = '1.35';

/** A GET to a pod that failed: an unknown port name, no connection, a timeout, a bad redirect. */
export class HttpGetError extends kubeletErrorClass('KTS_ERR_POD_ENDPOINT') {}

/** The subset of core/v1 HTTPGetAction the request needs. */
export interface HttpGetAction {
  host?: string;
  path?: string;
  port: number | string;
  scheme?: string;
  httpHeaders?: Array<{ name: string; value: string }>;
}

export interface HttpGetRequest {
  url: URL;
  /** Header name → values, in the order given. */
  headers: Array<[string, string]>;
  /** Host header override (from the action's headers), '' for the URL's host. */
  hostHeader: string;
}

export interface HttpGetOptions {
  timeoutMs: number;
  maxBodyBytes?: number;
  /** Follow redirects to other hosts too (probes' followNonLocalRedirects); default false. */
  followNonLocalRedirects?: boolean;
  /** Retry an https request over http when the server answered in plain HTTP. Default false. */
  httpFallback?: boolean;
  signal?: AbortSignal;
}

export interface HttpGetResult {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  /** At most maxBodyBytes of the body. */
  body: Buffer;
  /** The body was longer than maxBodyBytes. */
  truncated: boolean;
  /** The URL that gave this response (after redirects). */
  url: string;
  redirects: number;
  /** A redirect to another host was not followed: this is that redirect's response. */
  nonLocalRedirect: boolean;
  /** The https request was answered in plain HTTP and retried over http. */
  fellBackToHttp: boolean;
}

/**
 * upstream probe.ResolveContainerPort: a number is the port; a name is looked up among the
 * container's ports, and failing that parsed as a number. Must be 1..65535.
 */
export function resolveContainerPort(
  port: number | string | undefined,
  container: Pick<Container, 'name' | 'ports'>,
): number {
  let n: number;
  if (typeof port === 'number') {
    n = port;
  } else if (typeof port === 'string') {
    const named = container.ports?.find((p) => p.name === port);
    if (named) n = named.containerPort;
    else if (/^[+-]?\d+$/.test(port)) n = Number(port);
    else throw new HttpGetError(`port ${JSON.stringify(port)} not found in container ${container.name}`);
  } else {
    throw new HttpGetError(`intOrString had no kind: ${JSON.stringify(port)}`);
  }
  if (!Number.isInteger(n) || n <= 0 || n >= 65536) throw new HttpGetError(`invalid port number: ${n}`);
  return n;
}

function hostForUrl(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/** upstream NewRequestForHTTPGetAction. purpose: 'lifecycle' or 'probe' (User-Agent kube-<purpose>). */
export function newRequestForHTTPGetAction(
  action: HttpGetAction,
  container: Pick<Container, 'name' | 'ports'>,
  podIP: string,
  purpose: string,
): HttpGetRequest {
  const scheme = (action.scheme ?? '').toLowerCase() || 'http';
  if (scheme !== 'http' && scheme !== 'https')
    throw new HttpGetError(`unsupported scheme ${JSON.stringify(action.scheme)}`);
  const host = action.host || podIP;
  if (!host) throw new HttpGetError('no host: the action names none and the pod has no IP');
  const port = resolveContainerPort(action.port, container);
  const path = action.path ?? '';
  let url: URL;
  try {
    url = new URL(`${scheme}://${hostForUrl(host)}:${port}${path.startsWith('/') || path === '' ? path : `/${path}`}`);
  } catch (err) {
    throw new HttpGetError(`invalid URL for host ${host} port ${port} path ${JSON.stringify(path)}`, { cause: err });
  }
  const headers: Array<[string, string]> = (action.httpHeaders ?? []).map((h) => [h.name, h.value]);
  const has = (name: string) => headers.some(([k]) => k.toLowerCase() === name);
  if (!has('user-agent')) headers.push(['User-Agent', `kube-${purpose}/${USER_AGENT_VERSION}`]);
  if (!has('accept')) headers.push(['Accept', '*/*']);
  const accept = headers.filter(([k]) => k.toLowerCase() === 'accept');
  const kept =
    accept.length > 0 && accept.every(([, v]) => v === '')
      ? headers.filter(([k]) => k.toLowerCase() !== 'accept')
      : headers;
  const hostHeader = kept.find(([k]) => k.toLowerCase() === 'host')?.[1] ?? '';
  return { url, headers: kept.filter(([k]) => k.toLowerCase() !== 'host'), hostHeader };
}

/** The request's headers as node:http takes them (repeated names become arrays). */
function headerObject(req: HttpGetRequest, dropAuth: boolean): http.OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of req.headers) {
    if (dropAuth && k.toLowerCase() === 'authorization') continue;
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  if (req.hostHeader) out.Host = req.hostHeader;
  return out;
}

/** Node's error when a TLS client meets a plain-HTTP server (Go: "server gave HTTP response to HTTPS client"). */
function isPlainHttpAnswer(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  return e?.code === 'EPROTO' || /wrong version number|packet length too long/i.test(e?.message ?? '');
}

interface OneResponse {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
}

function getOnce(
  url: URL,
  headers: http.OutgoingHttpHeaders,
  opts: HttpGetOptions,
  deadline: number,
): Promise<OneResponse> {
  const maxBody = opts.maxBodyBytes ?? MAX_RESP_BODY_BYTES;
  return new Promise((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      reject(new HttpGetError(`GET ${url.href}: timeout`));
      return;
    }
    const isHttps = url.protocol === 'https:';
    const mod = isHttps ? https : http;
    const req = mod.request(url, {
      method: 'GET',
      headers,
      agent: false,
      ...(isHttps ? { rejectUnauthorized: false } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const timer = setTimeout(
      () => req.destroy(new HttpGetError(`GET ${url.href}: timeout after ${opts.timeoutMs} ms`)),
      remaining,
    );
    let settled = false;
    const done = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    req.on('error', (err) => done(() => reject(err)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      res.on('data', (chunk: Buffer) => {
        if (size >= maxBody) {
          truncated = true;
          // Enough read: stop the transfer rather than download the rest.
          res.destroy();
          finish();
          return;
        }
        const take = chunk.subarray(0, maxBody - size);
        if (take.length < chunk.length) truncated = true;
        chunks.push(take);
        size += take.length;
      });
      const finish = () =>
        done(() =>
          resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated }),
        );
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', (err) => done(() => reject(err)));
    });
    req.end();
  });
}

/** GET with upstream's redirect policy, bounded body and deadline. Transport failures throw HttpGetError. */
export async function httpGet(req: HttpGetRequest, opts: HttpGetOptions): Promise<HttpGetResult> {
  const deadline = Date.now() + opts.timeoutMs;
  let url = req.url;
  let redirects = 0;
  let fellBack = false;
  const firstHost = req.url.hostname;
  for (;;) {
    let res: OneResponse;
    try {
      res = await getOnce(url, headerObject(req, fellBack), opts, deadline);
    } catch (err) {
      if (opts.httpFallback && !fellBack && url.protocol === 'https:' && isPlainHttpAnswer(err)) {
        fellBack = true;
        url = new URL(url.href);
        url.protocol = 'http:';
        continue;
      }
      if (err instanceof HttpGetError) throw err;
      throw new HttpGetError(`GET ${url.href}: ${(err as Error).message}`, { cause: err });
    }
    const location = res.headers.location;
    const isRedirect =
      [301, 302, 303, 307, 308].includes(res.statusCode) && typeof location === 'string' && location !== '';
    const result = (nonLocalRedirect: boolean): HttpGetResult => ({
      statusCode: res.statusCode,
      headers: res.headers,
      body: res.body,
      truncated: res.truncated,
      url: url.href,
      redirects,
      nonLocalRedirect,
      fellBackToHttp: fellBack,
    });
    if (!isRedirect) return result(false);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      return result(false);
    }
    if (!opts.followNonLocalRedirects && next.hostname !== firstHost) return result(true);
    if (redirects >= MAX_REDIRECTS)
      throw new HttpGetError(`GET ${req.url.href}: stopped after ${MAX_REDIRECTS} redirects`);
    redirects++;
    url = next;
  }
}
