/**
 * The thin API-server client of the auth webhooks: credentials and endpoint from a kubeconfig
 * (@kubernetes/client-node KubeConfig), one JSON POST per review, bounded in time and size.
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import type { ReviewClient } from './types.js';

const TIMEOUT_MS = 10_000;
const MAX_REPLY_BYTES = 1 << 20;

export function reviewClientFromKubeconfig(path: string): ReviewClient {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) throw new Error(`kubeconfig ${path}: the current context has no cluster server`);
  const base = new URL(cluster.server);
  return {
    async post(path, body) {
      const opts: RequestOptions = { method: 'POST', headers: {} };
      await kc.applyToHTTPSOptions(opts);
      return postJson(new URL(base.pathname.replace(/\/$/, '') + path, base), opts, body);
    },
  };
}

function postJson(url: URL, opts: RequestOptions, body: unknown): Promise<unknown> {
  const data = Buffer.from(JSON.stringify(body));
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, {
      ...opts,
      timeout: TIMEOUT_MS,
      headers: { ...opts.headers, 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': data.length },
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_REPLY_BYTES) req.destroy(new Error('review reply too large'));
        else chunks.push(c);
      });
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) >= 300) return reject(new Error(`${url.pathname}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new Error(`${url.pathname}: reply is not JSON`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url.pathname}: no reply within ${TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(data);
  });
}
