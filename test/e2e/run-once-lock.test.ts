/**
 * --runonce and --lock-file/--exit-on-lock-contention through the real CLI against real
 * containerd.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint, TEST_IMAGES } from '../support/containerd.js';
import {
  getPods,
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const NS = `once-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const endpoint = await runtimeEndpoint();
const { runtime } = connectRuntime(endpoint);
const started: KubeletProcess[] = [];

after(async () => {
  for (const k of started) await stopKubelet(k);
  await removeTestPods(runtime, { namespace: NS });
  runtime.close();
});

function manifest(name: string, image: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      hostNetwork: true,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'c',
          image,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
        },
      ],
    },
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

function start(dirs: { dir: string; manifests: string }, extraArgs: string[]): KubeletProcess {
  const k = startKubelet({ ...dirs, endpoint, extraArgs });
  started.push(k);
  return k;
}

test('--runonce exits 0 when every pod runs, printing one line per pod', async () => {
  const dirs = makeKubeletDirs();
  writeFileSync(join(dirs.manifests, 'a.json'), manifest('good-a', TEST_IMAGES.busybox));
  writeFileSync(join(dirs.manifests, 'b.json'), manifest('good-b', TEST_IMAGES.busybox));
  const k = start(dirs, ['--runonce']);
  assert.equal(await exitOf(k.child), 0, readFileSync(k.logFile, 'utf8').slice(-2000));
  const out = readFileSync(k.logFile, 'utf8');
  assert.match(out, new RegExp(`^ok ${NS}/good-a-e2e-node: running$`, 'm'));
  assert.match(out, new RegExp(`^ok ${NS}/good-b-e2e-node: running$`, 'm'));
  assert.match(out, /runonce: 2 pod\(s\) running/);
  const live = (await runtime.listContainers({ state: 'CONTAINER_RUNNING' })).filter(
    (c) => c.labels['io.kubernetes.pod.namespace'] === NS,
  );
  assert.equal(live.length, 2, 'run-once leaves its pods running');
  await removeTestPods(runtime, { namespace: NS });
});

test('--runonce exits non-zero naming the pod whose image does not exist', async () => {
  const dirs = makeKubeletDirs();
  writeFileSync(join(dirs.manifests, 'good.json'), manifest('fine', TEST_IMAGES.busybox));
  writeFileSync(join(dirs.manifests, 'bad.json'), manifest('badimage', '127.0.0.1:1/kubelet-ts/no-such-image:latest'));
  const k = start(dirs, ['--runonce']);
  assert.equal(await exitOf(k.child), 1);
  const out = readFileSync(k.logFile, 'utf8');
  assert.match(out, new RegExp(`^FAILED ${NS}/badimage-e2e-node: container c: (ErrImagePull|ImagePullBackOff)`, 'm'));
  assert.match(out, new RegExp(`^ok ${NS}/fine-e2e-node: running$`, 'm'));
  assert.match(out, new RegExp(`runonce: 1 of 2 pod\\(s\\) failed: ${NS}/badimage-e2e-node`));
  await removeTestPods(runtime, { namespace: NS });
});

test('a second agent on the same lock file makes the first (with contention-exit) leave; it then takes over', async () => {
  const dirs = makeKubeletDirs();
  const lockFile = join(dirs.dir, 'kubelet.lock');
  writeFileSync(join(dirs.manifests, 'p.json'), manifest('locked', TEST_IMAGES.busybox));
  const first = start(dirs, [`--lock-file=${lockFile}`, '--exit-on-lock-contention']);
  await waitFor(
    'first agent runs the pod',
    60_000,
    async () => ((await getPods(first)).some((p) => p.status?.phase === 'Running') ? true : undefined),
    200,
  );
  const second = start(dirs, [`--lock-file=${lockFile}`]);
  assert.equal(await exitOf(first.child), 0, 'the first agent exits cleanly');
  assert.match(readFileSync(first.logFile, 'utf8'), /lock file contention/);
  await waitFor(
    'second agent has the lock and serves the pod',
    60_000,
    async () => ((await getPods(second)).some((p) => p.status?.phase === 'Running') ? true : undefined),
    200,
  );
  const log2 = readFileSync(second.logFile, 'utf8');
  assert.match(log2, /Acquired the lock file/);
  await stopKubelet(second);
  rmSync(dirs.dir, { recursive: true, force: true });
});
