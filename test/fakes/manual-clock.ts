/**
 * A Clock whose timers fire only when the test moves time with `advance()`: loops driven by
 * `Clock.setTimeout` can be stepped period by period without sleeping.
 */
import type { Clock } from '../../src/util/clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class ManualClock implements Clock {
  private timers: Timer[] = [];
  private seq = 0;

  constructor(public t = 1_000_000) {}

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const timer = { at: this.t + ms, seq: this.seq++, fn };
    this.timers.push(timer);
    return {
      cancel: () => {
        this.timers = this.timers.filter((x) => x !== timer);
      },
    };
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.timers.length;
  }

  /** Resolves once `count` timers wait (async work that ends by setting one has ended); rejects after `boundMs` of real time. */
  async waitForTimers(count = 1, boundMs = 10_000): Promise<void> {
    const end = Date.now() + boundMs;
    while (this.timers.length < count) {
      if (Date.now() > end)
        throw new Error(`ManualClock: ${this.timers.length} timer(s) after ${boundMs} ms, waiting for ${count}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due, in order, each at its own
   * time; between timers the microtask queue drains (settle), so async work a timer started
   * can schedule the next timer before time moves on.
   */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await settle();
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = Math.max(this.t, due.at);
      due.fn();
    }
    this.t = end;
    await settle();
  }
}

/** Lets pending promise callbacks run (a few macrotask turns: awaits chain through several). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}
