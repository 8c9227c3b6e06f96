/**
 * Forwards an authorized upgrade request (SPDY/3.1 or WebSocket) to the runtime's streaming
 * server URL and splices the two connections, as upstream's UpgradeAwareHandler: the kubelet
 * does not speak the stream protocols itself, so both kubectl's SPDY and the v4/v5 WebSocket
 * channel protocols work as the runtime supports them. Streams idle for
 * streamingConnectionIdleTimeout are closed; the number of live streams is bounded.
 */
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { KubeletError } from '../errors.js';
import { log } from '../util/log.js';
import { sendText } from './respond.js';

/** Request headers the stream protocols need; credentials are never forwarded to the runtime. */
/** How long the runtime's streaming server has to answer the upgrade request. */
const UPSTREAM_TIMEOUT_MS = 30_000;
const FORWARDED = [
  'connection',
  'upgrade',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
  'x-stream-protocol-version',
  'user-agent',
  'origin',
];

export class StreamLimiter {
  active = 0;
  constructor(readonly max: number) {}
  tryAcquire(): (() => void) | undefined {
    if (this.active >= this.max) return undefined;
    this.active++;
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this.active--;
      }
    };
  }
}

export interface ProxyOptions {
  idleTimeoutMs: number;
  limiter: StreamLimiter;
}

function responseHead(res: IncomingMessage): string {
  const lines = [`HTTP/1.1 ${res.statusCode} ${res.statusMessage}`];
  for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function splice(a: Duplex, b: Duplex, idleTimeoutMs: number, release: () => void): void {
  const closeBoth = () => {
    a.destroy();
    b.destroy();
    release();
  };
  for (const s of [a, b]) {
    s.on('error', closeBoth);
    s.on('close', closeBoth);
    const t = s as Duplex & { setTimeout?: (ms: number, cb: () => void) => void };
    if (idleTimeoutMs > 0 && typeof t.setTimeout === 'function') t.setTimeout(idleTimeoutMs, closeBoth);
  }
  a.pipe(b);
  b.pipe(a);
}

/** An upgrade request as the server received it: the request, its response, the raw socket. */
export interface IncomingUpgrade {
  req: IncomingMessage;
  res: ServerResponse;
  client: { socket: Duplex; head: Buffer };
}

/**
 * Sends req (already authorized) to `target`, adding `query` when the target has none
 * (port-forward ports travel there). A non-upgrade answer is relayed as it is.
 */
export function proxyUpgrade(
  { req, res, client }: IncomingUpgrade,
  target: string,
  query: string,
  opts: ProxyOptions,
): void {
  const release = opts.limiter.tryAcquire();
  if (!release) {
    sendText(res, 429, `too many concurrent streams (at most ${opts.limiter.max})`, { 'Retry-After': '1' });
    return;
  }
  const url = new URL(target);
  if (!url.search && query) url.search = query;
  const headers: Record<string, string | string[]> = { host: url.host };
  for (const h of FORWARDED) {
    const v = req.headers[h];
    if (v !== undefined) headers[h] = v;
  }
  const upstream = request({
    host: url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    method: req.method,
    headers,
    timeout: UPSTREAM_TIMEOUT_MS,
  });
  upstream.on('upgrade', (ures: IncomingMessage, usocket: Duplex, uhead: Buffer) => {
    upstream.setTimeout(0);
    res.detachSocket(client.socket as never);
    client.socket.write(responseHead(ures));
    if (uhead.length > 0) client.socket.write(uhead);
    if (client.head.length > 0) usocket.write(client.head);
    splice(client.socket, usocket, opts.idleTimeoutMs, release);
  });
  upstream.on('response', (ures) => {
    const chunks: Buffer[] = [];
    ures.on('data', (c: Buffer) => chunks.push(c));
    ures.on('end', () => {
      release();
      sendText(
        res,
        ures.statusCode ?? 502,
        Buffer.concat(chunks).toString('utf8').slice(0, 4096) || `runtime answered ${ures.statusCode}`,
      );
    });
  });
  upstream.on('timeout', () =>
    upstream.destroy(
      new KubeletError(
        'KTS_ERR_CRI_TIMEOUT',
        `the runtime streaming server did not answer within ${UPSTREAM_TIMEOUT_MS / 1000} s`,
      ),
    ),
  );
  upstream.on('error', (err) => {
    release();
    log('server').warn({ err: err.message, target: url.pathname }, 'Stream proxy failed');
    if (!res.headersSent) sendText(res, 502, `streaming server: ${err.message}`);
  });
  upstream.end();
}
