/**
 * failCgroupV1 at start (upstream 1.35: pkg/kubelet/apis/config/validation refuses a cgroup v1
 * host when failCgroupV1 is true; the container manager warns otherwise). Both sides: the verdict
 * table for either host, the host probe against this machine's /sys/fs/cgroup, and the agent
 * itself on this host: refused by default, started (and warning) with --fail-cgroupv1=false.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CGROUP_V1_REFUSED,
  CGROUP_V1_WARNING,
  cgroupVersionVerdict,
  isCgroup2UnifiedMode,
} from '../../src/cm/cgroup-version.js';
import { REPO_ROOT } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

test('verdict: v2 runs either way; v1 is refused with upstream message unless failCgroupV1 is false', () => {
  assert.deepEqual(cgroupVersionVerdict(true, true), { kind: 'ok' });
  assert.deepEqual(cgroupVersionVerdict(false, true), { kind: 'ok' });
  assert.deepEqual(cgroupVersionVerdict(false, false), { kind: 'warn' });
  const v = cgroupVersionVerdict(true, false);
  assert.equal(v.kind, 'refuse');
  assert.ok(
    v.kind === 'refuse' &&
      v.message.startsWith(`failed to validate kubelet configuration, error: ${CGROUP_V1_REFUSED}`),
  );
  assert.ok(v.kind === 'refuse' && v.message.includes('failCgroupV1: false'), 'says how to opt out');
});

/** This host's mode as /proc/self/mountinfo tells it: /sys/fs/cgroup mounted as cgroup2. */
function hostIsUnified(): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === '/sys/fs/cgroup' && / - cgroup2 /.test(l));
}

test('isCgroup2UnifiedMode agrees with mountinfo; a missing path is not unified', () => {
  assert.equal(isCgroup2UnifiedMode(), hostIsUnified());
  assert.equal(isCgroup2UnifiedMode('/nonexistent-kts'), false);
});

const BIN = join(REPO_ROOT, 'bin', 'kubelet-ts.js');

test(
  'the agent on a cgroup v1 host: refused by default, naming failCgroupV1',
  { skip: hostIsUnified() && 'cgroup v2 host' },
  () => {
    const dir = testTempDir('kts-cgv1-');
    const r = spawnSync(BIN, [`--root-dir=${dir}`, '--hostname-override=n'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.match(
      r.stderr,
      /invalid configuration: failed to validate kubelet configuration, error: kubelet is configured to not run on a host using cgroup v1/,
    );
    assert.match(r.stderr, /failCgroupV1: false/);
  },
);

test(
  'the agent on a cgroup v1 host with --fail-cgroupv1=false: starts and warns as upstream',
  { skip: hostIsUnified() && 'cgroup v2 host' },
  async () => {
    const dir = testTempDir('kts-cgv1-');
    // No runtime at this endpoint: the agent gets past the check, warns, then waits for the runtime.
    const child = spawn(
      BIN,
      [
        `--root-dir=${dir}`,
        '--hostname-override=n',
        '--fail-cgroupv1=false',
        `--container-runtime-endpoint=unix://${dir}/none.sock`,
        '--port=0',
        '--healthz-port=0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBELET_TS_ROOT_DIR: dir } },
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    try {
      const deadline = Date.now() + 20_000;
      while (!out.includes(CGROUP_V1_WARNING) && child.exitCode === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      assert.ok(out.includes(CGROUP_V1_WARNING), out);
      assert.ok(!out.includes('failed to validate kubelet configuration'), out);
    } finally {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        process.kill(child.pid!, 'SIGKILL');
        await exited;
      }
    }
  },
);
