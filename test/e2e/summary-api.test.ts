/**
 * /stats/summary and /metrics against real containerd: the real CLI runs a static pod that writes
 * into its emptyDir, its writable layer and its log; the Summary API reports the node's system
 * containers (this agent, containerd) and network, the pod's network (from the sandbox's
 * namespace), the container's rootfs (CRI writable layer) and logs, the pod's volume and
 * ephemeral storage; /metrics counts what the agent did (CRI operations, started pods and
 * containers, node name).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint, TEST_IMAGES } from '../support/containerd.js';
import {
  getPods,
  httpGet,
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const NS = `summary-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const endpoint = await runtimeEndpoint();
const { runtime } = connectRuntime(endpoint);
const { dir, manifests } = makeKubeletDirs();
/** Static pods are named <name>-<node name>. */
const POD = 'stats-e2e-node';
const MiB = 1024 * 1024;
let kubelet: KubeletProcess | undefined;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Summary API replies, read field by field
type Json = any;

before(async () => {
  writeFileSync(
    join(manifests, 'stats.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stats', namespace: NS },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes: [{ name: 'cache', emptyDir: {} }],
        containers: [
          {
            name: 'writer',
            image: TEST_IMAGES.busybox,
            imagePullPolicy: 'IfNotPresent',
            volumeMounts: [{ name: 'cache', mountPath: '/cache' }],
            // 2 MiB into the emptyDir, 1 MiB into the writable layer, some log lines; then wait.
            command: [
              'sh',
              '-c',
              "trap 'exit 0' TERM; dd if=/dev/zero of=/cache/blob bs=1024 count=2048; dd if=/dev/zero of=/layer-blob bs=1024 count=1024; for i in 1 2 3 4 5; do echo log-line-$i; done; sleep 3600 & wait",
            ],
          },
        ],
      },
    }),
  );
  kubelet = startKubelet({ dir, manifests, endpoint, extraArgs: ['--housekeeping-interval=1s'] });
  await waitFor(
    'the writer running',
    90_000,
    async () => {
      const pod = (await getPods(kubelet!)).find((p) => p.metadata?.name === POD);
      return pod?.status?.containerStatuses?.[0]?.state?.running ? true : undefined;
    },
    250,
  );
});

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  await removeTestPods(runtime, { namespace: NS });
  runtime.close();
});

async function summary(): Promise<Json> {
  const r = await httpGet(kubelet!.readOnlyPort!, '/stats/summary');
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body);
}

/** The pod once a stats pass has seen the files written (they are written right after start). */
async function podStats(): Promise<Json> {
  return waitFor(
    'pod stats with volume, rootfs and logs',
    60_000,
    async () => {
      const p = (await summary()).pods.find((x: Json) => x.podRef.name === POD && x.podRef.namespace === NS);
      const c = p?.containers?.find((x: Json) => x.name === 'writer');
      const vol = p?.volume?.find((v: Json) => v.name === 'cache');
      return vol?.usedBytes >= 2 * MiB && c?.rootfs?.usedBytes >= MiB && c?.logs?.usedBytes > 0 ? p : undefined;
    },
    500,
  );
}

test('node: systemContainers kubelet and runtime with cpu and memory; network with interfaces', async () => {
  const node = (await summary()).node;
  const names = (node.systemContainers ?? []).map((c: Json) => c.name);
  assert.ok(names.includes('kubelet'), `systemContainers: ${JSON.stringify(names)}`);
  assert.ok(
    names.includes('runtime'),
    `systemContainers (containerd listens on ${endpoint}): ${JSON.stringify(names)}`,
  );
  const self = node.systemContainers.find((c: Json) => c.name === 'kubelet');
  assert.ok(
    self.cpu.usageCoreNanoSeconds > 0 && self.memory.workingSetBytes > 0,
    `kubelet system container ${JSON.stringify(self)}`,
  );
  for (const c of node.systemContainers) {
    assert.ok(c.startTime && c.memory?.time, `${c.name}: startTime and memory`);
    assert.ok(c.memory.usageBytes > 0 || c.memory.workingSetBytes >= 0, `${c.name}: memory numbers`);
  }
  assert.ok(node.network?.interfaces?.length > 0, 'node.network.interfaces');
  for (const i of node.network.interfaces)
    assert.ok(!i.name.startsWith('veth') && i.name !== 'lo', `interface ${i.name} listed`);
});

