import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SLICE_MS, TimeSlice } from '../../src/util/time-slice.js';

describe('TimeSlice (a loop gives the event loop a turn once it held it for a slice)', () => {
  it('is not due within its budget, and is due once it is spent', () => {
    assert.equal(new TimeSlice(60_000).due(), false);
    assert.equal(new TimeSlice(0).due(), true);
    assert.ok(SLICE_MS > 0 && SLICE_MS <= 10, 'a slice stays well under the relist goal (25 ms)');
  });

  it('next() lets what is queued on the loop run first, then starts a new slice', async () => {
    const order: string[] = [];
    const s = new TimeSlice(0);
    setImmediate(() => order.push('queued callback'));
    const done = s.next().then(() => order.push('loop resumed'));
    order.push('caller');
    await done;
    assert.deepEqual(order, ['caller', 'queued callback', 'loop resumed']);
  });

  it('a loop over items yields only when its slice is spent', async () => {
    const turnsOver = async (slice: TimeSlice, items: number): Promise<number> => {
      let turns = 0;
      for (let i = 0; i < items; i++) {
        if (!slice.due()) continue;
        await slice.next();
        turns++;
      }
      return turns;
    };
    assert.equal(await turnsOver(new TimeSlice(60_000), 1000), 0);
    assert.equal(await turnsOver(new TimeSlice(0), 3), 3, 'a zero budget yields before every item');
  });
});
