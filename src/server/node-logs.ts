/**
 * /logs/ (upstream's system log handler): files under the node log directory (/var/log),
 * confined to it. Refused before touching the file system: encoded slashes or backslashes,
 * `..` segments, NUL (400). Refused after resolving: anything whose real path (symlinks
 * followed) leaves the directory (404, so the answer does not reveal what exists outside).
 */
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, sep } from 'node:path';
import { sendText } from './respond.js';
import type { Params } from './router.js';

/** The relative path of a raw (still percent-encoded) request tail, or a reason to refuse it. */
export function confinedRelativePath(raw: string): { rel: string } | { error: string } {
  if (/%2f|%5c/i.test(raw)) return { error: 'encoded slashes are not allowed in log paths' };
  let rel: string;
  try {
    rel = decodeURIComponent(raw);
  } catch {
    return { error: 'malformed escape in log path' };
  }
  if (rel.includes('\0') || rel.includes('\\')) return { error: 'invalid character in log path' };
  if (rel.split('/').some((s) => s === '..' || s === '.')) return { error: 'log path may not contain "." or ".." segments' };
  return { rel: rel.replace(/^\/+/, '') };
}

function inside(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}

export function nodeLogsHandler(logDir: string) {
  return async (req: IncomingMessage, res: ServerResponse, params: Params): Promise<void> => {
    const r = confinedRelativePath(params.path ?? '');
    if ('error' in r) return sendText(res, 400, r.error);
    let root: string;
    let target: string;
    try {
      root = await realpath(logDir);
      target = await realpath(join(root, r.rel));
    } catch {
      return sendText(res, 404, `404 page not found: /logs/${r.rel}`);
    }
    if (!inside(root, target)) return sendText(res, 404, `404 page not found: /logs/${r.rel}`);
    const st = await stat(target);
    if (st.isDirectory()) {
      const entries = await readdir(target, { withFileTypes: true });
      const body = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort().join('\n');
      return sendText(res, 200, body);
    }
    if (!st.isFile()) return sendText(res, 404, `404 page not found: /logs/${r.rel}`);
    // O_NOFOLLOW: the resolved path is opened as resolved, not through a symlink swapped in since.
    const fh = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW);
    const size = (await fh.stat()).size;
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': size, 'X-Content-Type-Options': 'nosniff' });
    if (req.method === 'HEAD' || size === 0) {
      await fh.close();
      return void res.end();
    }
    // The stream owns the FileHandle (closes it once); a raw fd would be closed twice.
    const stream = fh.createReadStream({ start: 0, end: size - 1 });
    await new Promise<void>((resolve) => {
      stream.on('error', () => res.destroy());
      res.on('close', () => {
        stream.destroy();
        resolve();
      });
      stream.pipe(res);
    });
  };
}