test('pod: network from its namespace, volume, container rootfs and logs, ephemeral-storage', async () => {
  const p = await podStats();
  const c = p.containers.find((x: Json) => x.name === 'writer');
  assert.ok(c.rootfs.usedBytes >= MiB && c.rootfs.capacityBytes > 0, `rootfs ${JSON.stringify(c.rootfs)}`);
  assert.ok(c.logs.usedBytes > 0 && c.logs.inodesUsed >= 1, `logs ${JSON.stringify(c.logs)}`);
  const vol = p.volume.find((v: Json) => v.name === 'cache');
  assert.ok(vol.usedBytes >= 2 * MiB && vol.capacityBytes > 0 && vol.inodesUsed >= 2, `volume ${JSON.stringify(vol)}`);
  const eph = p['ephemeral-storage'];
  assert.ok(
    eph.usedBytes >= c.rootfs.usedBytes + vol.usedBytes,
    `ephemeral-storage ${JSON.stringify(eph)} counts rootfs, logs and the emptyDir`,
  );
  // The pod's own namespace: its eth0 (CNI), not the node's interfaces.
  assert.equal(p.network?.name, 'eth0', `pod network ${JSON.stringify(p.network)}`);
  const nodeNames = new Set(((await summary()).node.network?.interfaces ?? []).map((i: Json) => i.name));
  assert.ok(p.network.interfaces.every((i: Json) => i.name === 'eth0' || !nodeNames.has(i.name)));
});

test('only_cpu_and_memory leaves the storage and network sections out', async () => {
  const r = JSON.parse((await httpGet(kubelet!.readOnlyPort!, '/stats/summary?only_cpu_and_memory=true')).body);
  const p = r.pods.find((x: Json) => x.podRef.name === POD);
  assert.ok(p?.cpu && p.memory);
  for (const k of ['network', 'volume', 'ephemeral-storage']) assert.equal(k in p, false, k);
  assert.equal('rootfs' in p.containers[0], false);
  assert.equal('network' in r.node, false);
});

test('/metrics counts the CRI operations, started pods and containers, and names the node', async () => {
  // desired/active pods are set by housekeeping (every 2 s, as upstream's HandlePodCleanups): wait for one.
  const text = await waitFor(
    'housekeeping set kubelet_desired_pods',
    30_000,
    async () => {
      const t = (await httpGet(kubelet!.readOnlyPort!, '/metrics')).body;
      return Number(/^kubelet_desired_pods\{static="true"\} (\S+)$/m.exec(t)?.[1] ?? 0) >= 1 ? t : undefined;
    },
    250,
  );
  const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
  assert.equal(value(/^kubelet_node_name\{node="e2e-node"\} (\S+)$/m), 1);
  for (const op of [
    'list_podsandbox',
    'list_containers',
    'run_podsandbox',
    'create_container',
    'start_container',
    'version',
    'status',
  ]) {
    assert.ok(
      value(new RegExp(`^kubelet_runtime_operations_total\\{operation_type="${op}"\\} (\\S+)$`, 'm')) >= 1,
      `runtime operation ${op}`,
    );
    assert.ok(
      value(
        new RegExp(`^kubelet_runtime_operations_duration_seconds_count\\{operation_type="${op}"\\} (\\S+)$`, 'm'),
      ) >= 1,
      `duration of ${op}`,
    );
  }
  assert.ok(value(/^kubelet_started_pods_total (\S+)$/m) >= 1);
  assert.ok(value(/^kubelet_started_containers_total\{container_type="container"\} (\S+)$/m) >= 1);
  assert.ok(value(/^kubelet_pod_worker_duration_seconds_count\{operation_type="create"\} (\S+)$/m) >= 1);
  assert.ok(value(/^kubelet_pod_start_sli_duration_seconds_count\{first_with_network="true"\} (\S+)$/m) >= 1);
  assert.ok(value(/^kubelet_run_podsandbox_duration_seconds_count\{runtime_handler=""\} (\S+)$/m) >= 1);
  assert.ok(value(/^kubelet_desired_pods\{static="true"\} (\S+)$/m) >= 1);
  assert.ok(value(/^kubelet_cgroup_manager_duration_seconds_count\{operation_type="create"\} (\S+)$/m) >= 1);
});
