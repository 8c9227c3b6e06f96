// scripts/build-native.mjs as `npm install` runs it: whatever stops the build (no compiler, a
// compile error), the install goes on with one warning line and the TypeScript twins.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_ROOT } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A package whose addon source does not compile. */
function brokenPackage(): string {
  const dir = testTempDir('kts-build-native-');
  dirs.push(dir);
  mkdirSync(join(dir, 'scripts'));
  copyFileSync(join(REPO_ROOT, 'scripts', 'build-native.mjs'), join(dir, 'scripts', 'build-native.mjs'));
  writeFileSync(
    join(dir, 'binding.gyp'),
    JSON.stringify({ targets: [{ target_name: 'kubelet_ts_native', sources: ['broken.cc'] }] }),
  );
  writeFileSync(join(dir, 'broken.cc'), 'this is not C++;\n');
  return dir;
}

function build(dir: string, env: Record<string, string>, ...args: string[]) {
  return spawnSync(process.execPath, [join(dir, 'scripts', 'build-native.mjs'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
}

describe('build-native.mjs on install', () => {
  it('no C++ compiler: exit 0, one warning line', () => {
    const r = build(brokenPackage(), { CXX: '/nonexistent' });
    assert.equal(r.status, 0);
    assert.equal(r.stdout, '');
    assert.deepEqual(r.stderr.split('\n').filter(Boolean), [
      "kubelet-ts: WARNING native addon not built (no C++ compiler: '/nonexistent' not found or not runnable); the agent will use the TypeScript implementations",
    ]);
  });

  it(
    'a failing compile: exit 0, one warning line, the compiler output kept in native-build.log',
    { skip: spawnSync('c++', ['--version']).status !== 0 && 'no C++ compiler here' },
    () => {
      const dir = brokenPackage();
      const r = build(dir, {});
      assert.equal(r.status, 0, r.stderr);
      const lines = `${r.stdout}${r.stderr}`.split('\n').filter(Boolean);
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(
        lines[0]!,
        /^kubelet-ts: WARNING native addon not built \(node-gyp rebuild exited with \d+; compiler output in .*native-build\.log\)/,
      );
      assert.match(readFileSync(join(dir, 'native-build.log'), 'utf8'), /broken\.cc/);
      assert.equal(existsSync(join(dir, 'build', 'Release', 'kubelet_ts_native.node')), false);
    },
  );

  it('--force: a failing build fails', () => {
    const r = build(brokenPackage(), { CXX: '/nonexistent' }, '--force');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /native addon build failed: no C\+\+ compiler/);
  });
});
