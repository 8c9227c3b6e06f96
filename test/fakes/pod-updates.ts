/** A pod config stream a test pushes updates into (what podconfig feeds the Kubelet's run), and a poll-until helper. */
import type { PodUpdate } from '../../src/podconfig/types.js';

export class Updates implements AsyncIterable<PodUpdate> {
  private queue: PodUpdate[] = [];
  private wake: (() => void) | undefined;
  push(u: PodUpdate) {
    this.queue.push(u);
    this.wake?.();
  }
  async *[Symbol.asyncIterator]() {
    for (;;) {
      while (this.queue.length) yield this.queue.shift()!;
      await new Promise<void>((r) => {
        this.wake = r;
      });
    }
  }
}

/** Polls `fn` every 10 ms until it holds; throws naming `what` after `ms`. */
export async function until(what: string, fn: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
