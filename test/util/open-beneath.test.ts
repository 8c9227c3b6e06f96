/**
 * openBeneath: a path below a trusted directory, opened one component at a time relative to the
 * directory before it, with no symlink followed at any level and no check-then-open window.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { openBeneath, pathAt } from '../../src/util/open-beneath.js';
import { startSymlinkSwap } from '../support/symlink-swap.js';
import { testTempDir } from '../support/temp-dir.js';

function tree(): { root: string; outside: string } {
  const base = testTempDir('kts-beneath-');
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  mkdirSync(join(root, 'sub', 'deeper'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'top.log'), 'top\n');
  writeFileSync(join(root, 'sub', 'x.log'), 'inside\n');
  writeFileSync(join(root, 'sub', 'deeper', 'y.log'), 'deep\n');
  writeFileSync(join(outside, 'x.log'), 'SECRET\n');
  symlinkSync(outside, join(root, 'linkdir'));
  symlinkSync(join(outside, 'x.log'), join(root, 'link.log'));
  symlinkSync(join(root, 'top.log'), join(root, 'inner-link.log'));
  execFileSync('mkfifo', [join(root, 'fifo')]);
  return { root, outside };
}

async function read(root: string, components: string[]): Promise<string> {
  const fh = await openBeneath(root, components);
  try {
    return await fh.readFile('utf8');
  } finally {
    await fh.close();
  }
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    const fh = await p;
    await (fh as { close(): Promise<void> }).close();
    return 'opened';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? (err as Error).name;
  }
}

test('opens files and directories below the root', async () => {
  const { root } = tree();
  assert.equal(await read(root, ['top.log']), 'top\n');
  assert.equal(await read(root, ['sub', 'deeper', 'y.log']), 'deep\n');
  const dir = await openBeneath(root, ['sub']);
  assert.ok((await dir.stat()).isDirectory());
  await dir.close();
  const rootFh = await openBeneath(root, []);
  assert.ok((await rootFh.stat()).isDirectory());
  await rootFh.close();
});

test('refuses a symlink at any level, even one pointing inside; names that are not one component', async () => {
  const { root } = tree();
  // O_DIRECTORY|O_NOFOLLOW on a symlink is ENOTDIR, O_NOFOLLOW alone ELOOP.
  assert.equal(await code(openBeneath(root, ['linkdir', 'x.log'])), 'ENOTDIR', 'symlinked directory');
  assert.equal(await code(openBeneath(root, ['link.log'])), 'ELOOP', 'symlinked file');
  assert.equal(await code(openBeneath(root, ['inner-link.log'])), 'ELOOP', 'a symlink inside the root too');
  assert.equal(await code(openBeneath(root, ['top.log', 'x'])), 'ENOTDIR');
  assert.equal(await code(openBeneath(root, ['nope'])), 'ENOENT');
  for (const bad of ['..', '.', 'a/b', '', 'a\u0000b'])
    assert.equal(await code(openBeneath(root, [bad])), 'KTS_ERR_UNSAFE_PATH', JSON.stringify(bad));
  assert.equal(
    await code(openBeneath(root, ['fifo'])),
    'opened',
    'a FIFO opens without blocking (the caller refuses non-files)',
  );
});

test('a directory swapped for a symlink after it was opened: the walk continues in the directory it holds', async () => {
  const { root } = tree();
  const sub = join(root, 'sub');
  const dir = await open(sub, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    renameSync(sub, join(root, 'sub-moved'));
    symlinkSync(join(root, '..', 'outside'), sub);
    assert.equal(readFileSync(join(sub, 'x.log'), 'utf8'), 'SECRET\n', 'a path-based open would now read outside');
    assert.equal(
      await readFile(pathAt(dir, 'x.log'), 'utf8'),
      'inside\n',
      'the fd-relative open reads the directory held',
    );
    assert.equal(await code(openBeneath(root, ['sub', 'x.log'])), 'ENOTDIR', 'and a fresh walk refuses the symlink');
  } finally {
    await dir.close();
  }
});

test('racing a directory swapped for a symlink out of the root never reads outside it', async () => {
  const { root, outside } = tree();
  const swap = startSymlinkSwap(join(root, 'sub'), outside, 20_000);
  const seen = { inside: 0, refused: 0 };
  for (let i = 0; i < 500; i++) {
    try {
      assert.equal(await read(root, ['sub', 'x.log']), 'inside\n', 'read outside the root');
      seen.inside++;
    } catch (err) {
      if (err instanceof assert.AssertionError) throw err;
      assert.ok(['ELOOP', 'ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code!), String(err));
      seen.refused++;
    }
  }
  await swap.stop();
  assert.equal(seen.inside + seen.refused, 500);
});
