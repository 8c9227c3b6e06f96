/** Pieces shared by the native and the TypeScript FsWatcher. */
import { getSystemErrorMap, getSystemErrorName } from 'node:util';

/** The Node-style error fs.watch would throw for `errno` (positive) on `path`. */
export function watchError(errno: number, path: string): NodeJS.ErrnoException {
  const uv = -Math.abs(errno);
  let code: string;
  try {
    code = getSystemErrorName(uv);
  } catch {
    code = `E${Math.abs(errno)}`;
  }
  let text = getSystemErrorMap().get(uv)?.[1] ?? 'unknown error';
  if (code === 'ENOSPC') text += ' (inotify watch limit reached: raise fs.inotify.max_user_watches)';
  if (code === 'EBADF') text = 'watcher is closed';
  const err: NodeJS.ErrnoException = new Error(`${code}: ${text}, watch '${path}'`);
  err.errno = uv;
  err.code = code;
  err.syscall = 'watch';
  err.path = path;
  return err;
}

export function checkPath(path: unknown): asserts path is string {
  if (typeof path !== 'string' || path === '' || path.includes('\0')) {
    throw new TypeError(`FsWatcher: path must be a non-empty string without NUL bytes, got ${JSON.stringify(path)}`);
  }
}
