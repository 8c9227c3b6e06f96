/**
 * Log rotation (upstream pkg/kubelet/logs/container_log_manager.go): every monitor interval, each
 * running container whose log file has reached containerLogMaxSize gets its file renamed to
 * `<file>.<YYYYMMDD-hhmmss>` and the runtime reopens a fresh one (CRI ReopenContainerLog); older
 * rotated files are removed so that at most containerLogMaxFiles files (rotated + current) stay.
 * Unlike upstream, rotated files are not gzip-compressed.
 */
import { readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Container } from '../cri/types.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import type { ContainerLogManager, LogRotationRuntime } from './types.js';

export interface LogRotationOptions {
  runtime: LogRotationRuntime;
  maxSizeBytes: number;
  maxFiles: number;
  intervalMs: number;
  now?: () => Date;
  /** Only these containers (tests confine rotation to their own pods); default: every running one. */
  filter?: (c: Container) => boolean;
}

/** upstream timestampFormat "20060102-150405", in UTC. */
export function rotationSuffix(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/** Rotated files of `logPath`, oldest first. */
async function rotatedLogs(logPath: string): Promise<string[]> {
  const prefix = `${basename(logPath)}.`;
  const names = (await readdir(dirname(logPath)).catch(() => [] as string[])).filter(
    (n) => n.startsWith(prefix) && /^\d{8}-\d{6}/.test(n.slice(prefix.length)),
  );
  return names.sort().map((n) => join(dirname(logPath), n));
}

class Rotator implements ContainerLogManager {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /**
   * Log path of each running container seen, by ID: a container's log path never changes, so one
   * ContainerStatus per container is enough (upstream asks every pass; at 100 pods those calls
   * were most of the agent's CRI traffic at steady state, issue 30).
   */
  private readonly logPaths = new Map<string, string>();

  constructor(private readonly o: LogRotationOptions) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.rotateOnce().finally(() => {
        this.running = undefined;
      });
    }, this.o.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async rotateOnce(): Promise<void> {
    let containers;
    try {
      containers = await this.o.runtime.listContainers({ state: 'CONTAINER_RUNNING' });
    } catch (err) {
      log('logs').warn({ err: errorMessage(err) }, 'log rotation: listing containers failed');
      return;
    }
    const listed = new Set(containers.map((c) => c.id));
    for (const id of this.logPaths.keys()) if (!listed.has(id)) this.logPaths.delete(id);
    for (const c of containers) {
      if (this.o.filter && !this.o.filter(c)) continue;
      try {
        await this.rotateContainer(c.id);
      } catch (err) {
        log('logs').warn({ containerId: c.id, err: errorMessage(err) }, 'log rotation failed');
      }
    }
  }

  /** The container's log path, asked of the runtime the first time only; undefined: nothing to rotate. */
  private async logPath(id: string): Promise<string | undefined> {
    const known = this.logPaths.get(id);
    if (known !== undefined) return known;
    const status = await this.o.runtime.containerStatus(id);
    if (!status.logPath || status.state !== 'CONTAINER_RUNNING') return undefined;
    this.logPaths.set(id, status.logPath);
    return status.logPath;
  }

  private async rotateContainer(id: string): Promise<void> {
    const path = await this.logPath(id);
    if (!path) return;
    const size = await stat(path).then(
      (s) => s.size,
      () => -1,
    );
    if (size < this.o.maxSizeBytes) return;
    // Room for the file about to be rotated: keep maxFiles-2 old ones (+ the new rotated + current).
    const old = await rotatedLogs(path);
    for (const f of old.slice(0, Math.max(0, old.length - (this.o.maxFiles - 2))))
      await unlink(f).catch(() => undefined);
    const target = `${path}.${rotationSuffix((this.o.now ?? (() => new Date()))())}`;
    await rename(path, target);
    try {
      await this.o.runtime.reopenContainerLog(id);
    } catch (err) {
      // The runtime still writes to the renamed file: put it back so nothing is lost.
      await rename(target, path).catch(() => undefined);
      throw err;
    }
    log('logs').info({ containerId: id, path, rotated: target, size }, 'container log rotated');
  }
}

export function createLogRotation(o: LogRotationOptions): ContainerLogManager {
  if (!(o.maxFiles >= 2)) throw new RangeError(`containerLogMaxFiles must be at least 2, got ${o.maxFiles}`);
  if (!(o.maxSizeBytes > 0)) throw new RangeError(`containerLogMaxSize must be positive, got ${o.maxSizeBytes}`);
  return new Rotator(o);
}
