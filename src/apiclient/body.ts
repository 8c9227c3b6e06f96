/**
 * Reading an apiserver response body under a byte cap. The cap is checked against
 * Content-Length before the first byte and then as chunks arrive; crossing it destroys the
 * request (and its socket) with an ApiLimitError, so nothing past the cap is ever buffered.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import { ApiLimitError } from '../errors.js';
import { formatBytes } from './limits.js';

/** The cap on one body: `name` says which limit (e.g. "response body limit") in the error. */
export interface BodyLimit {
  path: string;
  maxBytes: number;
  name: string;
}

/** The limit error for a body over its cap. */
export function bodyLimitError({ path, maxBytes, name }: BodyLimit): ApiLimitError {
  return new ApiLimitError(path, `${formatBytes(maxBytes)} (${name})`, 'response');
}

/** Collects `res` up to `limit.maxBytes`; resolves with the bytes, or destroys `req` with the limit error. */
export function readCappedBody(req: ClientRequest, res: IncomingMessage, limit: BodyLimit): Promise<Buffer> {
  const { maxBytes } = limit;
  return new Promise((resolve, reject) => {
    const over = () => {
      const err = bodyLimitError(limit);
      req.destroy(err);
      reject(err);
    };
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) return over();
    const chunks: Buffer[] = [];
    let total = 0;
    res.on('data', (c: Buffer) => {
      total += c.length;
      if (total > maxBytes) {
        chunks.length = 0;
        res.removeAllListeners('data');
        over();
        return;
      }
      chunks.push(c);
    });
    res.on('end', () => resolve(Buffer.concat(chunks, total)));
    res.on('error', reject);
  });
}
