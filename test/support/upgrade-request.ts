/**
 * One HTTP upgrade request over TLS (WebSocket or SPDY handshake headers given by the caller):
 * resolves with 101 and the raw socket when it went through, or with the refusal's status and
 * body. The caller owns (and ends) the socket.
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

export interface UpgradeReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  socket?: Socket;
}

export function upgradeRequest(opts: RequestOptions): Promise<UpgradeReply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(opts);
    req.on('upgrade', (res, socket) =>
      resolve({ status: res.statusCode!, headers: res.headers, body: '', socket: socket as Socket }),
    );
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Handshake headers of a v4.channel.k8s.io WebSocket upgrade. */
export const WEBSOCKET_UPGRADE_HEADERS = {
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
  'Sec-WebSocket-Version': '13',
  'Sec-WebSocket-Protocol': 'v4.channel.k8s.io',
} as const;
