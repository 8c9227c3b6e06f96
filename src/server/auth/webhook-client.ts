/**
 * The thin API-server client of the auth webhooks: credentials and endpoint from a kubeconfig
 * (apiclient's transport), one JSON POST per review, bounded in time and size.
 * A failed review is an ApiError (KTS_ERR_API): statusCode 0 when no usable answer came.
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { transportOf } from '../../apiclient/index.js';
import { ApiError, errorMessage } from '../../errors.js';
import type { ReviewClient } from './types.js';

const TIMEOUT_MS = 10_000;
const MAX_REPLY_BYTES = 1 << 20;

export function reviewClientFromKubeconfig(path: string): ReviewClient {
  const { base, tls, credentials, newAgent } = transportOf(path);
  // Reviews are a few a second at most (answers are cached): a small keep-alive pool.
  const agent = base.protocol === 'https:' ? newAgent(4) : undefined;
  return {
    async post(path, body) {
      const auth = await credentials?.authorization();
      const opts: RequestOptions = { ...tls, method: 'POST', agent, headers: auth ? { Authorization: auth } : {} };
      return postJson(new URL(base.pathname.replace(/\/$/, '') + path, base), opts, body);
    },
  };
}

function postJson(url: URL, opts: RequestOptions, body: unknown): Promise<unknown> {
  const data = Buffer.from(JSON.stringify(body));
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  const noAnswer = (why: string, cause?: unknown) =>
    new ApiError(0, 'ConnectionFailed', `POST ${url.pathname}: ${why}`, { cause });
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => reject(err instanceof ApiError ? err : noAnswer(errorMessage(err), err));
    const req = send(
      url,
      {
        ...opts,
        timeout: TIMEOUT_MS,
        headers: {
          ...opts.headers,
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'Content-Length': data.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_REPLY_BYTES) req.destroy(noAnswer(`review reply larger than ${MAX_REPLY_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          if (status >= 300) {
            const st = (parsed ?? {}) as { reason?: string; message?: string };
            return reject(
              new ApiError(
                status,
                st.reason ?? 'Unknown',
                `POST ${url.pathname}: ${status} ${st.message ?? text.slice(0, 200)}`,
              ),
            );
          }
          if (parsed === undefined)
            return reject(
              new ApiError(status, 'BadResponse', `POST ${url.pathname}: the reply is not JSON: ${text.slice(0, 200)}`),
            );
          resolve(parsed);
        });
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(noAnswer(`no reply within ${TIMEOUT_MS} ms`)));
    req.on('error', fail);
    req.end(data);
  });
}
