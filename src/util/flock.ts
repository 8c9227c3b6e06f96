/**
 * --lock-file and --exit-on-lock-contention (upstream pkg/util/flock and
 * watchForLockfileContention).
 *
 * Node has no flock(2). The lock is held by util-linux's `flock` running `cat` on a pipe from
 * us: flock opens (creating) the file, takes LOCK_EX (blocking, as upstream), prints a marker
 * and keeps the descriptor until `cat` sees end-of-file on its stdin. That pipe closes when we
 * release the lock or when this process dies for any reason, SIGKILL included, so the lock can
 * never outlive the agent. The lock is a real flock(2) on the file: an upstream kubelet or any
 * `flock` user contends with it correctly. If the helper dies while we still hold the pipe, the
 * lock is lost and `lost` settles: the caller must stop.
 *
 * Contention: upstream watches the file for IN_OPEN, which a second kubelet causes when it
 * opens the file to lock it. Neither fs.watch nor our inotify hot path reports opens, so we run
 * inotify-tools' `inotifywait -e open` (a real inotify IN_OPEN watch) once the lock is held,
 * after its watch is established, so our own open never counts. It runs under util-linux's
 * `setpriv --pdeathsig SIGTERM`, so it cannot outlive the agent either.
 */
import { spawn } from 'node:child_process';
import { KubeletError } from '../errors.js';
import { log } from './log.js';

export interface HeldLock {
  path: string;
  /** Settles with why the lock was lost (the helper died while we held it). */
  lost: Promise<string>;
  release(): void;
}

const LOCKED = 'kubelet-ts-locked';

/** Takes an exclusive flock on `path`, waiting (as upstream) while another process holds it. */
export function acquireLockFile(
  path: string,
  opts: { onWaiting?: () => void; waitingAfterMs?: number } = {},
): Promise<HeldLock> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', ['--exclusive', path, 'sh', '-c', `echo ${LOCKED}; exec cat >/dev/null`], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let released = false;
    let held = false;
    let stderr = '';
    const waiting = setTimeout(() => opts.onWaiting?.(), opts.waitingAfterMs ?? 1000);
    waiting.unref();
    let onLost: (why: string) => void = () => undefined;
    const lost = new Promise<string>((r) => (onLost = r));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      if (held || !d.toString().includes(LOCKED)) return;
      held = true;
      clearTimeout(waiting);
      resolve({
        path,
        lost,
        release: () => {
          released = true;
          child.stdin!.end();
        },
      });
    });
    child.on('error', (err) => {
      clearTimeout(waiting);
      reject(
        new KubeletError(
          'KTS_ERR_LOCK_FILE',
          `--lock-file ${path}: cannot run flock(1) from util-linux: ${err.message}`,
        ),
      );
    });
    child.on('exit', (code, signal) => {
      clearTimeout(waiting);
      const why = `flock helper exited (${signal ?? `code ${code}`})${stderr ? `: ${stderr.trim()}` : ''}`;
      if (!held) reject(new KubeletError('KTS_ERR_LOCK_FILE', `--lock-file ${path}: ${why}`));
      else if (!released) onLost(why);
    });
  });
}

export interface ContentionWatch {
  /** Resolves when another process opened the lock file. */
  contended: Promise<void>;
  close(): void;
}

/** Watches `path` for IN_OPEN (inotifywait); resolves `contended` on the first open by anyone. */
export function watchLockContention(path: string): Promise<ContentionWatch> {
  return new Promise((resolve, reject) => {
    // setpriv --pdeathsig: the watcher dies with the agent (even on SIGKILL) instead of lingering.
    const child = spawn('setpriv', ['--pdeathsig', 'SIGTERM', 'inotifywait', '-e', 'open', '--format', '%e', path], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let closed = false;
    let ready = false;
    let stderr = '';
    let onOpen: () => void = () => undefined;
    const contended = new Promise<void>((r) => (onOpen = r));
    const watch: ContentionWatch = {
      contended,
      close: () => {
        closed = true;
        child.kill('SIGTERM');
      },
    };
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (!ready && stderr.includes('Watches established')) {
        ready = true;
        resolve(watch);
      }
    });
    child.on('error', (err) =>
      reject(
        new KubeletError(
          'KTS_ERR_LOCK_FILE',
          `--exit-on-lock-contention: cannot run inotifywait (inotify-tools): ${err.message}`,
        ),
      ),
    );
    child.on('exit', (code) => {
      if (!ready)
        reject(
          new KubeletError(
            'KTS_ERR_LOCK_FILE',
            `--exit-on-lock-contention: inotifywait failed: ${stderr.trim() || `code ${code}`}`,
          ),
        );
      else if (closed) return;
      else if (code === 0) onOpen();
      else
        log('flock').error(
          { path, code, stderr: stderr.trim() },
          'lock file contention watch failed; contention will not be noticed',
        );
    });
  });
}
