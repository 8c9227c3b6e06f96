// src/native/index.ts (loading) and src/cmd/hot-paths.ts (choosing): which implementation is chosen, and how a broken addon fails.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { addonCandidates } from '../../src/native/index.js';
import { hotPaths, nativeStatus } from '../../src/cmd/hot-paths.js';
import { testTempDir } from '../support/temp-dir.js';

const INDEX = pathToFileURL(join(import.meta.dirname, '../../src/cmd/hot-paths.js')).href;

/** Runs `body` in a child with `env` overriding ours; returns its JSON output or error code. */
function child(env: Record<string, string | undefined>, body = 'out = nativeStatus();') {
  const script = `
    import { hotPaths, nativeStatus } from ${JSON.stringify(INDEX)};
    let out;
    try { ${body} } catch (err) { out = { threw: err.name, code: err.code, message: err.message }; }
    console.log(JSON.stringify(out));`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 15_000,
    env: { ...process.env, ...env },
  });
  assert.equal(res.status, 0, `child failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as Record<string, string>;
}

it('KUBELET_TS_NATIVE=0 selects the TypeScript twins', () => {
  assert.deepEqual(child({ KUBELET_TS_NATIVE: '0' }), { inotify: 'ts', pleg: 'ts', cgroupStats: 'ts', kmsg: 'ts', subpath: 'ts' });
});

it('selects the native addon when one is built', (t) => {
  if (!existsSync(addonCandidates()[0]!) && !existsSync(addonCandidates()[1] ?? '')) return t.skip('addon not built');
  assert.deepEqual(child({ KUBELET_TS_NATIVE: undefined }), { inotify: 'native', pleg: 'native', cgroupStats: 'native', kmsg: 'native', subpath: 'native' });
});

it('fails loudly on a binary that does not load', () => {
  const dir = testTempDir('kts-addon-');
  try {
    const bad = join(dir, 'kubelet_ts_native.node');
    writeFileSync(bad, 'not an ELF file');
    const out = child({ KUBELET_TS_NATIVE: undefined, KUBELET_TS_NATIVE_ADDON: bad });
    assert.equal(out['threw'], 'KubeletError');
    assert.equal(out['code'], 'KTS_ERR_NATIVE');
    assert.match(out['message']!, /cannot load native addon/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('fails loudly when KUBELET_TS_NATIVE_ADDON names a missing file', () => {
  const out = child({ KUBELET_TS_NATIVE: undefined, KUBELET_TS_NATIVE_ADDON: '/nonexistent/kubelet_ts_native.node' });
  assert.equal(out['code'], 'KTS_ERR_NATIVE');
});

it('KUBELET_TS_NATIVE=0 does not even load a broken addon', () => {
  const out = child({ KUBELET_TS_NATIVE: '0', KUBELET_TS_NATIVE_ADDON: '/nonexistent/kubelet_ts_native.node' });
  assert.deepEqual(out, { inotify: 'ts', pleg: 'ts', cgroupStats: 'ts', kmsg: 'ts', subpath: 'ts' });
});

it('memoizes, and nativeStatus() matches hotPaths()', () => {
  assert.equal(hotPaths(), hotPaths());
  const status = nativeStatus();
  assert.deepEqual(Object.keys(status), Object.keys(hotPaths()));
  for (const [path, impl] of Object.entries(hotPaths())) assert.equal(status[path], impl.impl);
  assert.equal(typeof hotPaths().inotify.createFsWatcher, 'function');
  assert.equal(typeof hotPaths().pleg.createRelistDiffer, 'function');
});
