/**
 * The cgroup driver in effect: our table for upstream's TestGetCgroupDriverFromCRI
 * (package cmd/kubelet/app). We follow the released kubelets (1.34, 1.35): a runtime
 * without RuntimeConfig keeps the configured driver. One deliberate difference: a runtime that
 * does not answer at all does not stop start-up (the node reports NotReady instead). Upstream's main branch adds the
 * DisableCgroupDriverFallback gate, on by default, which refuses such runtimes; we do not have it
 * (containerd 1.6 and 1.7, which this project runs on, have no RuntimeConfig).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cgroupDriverFromRuntime, type RuntimeConfigSource } from '../../src/cm/index.js';
import type { RuntimeConfigInfo } from '../../src/cri/index.js';
import { CriError } from '../../src/errors.js';
import type { CgroupDriver } from '../../src/config/cgroup-drivers.js';

const unimplemented = () =>
  new CriError('KTS_ERR_CRI_UNIMPLEMENTED', 'RuntimeConfig', 'UNIMPLEMENTED: RuntimeConfig is not implemented', {
    grpcCode: 12,
  });
const unavailable = () =>
  new CriError('KTS_ERR_CRI_UNAVAILABLE', 'RuntimeConfig', 'UNAVAILABLE: runtime unavailable', { grpcCode: 14 });
const internal = () => new CriError('KTS_ERR_CRI', 'RuntimeConfig', 'INTERNAL: boom', { grpcCode: 13 });

/** Answers from `replies` in turn (the last one repeats), counting calls. */
function runtime(...replies: Array<RuntimeConfigInfo | Error>): RuntimeConfigSource & { calls: number } {
  const r = {
    calls: 0,
    async runtimeConfig() {
      const reply = replies[Math.min(r.calls++, replies.length - 1)]!;
      if (reply instanceof Error) throw reply;
      return reply;
    },
  };
  return r;
}

const noSleep = { sleep: async () => {} };

test('upstream TestGetCgroupDriverFromCRI, the released behaviour', async () => {
  const cases: Array<{
    name: string;
    configured: CgroupDriver;
    rt: ReturnType<typeof runtime>;
    driver?: CgroupDriver;
    from?: string;
    calls: number;
    error?: RegExp;
  }> = [
    {
      name: 'unsupported runtime falls back to systemd',
      configured: 'systemd',
      rt: runtime(unimplemented()),
      driver: 'systemd',
      from: 'unimplemented',
      calls: 1,
    },
    {
      name: 'unsupported runtime falls back to cgroupfs',
      configured: 'cgroupfs',
      rt: runtime(unimplemented()),
      driver: 'cgroupfs',
      from: 'unimplemented',
      calls: 1,
    },
    {
      name: 'CRI systemd overrides the configured driver',
      configured: 'cgroupfs',
      rt: runtime({ cgroupDriver: 'systemd' }),
      driver: 'systemd',
      from: 'runtime',
      calls: 1,
    },
    {
      name: 'CRI cgroupfs overrides the configured driver',
      configured: 'systemd',
      rt: runtime({ cgroupDriver: 'cgroupfs' }),
      driver: 'cgroupfs',
      from: 'runtime',
      calls: 1,
    },
    // Upstream fails start-up here ("other runtime errors are not masked by fallback"); we start
    // with the configured driver and report the node NotReady until the runtime answers.
    {
      name: 'an unreachable runtime: 3 attempts, then the configured driver',
      configured: 'systemd',
      rt: runtime(unavailable()),
      driver: 'systemd',
      from: 'unreachable',
      calls: 3,
    },
    {
      name: 'other runtime errors are not masked by the fallback (3 attempts)',
      configured: 'systemd',
      rt: runtime(internal()),
      calls: 3,
      error: /after 3 attempts \(CRI RuntimeConfig: INTERNAL: boom\)/,
    },
    {
      name: 'response without Linux config preserves the configured driver',
      configured: 'cgroupfs',
      rt: runtime({}),
      driver: 'cgroupfs',
      from: 'no-linux',
      calls: 1,
    },
    // Ours: a runtime still starting answers on a later attempt (upstream retries the same way).
    {
      name: 'a transient error, then an answer',
      configured: 'systemd',
      rt: runtime(unavailable(), { cgroupDriver: 'cgroupfs' }),
      driver: 'cgroupfs',
      from: 'runtime',
      calls: 2,
    },
  ];
  for (const c of cases) {
    const got = cgroupDriverFromRuntime(c.rt, c.configured, noSleep);
    if (c.error) {
      await assert.rejects(
        got,
        (err: unknown) => err instanceof CriError && err.code === 'KTS_ERR_CRI' && c.error!.test(err.message),
        c.name,
      );
    } else {
      const choice = await got;
      assert.equal(choice.driver, c.driver, c.name);
      assert.equal(choice.from, c.from, c.name);
    }
    // Upstream: "unsupported RPCs should not be retried".
    assert.equal(c.rt.calls, c.calls, `${c.name}: calls`);
  }
});

test('each reason for keeping the configured driver is told apart (only "unimplemented" sets kubelet_cri_losing_support)', async () => {
  assert.equal((await cgroupDriverFromRuntime(runtime(unimplemented()), 'cgroupfs', noSleep)).from, 'unimplemented');
  assert.equal((await cgroupDriverFromRuntime(runtime({}), 'cgroupfs', noSleep)).from, 'no-linux');
  assert.equal(
    (await cgroupDriverFromRuntime(runtime({ cgroupDriver: 'systemd' }), 'cgroupfs', noSleep)).from,
    'runtime',
  );
  assert.equal((await cgroupDriverFromRuntime(runtime(unavailable()), 'cgroupfs', noSleep)).from, 'unreachable');
});

test('retries wait between attempts, not after the last', async () => {
  const waits: number[] = [];
  await assert.rejects(
    cgroupDriverFromRuntime(runtime(internal()), 'cgroupfs', {
      retryDelayMs: 7,
      sleep: async (ms) => {
        waits.push(ms);
      },
    }),
  );
  assert.deepEqual(waits, [7, 7]);
});
