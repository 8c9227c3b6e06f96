/**
 * Long synchronous loops on the agent's one thread (the stats pass's walks, the TypeScript twin
 * of the cgroup reader) give the event loop a turn once they have held it for a slice. A budget
 * in time, not in items, keeps the wait of whatever else is due (a relist's reply, a probe) the
 * same on a slow machine as on a fast one.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** The longest a loop holds the event loop between two turns. */
export const SLICE_MS = 4;

export class TimeSlice {
  private start = performance.now();

  constructor(private readonly budgetMs = SLICE_MS) {}

  /** The slice is used up: the caller awaits next() before going on. */
  due(): boolean {
    return performance.now() - this.start >= this.budgetMs;
  }

  /** Resolves on the next turn of the event loop, and starts a new slice. */
  async next(): Promise<void> {
    await nextTurn();
    this.start = performance.now();
  }
}
