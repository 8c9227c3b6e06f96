/**
 * Waits for systemd jobs to end. systemd announces each finished job with the Manager signal
 * JobRemoved(u id, o job, s unit, s result) to subscribed clients (org.freedesktop.systemd1(5));
 * go-systemd's dbus/methods.go (jobComplete) and runc's startUnit wait on it the same way.
 *
 * The signal can be dispatched before the caller has the job path in hand: the reply and the
 * signal may arrive in one read, and the reply's continuation runs after both are dispatched.
 * So results nobody waits for yet are kept (the last RECENT_LIMIT of them); job paths are not
 * reused while systemd runs, so a kept result cannot be mistaken for a later job's.
 */
import { DBusConnectionError, SystemdJobError } from './errors.js';
import type { DBusMessage } from './dbus-wire.js';
import type { DBusClient } from './types.js';

export const MANAGER_PATH = '/org/freedesktop/systemd1';
export const MANAGER_INTERFACE = 'org.freedesktop.systemd1.Manager';
const RECENT_LIMIT = 256;

interface Waiter {
  resolve: (result: string) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class JobWatcher {
  private readonly waiters = new Map<string, Waiter>();
  private readonly recent = new Map<string, string>();
  /** On a message bus, systemd's unique name: a JobRemoved from anyone else is ignored. */
  private sender: string | undefined;

  constructor(client: DBusClient) {
    client.onSignal((m) => this.onSignal(m));
    client.onClose((err) => this.failAll(err));
  }

  /** Accept JobRemoved only from `uniqueName` (any client on a bus can send a signal to us). */
  acceptOnlyFrom(uniqueName: string): void {
    this.sender = uniqueName;
  }

  /** Resolves with the job's result ("done", "failed", "canceled", ...); rejects after `timeoutMs`. */
  wait(job: string, unit: string, timeoutMs: number): Promise<string> {
    const known = this.recent.get(job);
    if (known !== undefined) {
      this.recent.delete(job);
      return Promise.resolve(known);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(job);
        reject(new SystemdJobError(unit, 'timeout', `job ${job} did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(job, { resolve, reject, timer });
    });
  }

  private onSignal(m: DBusMessage): void {
    if (
      m.interface !== MANAGER_INTERFACE ||
      m.member !== 'JobRemoved' ||
      m.path !== MANAGER_PATH ||
      m.signature !== 'uoss'
    )
      return;
    if (this.sender !== undefined && m.sender !== this.sender) return;
    const [, job, , result] = m.body as [number, string, string, string];
    const waiter = this.waiters.get(job);
    if (!waiter) return this.remember(job, result);
    this.waiters.delete(job);
    clearTimeout(waiter.timer);
    waiter.resolve(result);
  }

  private remember(job: string, result: string): void {
    this.recent.set(job, result);
    if (this.recent.size > RECENT_LIMIT) this.recent.delete(this.recent.keys().next().value!);
  }

  private failAll(err: Error): void {
    for (const [job, w] of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new DBusConnectionError('closed', `waiting for systemd job ${job}: ${err.message}`, { cause: err }));
    }
    this.waiters.clear();
  }
}
