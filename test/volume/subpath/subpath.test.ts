// prepareSubPath and cleanSubPaths (src/volume/subpath/subpath.ts) with real bind mounts, for each
// implementation of the bind: upstream's subPath cases (pkg/volume/util/subpath/
// subpath_linux_test.go TestBindSubPath / TestSafeMakeDir / TestCleanSubPaths: a plain directory
// or file, a symlink that stays inside the volume, links that leave it, absolute and ".."
// subPaths, missing directories, a link swapped in while the bind runs, cleanup), plus a restart
// after the pod swapped its directory for a link. Needs root.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  lstatSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { join } from 'node:path';
import { implementations } from '../../../src/cmd/hot-paths.js';
import { SubPathError } from '../../../src/errors.js';
import { hostMounter, mountsUnder, unmount } from '../../../src/volume/mount.js';
import {
  cleanSubPaths,
  prepareSubPath,
  subPathComponents,
  type SubPathMount,
} from '../../../src/volume/subpath/subpath.js';
import { testTempDir } from '../../support/temp-dir.js';

/**
 * Flips `dir` between the directory and a symlink to / (bounded, yielding now and then). The
 * bind may create `dir` afresh while the original is parked (SafeMakeDir): that flip is undone
 * and the loop goes on.
 */
function swapLoop(dir: string, parked: string, maxFlips = 20_000): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    for (let i = 0; i < maxFlips && !stopped; i++) {
      try {
        renameSync(dir, parked);
        symlinkSync('/', dir);
        unlinkSync(dir);
      } catch {
        if (lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(dir);
        else rmSync(dir, { recursive: true, force: true });
      }
      if (existsSync(parked)) renameSync(parked, dir);
      if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

let dir: string;
before(() => {
  dir = testTempDir('kts-subpath-prep-');
});
after(async () => {
  for (const m of await mountsUnder(dir)) await unmount(m);
  rmSync(dir, { recursive: true, force: true });
});

describe('subPathComponents (upstream ValidateSubPath)', () => {
  const ok: Array<[string, string[]]> = [
    ['a', ['a']],
    ['a/b/', ['a', 'b']],
    ['./a//b/.', ['a', 'b']],
    ['..a/b..', ['..a', 'b..']],
    ['.', []],
  ];
  for (const [sub, parts] of ok)
    it(`${JSON.stringify(sub)} → ${JSON.stringify(parts)}`, () => assert.deepEqual(subPathComponents('v', sub), parts));
  const bad: Array<[string, RegExp]> = [
    ['/etc', /must be a relative path/],
    ['..', /'\.\.'/],
    ['a/../../b', /'\.\.'/],
    ['a/..', /'\.\.'/],
    ['a\u0000b', /NUL/],
  ];
  for (const [sub, problem] of bad) {
    it(`${JSON.stringify(sub)} is refused`, () =>
      assert.throws(
        () => subPathComponents('v', sub),
        (err: unknown) => err instanceof SubPathError && err.code === 'KTS_ERR_SUBPATH' && problem.test(err.message),
      ));
  }
});

for (const impl of implementations('subpath')) {
  describe(`prepareSubPath (${impl.name})`, () => {
    let root: string;
    let volume: string;
    let index = 0;
    const ctx = () => ({ rootDir: root, mounter: hostMounter, bindSubPath: impl.bindSubPath });
    const spec = (subPath: string, extra: Partial<SubPathMount> = {}): SubPathMount => ({
      uid: 'uid-1',
      container: 'c',
      index: index++,
      volumeName: 'data',
      volumePath: volume,
      subPath,
      ...extra,
    });

    before(() => {
      root = join(dir, impl.name, 'root');
      volume = join(dir, impl.name, 'volume');
      mkdirSync(join(volume, 'a', 'b'), { recursive: true });
      mkdirSync(join(volume, '..v1'));
      writeFileSync(join(volume, '..v1', 'key'), 'value');
      symlinkSync('..v1', join(volume, '..data'));
      symlinkSync('..data/key', join(volume, 'key'));
      symlinkSync('a', join(volume, 'inside'));
      symlinkSync('/', join(volume, 'abs'));
      symlinkSync('../'.repeat(12) + 'etc', join(volume, 'rel'));
      symlinkSync('../abs', join(volume, 'a', 'up'));
      symlinkSync('missing', join(volume, 'dangling'));
      mkdirSync(root, { recursive: true });
    });

    it('binds a directory at pods/<uid>/volume-subpaths/<volume>/<container>/<index>', async () => {
      const s = spec('a/b');
      const target = await prepareSubPath(ctx(), s);
      assert.equal(target, join(root, 'pods', 'uid-1', 'volume-subpaths', 'data', 'c', String(s.index)));
      assert.equal(statSync(target).ino, statSync(join(volume, 'a', 'b')).ino);
    });

    it('follows links that stay inside the volume (a configMap key -> ..data/key)', async () => {
      assert.equal(statSync(await prepareSubPath(ctx(), spec('inside/b'))).ino, statSync(join(volume, 'a', 'b')).ino);
      assert.equal(statSync(await prepareSubPath(ctx(), spec('key'))).ino, statSync(join(volume, '..v1', 'key')).ino);
    });

    for (const sub of ['abs', 'abs/etc', 'rel', 'a/up/etc', 'inside/up']) {
      it(`refuses ${sub}: it resolves outside the volume`, async () => {
        await assert.rejects(
          prepareSubPath(ctx(), spec(sub)),
          (err: unknown) => err instanceof SubPathError && /outside the volume/.test(err.message),
        );
      });
    }

    it('refuses a dangling link rather than creating through it', async () => {
      await assert.rejects(
        prepareSubPath(ctx(), spec('dangling/x')),
        (err: unknown) => err instanceof SubPathError && /ELOOP/.test(err.message),
      );
      assert.ok(!existsSync(join(volume, 'missing')));
    });

    it("creates missing directories with the volume root's mode (upstream SafeMakeDir)", async () => {
      const target = await prepareSubPath(ctx(), spec('m/n'));
      assert.equal(statSync(target).ino, statSync(join(volume, 'm', 'n')).ino);
      assert.equal(statSync(join(volume, 'm')).mode & 0o7777, statSync(volume).mode & 0o7777);
    });

    it('a restart binds again; a directory swapped for a link since is refused and left unmounted', async () => {
      mkdirSync(join(volume, 'x'));
      const s = spec('x');
      const target = await prepareSubPath(ctx(), s);
      assert.equal(await prepareSubPath(ctx(), s), target, 'same mount point');
      assert.equal((await mountsUnder(join(target, '..'))).filter((m) => m === target).length, 1, 'one mount, not two');
      rmSync(join(volume, 'x'), { recursive: true });
      symlinkSync('/', join(volume, 'x'));
      await assert.rejects(prepareSubPath(ctx(), s), SubPathError);
      assert.ok(!(await mountsUnder(join(target, '..'))).includes(target), 'the old bind is gone');
    });

    it('a link swapped in and out while binding is never followed', async () => {
      const race = join(volume, 'race');
      mkdirSync(race);
      const swap = swapLoop(race, join(volume, 'race-parked'));
      let bound = 0;
      let refused = 0;
      try {
        for (let i = 0; i < 60; i++) {
          try {
            const target = await prepareSubPath(ctx(), spec('race', { index: 1000 }));
            // The directory, or one SafeMakeDir made while it was parked: never the host's root.
            assert.ok(statSync(target).isDirectory());
            assert.notEqual(statSync(target).ino, statSync('/').ino, 'the bind is not the host root');
            assert.ok(!existsSync(join(target, 'etc')), 'nothing of the host shows through');
            bound++;
          } catch (err) {
            assert.ok(err instanceof SubPathError, String(err));
            refused++;
          }
        }
      } finally {
        await swap.stop();
      }
      assert.equal(bound + refused, 60);
    });

    it('cleanSubPaths of a pod without subPaths asks the mounter nothing', async () => {
      let asked = 0;
      const counting = { ...hostMounter, mountsUnder: (d: string) => (asked++, hostMounter.mountsUnder(d)) };
      await cleanSubPaths(root, 'uid-without-subpaths', counting);
      assert.equal(asked, 0);
    });

    it('cleanSubPaths unmounts every bind of the pod and removes the directory', async () => {
      assert.ok((await mountsUnder(join(root, 'pods', 'uid-1'))).length > 0);
      await cleanSubPaths(root, 'uid-1', hostMounter);
      assert.deepEqual(await mountsUnder(join(root, 'pods', 'uid-1')), []);
      assert.ok(!existsSync(join(root, 'pods', 'uid-1', 'volume-subpaths')));
      assert.ok(existsSync(join(volume, 'a', 'b')), 'the volume itself is untouched');
    });
  });
}
