/**
 * Eviction against real containerd with a threshold set relative to this machine: memory.available
 * must stay above the node's whole capacity (in whole MiB), so the kubelet is under memory
 * pressure from its first monitoring pass. The BestEffort pod using memory above its (zero) request is evicted
 * first, reported Failed/Evicted with a message naming the signal, counted in kubelet_evictions;
 * a BestEffort pod arriving under the pressure is refused at admission.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { TEST_IMAGES } from '../support/containerd.js';
import {
  agentTestContext,
  getPods,
  httpGet,
  startKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const NS = `e2e-evict-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
let kubelet: KubeletProcess | undefined;
// Leaves containerd as it was found: the after() hook removes every pod of this file's namespace.
const { endpoint, dir, manifests } = await agentTestContext(NS, () => kubelet);

function manifest(name: string, containers: object[]): void {
  writeFileSync(
    join(manifests, `${name}.json`),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: { terminationGracePeriodSeconds: 1, restartPolicy: 'Never', containers },
    }),
  );
}
const c = (name: string, cmd: string, resources?: object) => ({
  name,
  image: TEST_IMAGES.busybox,
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c', cmd],
  ...(resources ? { resources } : {}),
});
const byName = (pods: Pod[], name: string) => pods.find((p) => p.metadata?.name === `${name}-e2e-node`);

test('memory pressure evicts the pod using most memory above its request, and refuses new BestEffort pods', async () => {
  // 40 MiB of shared memory (charged to the writer's memory cgroup, in its working set), written
  // at once: far more above its (zero) memory request than 'guarded'.
  manifest('hog', [
    c('hog', "dd if=/dev/zero of=/dev/shm/hog bs=1M count=40 2>/dev/null; trap 'exit 0' TERM; sleep 3600 & wait"),
  ]);
  manifest('guarded', [c('quiet', "trap 'exit 0' TERM; sleep 3600 & wait", { requests: { cpu: '10m' } })]);
  // At most the capacity: a hard threshold above it is a reservation larger than the capacity,
  // which stops the agent at start (upstream validateNodeAllocatable).
  const capacityMi = Math.floor(totalmem() / 2 ** 20);
  kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    extraArgs: [
      `--eviction-hard=memory.available<${capacityMi}Mi`,
      '--housekeeping-interval=3s',
      '--eviction-pressure-transition-period=1m',
    ],
  });
  const hog = await waitFor(
    'hog evicted',
    60_000,
    async () => {
      const p = byName(await getPods(kubelet!), 'hog');
      return p?.status?.reason === 'Evicted' ? p : undefined;
    },
    250,
  );
  assert.equal(hog.status!.phase, 'Failed');
  assert.match(
    hog.status!.message ?? '',
    /^The node was low on resource: memory\. Threshold quantity: \d+Mi, available: \d+Ki\. Container hog was using \d+Ki, request is 0, has larger consumption of memory\. Eviction signal: memory\.available\.$/,
  );
  assert.ok(hog.status!.conditions?.some((x) => x.type === 'DisruptionTarget' && x.status === 'True'));
  const evictedEvents = readFileSync(kubelet.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"reason":"Evicted"'));
  assert.match(evictedEvents[0] ?? '', new RegExp(`Pod/${NS}/hog-e2e-node`), 'the first pod evicted is the hog');

  manifest('late', [c('late', 'sleep 3600')]);
  const late = await waitFor(
    'late BestEffort pod refused',
    30_000,
    async () => {
      const p = byName(await getPods(kubelet!), 'late');
      return p?.status?.phase === 'Failed' ? p : undefined;
    },
    250,
  );
  assert.equal(late.status!.reason, 'Evicted');
  assert.match(late.status!.message ?? '', /The node had condition: \[MemoryPressure\]/);
  const m = await httpGet(kubelet.readOnlyPort, '/metrics');
  assert.match(m.body, /^kubelet_evictions\{eviction_signal="memory.available"\} [1-9]/m);
});
