/**
 * /logs/ (upstream's system log handler): files under the node log directory (/var/log),
 * confined to it. Refused before touching the file system: encoded slashes or backslashes,
 * `..` segments, NUL (400). Then the path is opened one component at a time, each relative to
 * the directory opened before it and with O_NOFOLLOW (util/open-beneath.ts), so no symlink is
 * followed at any level, and one swapped in while we walk is refused too: there is no
 * check-then-open window. Upstream follows symlinks (http.FileServer); here a symlink, even one
 * pointing inside /var/log, is 404 like anything missing, so the answer does not reveal what
 * exists outside.
 */
import { readdir, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { openBeneath, pathAt } from '../util/open-beneath.js';
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
  if (rel.split('/').some((s) => s === '..' || s === '.'))
    return { error: 'log path may not contain "." or ".." segments' };
  return { rel: rel.replace(/^\/+/, '') };
}

export function nodeLogsHandler(logDir: string) {
  return async (req: IncomingMessage, res: ServerResponse, params: Params): Promise<void> => {
    const r = confinedRelativePath(params.path ?? '');
    if ('error' in r) return sendText(res, 400, r.error);
    const notFound = () => sendText(res, 404, `404 page not found: /logs/${r.rel}`);
    let fh: FileHandle;
    try {
      fh = await openBeneath(
        logDir,
        r.rel.split('/').filter((c) => c !== ''),
      );
    } catch {
      return notFound(); // missing, a symlink somewhere on the path, unreadable: never say which
    }
    let owned = true;
    try {
      const st = await fh.stat();
      if (st.isDirectory()) return sendText(res, 200, await listing(fh));
      if (!st.isFile()) return notFound();
      owned = false;
      await sendFile(req, res, fh, st.size);
    } finally {
      if (owned) await fh.close();
    }
  };
}

/** The names in the directory `dir` holds open; subdirectories end with "/". */
async function listing(dir: FileHandle): Promise<string> {
  const entries = await readdir(pathAt(dir), { withFileTypes: true });
  return entries
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort()
    .join('\n');
}

/** Streams the open file; the stream owns (and closes) the FileHandle. */
async function sendFile(req: IncomingMessage, res: ServerResponse, fh: FileHandle, size: number): Promise<void> {
  res.writeHead(200, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': size,
    'X-Content-Type-Options': 'nosniff',
  });
  if (req.method === 'HEAD' || size === 0) {
    await fh.close();
    return void res.end();
  }
  const stream = fh.createReadStream({ start: 0, end: size - 1 });
  await new Promise<void>((resolve) => {
    stream.on('error', () => res.destroy());
    res.on('close', () => {
      stream.destroy();
      resolve();
    });
    stream.pipe(res);
  });
}
