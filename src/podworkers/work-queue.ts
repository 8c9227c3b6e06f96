/** Per-UID due times for resyncs (upstream queue.WorkQueue). */
import type { Clock } from '../util/clock.js';

export class WorkQueue {
  private readonly due = new Map<string, number>();
  constructor(private readonly clock: Clock) {}

  enqueue(uid: string, delayMs: number): void {
    this.due.set(uid, this.clock.now() + delayMs);
  }

  remove(uid: string): void {
    this.due.delete(uid);
  }

  takeReady(): string[] {
    const now = this.clock.now();
    const ready: string[] = [];
    for (const [uid, at] of this.due) if (at <= now) ready.push(uid);
    for (const uid of ready) this.due.delete(uid);
    return ready;
  }
}
