/**
 * serializeImagePulls / maxParallelImagePulls (upstream serialImagePuller / parallelImagePuller
 * with a semaphore): at most `limit` pulls run at once, the rest wait in arrival order.
 */
export class PullLimiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  /** Runs fn in a slot; a signal that fires while waiting for one leaves the queue (rejects). */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.running >= this.limit) await this.waitForSlot(signal);
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

  private waitForSlot(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal!.reason);
      };
      this.waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Pulls running now (for tests and metrics). */
  get active(): number {
    return this.running;
  }
}
