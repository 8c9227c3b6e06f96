/**
 * A client of the agent's main (TLS) port for e2e tests: plain requests, WebSocket sessions in
 * the v4 channel protocol (frames are [channel, ...payload]), and raw upgrade attempts. Each
 * call names the client certificate it presents (none = no credential).
 */
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import WebSocket from 'ws';
import { waitFor } from './kubelet-process.js';
import { upgradeRequest } from './upgrade-request.js';
import type { CertFiles } from './pki.js';

export interface Reply {
  status: number;
  body: string;
  headers?: Record<string, string | string[] | undefined>;
}

export interface ChannelSession {
  ws: WebSocket;
  out: Map<number, Buffer>;
  closed: Promise<void>;
  wait(ch: number, re: RegExp): Promise<string>;
}

export function mainPortClient(port: number, servingCA: () => Buffer) {
  const tlsOpts = (cert?: CertFiles) => ({
    ca: servingCA(),
    servername: 'localhost',
    ...(cert ? { cert: readFileSync(cert.cert), key: readFileSync(cert.key) } : {}),
  });

  function send(method: string, path: string, cert?: CertFiles, headers: Record<string, string> = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port, path, method, timeout: 20_000, headers, ...tlsOpts(cert) },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
      req.on('error', reject);
      req.end();
    });
  }

  /** A WebSocket (v4.channel.k8s.io) session; rejects with the HTTP status when the upgrade is refused. */
  function channelSession(path: string, cert: CertFiles): Promise<ChannelSession> {
    const ws = new WebSocket(`wss://127.0.0.1:${port}${path}`, ['v4.channel.k8s.io'], tlsOpts(cert));
    const out = new Map<number, Buffer>();
    ws.on('message', (data: Buffer) => {
      const ch = data[0]!;
      out.set(ch, Buffer.concat([out.get(ch) ?? Buffer.alloc(0), data.subarray(1)]));
    });
    const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
    const wait = (ch: number, re: RegExp) =>
      waitFor(
        `channel ${ch} to match ${re}`,
        20_000,
        () => {
          const text = out.get(ch)?.toString('utf8') ?? '';
          return re.test(text) ? text : undefined;
        },
        50,
      );
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve({ ws, out, closed, wait }));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () =>
          reject(
            Object.assign(new Error(`upgrade refused: HTTP ${res.statusCode}: ${body}`), {
              status: res.statusCode,
              body,
            }),
          ),
        );
      });
      ws.once('error', reject);
    });
  }

  return {
    get: (path: string, cert?: CertFiles) => send('GET', path, cert),
    post: (path: string, cert?: CertFiles) => send('POST', path, cert),
    /** A raw upgrade request (SPDY/3.1 by default): the status the main port answers, 101 when it went through. */
    async upgrade(path: string, cert: CertFiles, o: { method?: string; protocol?: string } = {}): Promise<Reply> {
      const r = await upgradeRequest({
        host: '127.0.0.1',
        port,
        path,
        method: o.method ?? 'POST',
        timeout: 20_000,
        ...tlsOpts(cert),
        headers: {
          Connection: 'Upgrade',
          Upgrade: o.protocol ?? 'SPDY/3.1',
          'X-Stream-Protocol-Version': 'v4.channel.k8s.io',
        },
      });
      r.socket?.destroy();
      return { status: r.status, body: r.body, headers: r.headers };
    },
    channelSession,
    tlsOpts,
  };
}
