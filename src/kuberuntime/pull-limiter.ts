/**
 * serializeImagePulls / maxParallelImagePulls (upstream serialImagePuller / parallelImagePuller
 * with a semaphore): at most `limit` pulls run at once, the rest wait in arrival order.
 */
export class PullLimiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.running++;
    try {
      return await fn();
    } finally {
      // Hand the slot straight to the next waiter (running stays the same) or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Pulls running now (for tests and metrics). */
  get active(): number {
    return this.running;
  }
}
