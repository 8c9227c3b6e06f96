import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dirUsage } from '../../src/stats/fs-stats.js';
import { testTempDir } from '../support/temp-dir.js';

test('dirUsage: allocated bytes and inodes of a tree, symlinks not followed, absent dir undefined', () => {
  const dir = testTempDir('kts-dirusage-');
  mkdirSync(join(dir, 'a/b'), { recursive: true });
  writeFileSync(join(dir, 'a/one'), 'x'.repeat(10_000));
  writeFileSync(join(dir, 'a/b/two'), 'y'.repeat(70_000));
  symlinkSync('/usr', join(dir, 'link'));
  const paths = [dir, 'a', 'a/b', 'a/one', 'a/b/two', 'link'].map((p) => (p === dir ? dir : join(dir, p)));
  const blocks = paths.reduce((n, p) => n + lstatSync(p, { bigint: true }).blocks, 0n);
  assert.deepEqual(dirUsage(dir), { bytes: blocks * 512n, inodes: 6n });
  assert.equal(dirUsage(join(dir, 'absent')), undefined);
  assert.deepEqual(dirUsage(dir, 2)?.inodes, 2n);
});
