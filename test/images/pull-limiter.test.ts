/**
 * The pull limiter (serializeImagePulls / maxParallelImagePulls): its bounds, arrival order, and
 * a waiting pull that its signal cancels.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PullLimiter } from '../../src/images/pull-limiter.js';

test('PullLimiter: serial (1) and parallel (2) bounds, arrival order', async () => {
  for (const limit of [1, 2]) {
    const l = new PullLimiter(limit);
    let max = 0;
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        l.run(async () => {
          max = Math.max(max, l.active);
          await new Promise((r) => setTimeout(r, 5));
          order.push(i);
        }),
      ),
    );
    assert.equal(max, limit);
    if (limit === 1) assert.deepEqual(order, [0, 1, 2, 3, 4]);
    assert.equal(l.active, 0);
  }
});

test('a pull waiting for a slot leaves the queue when its signal fires', async () => {
  const limiter = new PullLimiter(1);
  let release!: () => void;
  const first = limiter.run(
    () =>
      new Promise<void>((r) => {
        release = r;
      }),
  );
  const ac = new AbortController();
  let ran = false;
  const second = limiter.run(async () => {
    ran = true;
  }, ac.signal);
  ac.abort();
  await assert.rejects(second);
  release();
  await first;
  assert.equal(ran, false);
  assert.equal(limiter.active, 0, 'the slot is free again');
});
