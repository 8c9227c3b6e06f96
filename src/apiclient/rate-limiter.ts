/**
 * A token bucket (client-go's flowcontrol.NewTokenBucketRateLimiter): `burst` tokens, refilled
 * at `qps` per second; acquire() waits for a token. Waiters are served in order.
 */
import { realClock, sleep, type Clock } from '../util/clock.js';

export class TokenBucket {
  private tokens: number;
  private last: number;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  /** Takes a token if one is there (no waiting); for tests and tryAccept callers. */
  tryAcquire(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  acquire(): Promise<void> {
    if (this.qps <= 0) return Promise.resolve(); // qps <= 0: unlimited, as client-go
    const next = this.tail.then(() => this.waitForToken());
    this.tail = next;
    return next;
  }

  private async waitForToken(): Promise<void> {
    for (;;) {
      this.refill();
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await sleep(Math.ceil(((1 - this.tokens) / this.qps) * 1000));
    }
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }
}
