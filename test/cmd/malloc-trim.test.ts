/**
 * mallocTrim gives freed malloc memory back: Buffers freed after a burst leave glibc's arena
 * resident until a trim, and the agent's periodic trim runs only when the addon is in use.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { addonMallocTrim, startMallocTrim } from '../../src/cmd/malloc-trim.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const anonMiB = () => Number(/RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

test(
  'with the addon: a trim after a freed burst of allocations lowers RssAnon',
  { skip: addonMallocTrim() ? false : 'no addon in use (KUBELET_TS_NATIVE=0 or not built)' },
  () => {
    const trim = addonMallocTrim()!;
    trim();
    // 64 MiB in 16 KiB backing stores (malloc'd, below the mmap threshold), every other one kept
    // alive until the end so the freed half is interleaved and cannot shrink from the top.
    let burst: Buffer[] | undefined = Array.from({ length: 4096 }, () => Buffer.alloc(16384, 1));
    const pinned = burst.filter((_, i) => i % 64 === 0);
    // eslint-disable-next-line no-useless-assignment -- dropping the last reference is the point: gc() frees it
    burst = undefined;
    gc();
    gc();
    const before = anonMiB();
    assert.equal(typeof trim(), 'boolean');
    const after = anonMiB();
    assert.ok(after < before - 16, `RssAnon ${before.toFixed(1)} → ${after.toFixed(1)} MiB`);
    assert.equal(pinned.length, 64);
  },
);

test('startMallocTrim: calls the trim periodically until stopped; no trim, no timer', async () => {
  let calls = 0;
  const t = startMallocTrim(() => calls++, 10);
  await new Promise((r) => setTimeout(r, 100));
  t.stop();
  const seen = calls;
  assert.ok(seen >= 2, `${seen} trims in 100 ms`);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(calls, seen, 'none after stop');
  startMallocTrim(undefined, 10).stop();
  if (process.env.KUBELET_TS_NATIVE === '0') assert.equal(addonMallocTrim(), undefined, 'KUBELET_TS_NATIVE=0: no trim');
});
