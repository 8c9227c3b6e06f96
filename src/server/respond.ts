/** Small response helpers shared by the main-port handlers. */
import type { ServerResponse } from 'node:http';
import type { Reply } from './types.js';

export function sendText(res: ServerResponse, status: number, body: string, extra: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = body.endsWith('\n') ? body : `${body}\n`;
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': Buffer.byteLength(text),
    ...extra,
  });
  res.end(res.req?.method === 'HEAD' ? undefined : text);
}

export function sendJson(res: ServerResponse, body: unknown): void {
  sendReply(res, { status: 200, contentType: 'application/json', body: JSON.stringify(body) });
}

export function sendReply(res: ServerResponse, reply: Reply): void {
  res.writeHead(reply.status, { 'Content-Type': reply.contentType, 'Content-Length': Buffer.byteLength(reply.body) });
  res.end(res.req?.method === 'HEAD' ? undefined : reply.body);
}
