/**
 * failSwapOn (upstream pkg/kubelet/cm NewContainerManager): with true, a /proc/swaps listing a
 * device refuses the start with upstream's message; false starts; a missing /proc/swaps is swap off.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testTempDir } from '../support/temp-dir.js';
import { SWAP_ON_REFUSED, swapDevices, swapRefusal } from '../../src/cm/swap.js';

const HEADER = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';

function procSwaps(body: string): string {
  const p = join(testTempDir('kts-swap-'), 'swaps');
  writeFileSync(p, body);
  return p;
}

test('failSwapOn: swap on refuses with upstream message; swap off, false, or no /proc/swaps start', () => {
  const on = procSwaps(`${HEADER}/swap.img                               file\t\t2097148\t\t0\t\t-2\n`);
  const off = procSwaps(HEADER);
  const missing = join(testTempDir('kts-swap-'), 'absent');
  const table: [failSwapOn: boolean, path: string, refused: boolean][] = [
    [true, on, true],
    [false, on, false],
    [true, off, false],
    [false, off, false],
    [true, missing, false],
  ];
  for (const [failSwapOn, path, refused] of table) {
    const r = swapRefusal(failSwapOn, path);
    if (refused) assert.ok(r?.startsWith(SWAP_ON_REFUSED) && r.includes('/swap.img'), r);
    else assert.equal(r, undefined, `${failSwapOn} ${path}`);
  }
  assert.match(SWAP_ON_REFUSED, /please disable swap or set --fail-swap-on flag to false/);
  assert.deepEqual(swapDevices(missing), []);
  assert.equal(swapDevices(on).length, 1);
});
