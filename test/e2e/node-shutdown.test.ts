/**
 * Graceful node shutdown through the real CLI: SIGPWR announces the node's shutdown; pods are
 * terminated non-critical first within shutdownGracePeriod and end Failed/Terminated.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint, TEST_IMAGES } from '../support/containerd.js';
import {
  getPods,
  makeKubeletDirs,
  randomPort,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const NS = `shut-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const endpoint = await runtimeEndpoint();
const { runtime } = connectRuntime(endpoint);
const dirs = makeKubeletDirs();
let kubelet: KubeletProcess | undefined;

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  await removeTestPods(runtime, { namespace: NS });
  runtime.close();
});

function manifest(name: string, extra: object, script: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      hostNetwork: true,
      terminationGracePeriodSeconds: 30,
      ...extra,
      containers: [
        { name: 'c', image: TEST_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script] },
      ],
    },
  });
}

test('SIGPWR: non-critical pods first (grace capped by the budget), then critical ones; all end Failed/Terminated', async () => {
  // "stubborn" ignores SIGTERM: only the capped grace period (4 s - 2 s = 2 s) ends it.
  writeFileSync(
    join(dirs.manifests, 'stubborn.json'),
    manifest('stubborn', {}, "trap '' TERM; while true; do sleep 1; done"),
  );
  writeFileSync(
    join(dirs.manifests, 'critical.json'),
    manifest('critical', { priorityClassName: 'system-node-critical' }, "trap 'exit 0' TERM; sleep 3600 & wait"),
  );
  const readOnlyPort = randomPort();
  const healthzPort = randomPort();
  const config = join(dirs.dir, 'shutdown-config.yaml');
  writeFileSync(
    config,
    [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      `staticPodPath: ${dirs.manifests}`,
      `containerRuntimeEndpoint: ${endpoint}`,
      `readOnlyPort: ${readOnlyPort}`,
      'address: 127.0.0.1',
      `healthzPort: ${healthzPort}`,
      `podLogsDir: ${join(dirs.dir, 'logs')}`,
      'shutdownGracePeriod: 4s',
      'shutdownGracePeriodCriticalPods: 2s',
      'failCgroupV1: false',
      '',
    ].join('\n'),
  );
  // The later --config wins over the one startKubelet writes.
  kubelet = startKubelet({ ...dirs, endpoint, readOnlyPort, healthzPort, extraArgs: [`--config=${config}`] });
  await waitFor(
    'both pods running',
    60_000,
    async () => {
      const pods = (await getPods(kubelet!)).filter(
        (p) => p.metadata?.namespace === NS && p.status?.containerStatuses?.[0]?.state?.running,
      );
      return pods.length === 2 ? true : undefined;
    },
    200,
  );
  const t0 = Date.now();
  process.kill(kubelet.pid, 'SIGPWR');
  await waitFor(
    'both pods Failed/Terminated',
    20_000,
    async () => {
      const pods = (await getPods(kubelet!)).filter((p) => p.metadata?.namespace === NS);
      return pods.length === 2 && pods.every((p) => p.status?.phase === 'Failed' && p.status.reason === 'Terminated')
        ? true
        : undefined;
    },
    200,
  );
  await waitFor(
    'every container stopped',
    20_000,
    async () => {
      const live = (await runtime.listContainers({ state: 'CONTAINER_RUNNING' })).filter(
        (c) => c.labels['io.kubernetes.pod.namespace'] === NS,
      );
      return live.length === 0 ? true : undefined;
    },
    100,
  );
  const ms = Date.now() - t0;
  assert.ok(ms >= 1500, `the stubborn pod took its capped grace period: ${ms} ms`);
  assert.ok(ms < 4000 + 3000, `within shutdownGracePeriod (+ slack): ${ms} ms`);
  const lines = readFileSync(kubelet.logFile, 'utf8')
    .split('\n')
    .filter((l) => /Shutdown manager killing pod/.test(l));
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /stubborn.*"gracePeriodSeconds":2/);
  assert.match(lines[1]!, /critical.*"critical":true/);
  // A pod that arrives while the node shuts down is not admitted.
  writeFileSync(join(dirs.manifests, 'late.json'), manifest('late', {}, 'sleep 3600'));
  const late = await waitFor(
    'late pod rejected',
    20_000,
    async () =>
      (await getPods(kubelet!)).find((p) => p.metadata?.name === 'late-e2e-node' && p.status?.phase === 'Failed'),
    200,
  );
  assert.equal(late.status?.reason, 'NodeShutdown');
});
