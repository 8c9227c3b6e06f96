// Contract and differential tests of the subPath bind (native/src/subpath.cc and its twin
// src/volume/subpath/subpath-bind-ts.ts): each walks a volume one component at a time without
// following a symlink and bind-mounts what it opened. Both must bind the same trees and refuse
// the same ones with the same step, errno and component. Real bind mounts: needs root.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { implementations } from '../../src/cmd/hot-paths.js';
import { mountsUnder, unmount } from '../../src/volume/mount.js';
import { isSubPathBindFailure } from '../../src/volume/subpath/subpath-types.js';
import { testTempDir } from '../support/temp-dir.js';

const impls = implementations('subpath');
let dir: string;
let volume: string;
before(() => {
  dir = testTempDir('kts-subpath-');
  volume = join(dir, 'volume');
  mkdirSync(join(volume, 'a', 'b'), { recursive: true });
  writeFileSync(join(volume, 'a', 'b', 'f'), 'hello');
  writeFileSync(join(volume, 'file.txt'), 'file');
  symlinkSync('/', join(volume, 'abs'));
  symlinkSync('../'.repeat(12), join(volume, 'rel'));
  symlinkSync('a', join(volume, 'inside'));
  symlinkSync('../abs', join(volume, 'a', 'up'));
  mkdirSync(join(dir, 'targets'));
});
after(async () => {
  for (const m of await mountsUnder(dir)) await unmount(m);
  rmSync(dir, { recursive: true, force: true });
});

/** What a bind gave: its kind, or the failure's step, code and component. */
type Outcome = { isDir: boolean } | { step: string; code: string; component: number };

let n = 0;
async function attempt(impl: (typeof impls)[number], components: string[], base = volume): Promise<{ outcome: Outcome; target: string }> {
  const target = join(dir, 'targets', `${impl.name}-${n++}`);
  try {
    const r = await impl.bindSubPath({ base, components, target, dirMode: 0o750 });
    return { outcome: { isDir: r.isDir }, target };
  } catch (err) {
    assert.ok(isSubPathBindFailure(err), `a SubPathBindFailure, got ${String(err)}`);
    return { outcome: { step: err.step, code: err.code, component: err.component }, target };
  }
}

const mounted = async (target: string) => (await mountsUnder(join(dir, 'targets'))).includes(target);

/** [components, expected outcome]: both implementations must give exactly this. */
const CASES: Array<[string[], Outcome]> = [
  [['a', 'b'], { isDir: true }],
  [['file.txt'], { isDir: false }],
  [[], { isDir: true }],
  [['abs'], { step: 'open', code: 'ELOOP', component: 0 }],
  [['abs', 'etc'], { step: 'open', code: 'ELOOP', component: 0 }],
  [['rel'], { step: 'open', code: 'ELOOP', component: 0 }],
  [['inside', 'b'], { step: 'open', code: 'ELOOP', component: 0 }],
  [['a', 'up', 'etc'], { step: 'open', code: 'ELOOP', component: 1 }],
  [['a', 'b', 'f', 'x'], { step: 'open', code: 'ENOTDIR', component: 2 }],
];

for (const impl of impls) {
  describe(`subPath bind (${impl.name})`, () => {
    for (const [components, expected] of CASES) {
      it(`${JSON.stringify(components)} → ${JSON.stringify(expected)}`, async () => {
        const { outcome, target } = await attempt(impl, components);
        assert.deepEqual(outcome, expected);
        assert.equal(await mounted(target), 'isDir' in expected, 'mounted exactly when bound');
      });
    }

    it('a bound directory shows the volume\'s inode and writes through to it', async () => {
      const { target } = await attempt(impl, ['a', 'b']);
      assert.equal(readFileSync(join(target, 'f'), 'utf8'), 'hello');
      assert.equal(statSync(target).ino, statSync(join(volume, 'a', 'b')).ino);
      writeFileSync(join(target, `w-${impl.name}`), 'x');
      assert.ok(existsSync(join(volume, 'a', 'b', `w-${impl.name}`)));
    });

    it('a bound file shows the file', async () => {
      const { target } = await attempt(impl, ['file.txt']);
      assert.equal(readFileSync(target, 'utf8'), 'file');
    });

    it('missing directories are created with dirMode, one level at a time', async () => {
      const { outcome, target } = await attempt(impl, [`new-${impl.name}`, 'deeper']);
      assert.deepEqual(outcome, { isDir: true });
      assert.equal(statSync(join(volume, `new-${impl.name}`)).mode & 0o777, 0o750);
      assert.equal(statSync(target).ino, statSync(join(volume, `new-${impl.name}`, 'deeper')).ino);
    });

    it('a base that does not exist fails at open, before any component', async () => {
      const { outcome } = await attempt(impl, ['a'], join(dir, 'nope'));
      assert.deepEqual(outcome, { step: 'open', code: 'ENOENT', component: -1 });
    });

    it('a mount point of the other kind left by an earlier bind is replaced', async () => {
      const target = join(dir, 'targets', `${impl.name}-kind`);
      writeFileSync(target, '');
      await impl.bindSubPath({ base: volume, components: ['a'], target, dirMode: 0o750 });
      assert.ok(statSync(target).isDirectory());
    });
  });
}

it('differential: both implementations give the same outcome for every case', async () => {
  if (impls.length < 2) return;
  for (const [components] of CASES) {
    const outcomes = [];
    for (const impl of impls) outcomes.push((await attempt(impl, components)).outcome);
    assert.deepEqual(outcomes[0], outcomes[1], JSON.stringify(components));
  }
});
