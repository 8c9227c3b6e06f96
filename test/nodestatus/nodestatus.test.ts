/**
 * Node registration, status and lease against the test apiserver with injected node facts:
 * the registered shape, Ready=False with the reason while the runtime is down, patches only on
 * change (or when the report frequency is due), re-registration after the Node is deleted, and
 * the lease's holder, owner and renewal. Also the status manager's API sync and the event sink.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClients } from '../../src/apiclient/index.js';
import {
  createLeaseController,
  createNodeStatusManager,
  parseTaints,
  type NodeStatusDeps,
} from '../../src/nodestatus/index.js';
import { computeNodeInfo } from '../../src/node/node-info.js';
import { createApiStatusManager, createStatusManager } from '../../src/status/index.js';
import { createApiserverSink } from '../../src/events/index.js';
import type { Pod } from '../../src/api/types.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

/** The fields of the stored Node, Lease and Events this file reads (plain JSON, as the store keeps them). */
interface StoredNode {
  metadata: { uid: string; labels: Record<string, string> };
  spec: { taints: unknown[] };
  status: {
    capacity: Record<string, string>;
    allocatable: Record<string, string>;
    conditions: { type: string; status: string; message: string }[];
    nodeInfo: { containerRuntimeVersion: string };
  };
}
interface StoredLease {
  metadata: { ownerReferences: { uid: string }[] };
  spec: { holderIdentity: string; renewTime: string };
}
interface StoredEvent {
  reason: string;
  count: number;
  source: { component: string };
}

const dir = testTempDir('kts-nodestatus-');
const api = await startTestApiserver();
const clients = await createApiClients(api.kubeconfig(dir));
after(async () => {
  clients.close();
  await api.stop();
});

const statusPatches = () =>
  api.requests.filter((r) => r.method === 'PATCH' && r.path === '/api/v1/nodes/n1/status').length;

test('registers, reports Ready=False with the reason, then Ready; patches only on change; re-registers', async () => {
  let errors = ['container runtime is down: connection refused'];
  const deps: NodeStatusDeps = {
    client: clients.main,
    heartbeat: clients.heartbeat,
    nodeIPs: ['10.0.0.5'],
    kubeletPort: 10250,
    registerNode: true,
    node: computeNodeInfo({
      nodeName: 'n1',
      maxPods: 50,
      nodeLabels: { role: 'x' },
      capacity: { milliCPU: 4000, memory: 8 * 1024 ** 3 },
      systemReserved: { memory: '1Gi' },
      evictionHard: { 'memory.available': '100Mi' },
      hugePages: [
        { pageSize: 2 * 1024 ** 2, pages: 3 },
        { pageSize: 1024 ** 3, pages: 0 },
      ],
    }),
    taints: parseTaints('a=b:NoSchedule').taints,
    rootDir: dir,
    kubeletVersion: 'v0-test',
    runtimeVersion: async () => 'containerd://1.6.20',
    images: async () => [{ names: ['img:1'], sizeBytes: 10 }],
    readinessErrors: () => errors,
    updateFrequencyMs: 100,
    reportFrequencyMs: 60_000,
  };
  const m = createNodeStatusManager(deps);
  m.start();
  await m.registered();
  const get = () => api.store.get('nodes', undefined, 'n1') as unknown as StoredNode;
  const n = get();
  assert.equal(n.metadata.labels.role, 'x');
  assert.deepEqual(n.spec.taints, [{ key: 'a', value: 'b', effect: 'NoSchedule' }]);
  assert.deepEqual(
    { cpu: n.status.capacity.cpu, memory: n.status.capacity.memory, pods: n.status.capacity.pods },
    { cpu: '4', memory: '8388608Ki', pods: '50' },
  );
  assert.equal(n.status.allocatable.memory, `${(8 * 1024 ** 3 - 1024 ** 3 - 100 * 1024 ** 2) / 1024}Ki`);
  // The host's huge page pools (nr_hugepages × page size), as upstream's capacity and allocatable.
  assert.equal(n.status.capacity['hugepages-2Mi'], '6Mi');
  assert.equal(n.status.capacity['hugepages-1Gi'], '0');
  assert.equal(n.status.allocatable['hugepages-2Mi'], '6Mi');
  const notReady = n.status.conditions.find((c) => c.type === 'Ready')!;
  assert.equal(notReady.status, 'False');
  assert.match(notReady.message, /container runtime is down/);
  assert.equal(n.status.nodeInfo.containerRuntimeVersion, 'containerd://1.6.20');
  errors = [];
  await waitFor(
    'Ready',
    5000,
    () => (get().status.conditions.find((c) => c.type === 'Ready')?.status === 'True' ? true : undefined),
    20,
  );
  // Unchanged status and report frequency not due: no more patches.
  const before = statusPatches();
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(statusPatches(), before);
  // The Node is deleted: it is registered again.
  await api.call('DELETE', '/api/v1/nodes/n1');
  await waitFor('re-registered', 5000, () => get(), 20);
  const lease = createLeaseController({
    heartbeat: clients.heartbeat,
    nodeName: 'n1',
    leaseDurationSeconds: 40,
    nodeUID: () => m.nodeUID(),
  });
  await lease.renew();
  const l1 = api.store.get('leases', 'kube-node-lease', 'n1') as unknown as StoredLease;
  assert.equal(l1.spec.holderIdentity, 'n1');
  assert.equal(l1.metadata.ownerReferences[0]?.uid, get().metadata.uid);
  await new Promise((r) => setTimeout(r, 5));
  await lease.renew();
  assert.notEqual(
    (api.store.get('leases', 'kube-node-lease', 'n1') as unknown as StoredLease).spec.renewTime,
    l1.spec.renewTime,
  );
  m.stop();
});

test('status sync: patch on change with the UID, never regress a terminal phase, final delete', async () => {
  const created = await api.call('POST', '/api/v1/namespaces/s/pods', {
    metadata: { name: 'p' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
  });
  const pod = created.body as unknown as Pod;
  const sm = createApiStatusManager({ client: clients.main, base: createStatusManager(), retryMs: 50 });
  sm.setPodStatus(pod, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
  await waitFor(
    'Running on the API',
    5000,
    () => ((api.store.get('pods', 's', 'p') as Pod).status?.phase === 'Running' ? true : undefined),
    20,
  );
  const patches = () => api.requests.filter((r) => r.path === '/api/v1/namespaces/s/pods/p/status').length;
  const n = patches();
  sm.setPodStatus(pod, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(patches(), n, 'an unchanged status is not patched again');
  // The API says Succeeded: a late non-terminal status does not move it back.
  const done = { ...pod, status: { phase: 'Succeeded' } } as Pod;
  sm.setPodStatus(done, { phase: 'Running' });
  await new Promise((r) => setTimeout(r, 150));
  assert.equal((api.store.get('pods', 's', 'p') as Pod).status?.phase, 'Succeeded');
  // Graceful delete on the API, then the pod terminates: the kubelet removes it with grace 0.
  const deleted = await api.call('DELETE', '/api/v1/namespaces/s/pods/p', { gracePeriodSeconds: 30 });
  sm.setPodStatus(deleted.body as unknown as Pod, {
    phase: 'Failed',
    containerStatuses: [
      { name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 137 } } },
    ],
  });
  await waitFor('pod removed', 5000, () => (api.store.get('pods', 's', 'p') ? undefined : true), 20);
  sm.stop();
});

test('event sink: repeats aggregate into count/lastTimestamp; the bucket limits the rate', async () => {
  const sink = createApiserverSink({ client: clients.main, nodeName: 'n1', qps: 20, burst: 2 });
  const ev = (reason: string, message: string) => ({
    involvedObject: { kind: 'Pod' as const, name: 'p', namespace: 'ev', uid: 'u1' },
    type: 'Normal' as const,
    reason,
    message,
    timestamp: new Date(),
  });
  const t0 = Date.now();
  for (let i = 0; i < 3; i++) sink.write(ev('BackOff', 'Back-off restarting failed container'));
  for (let i = 0; i < 3; i++) sink.write(ev(`R${i}`, 'm'));
  await waitFor('all posted', 5000, () => (sink.posted === 6 ? true : undefined), 10);
  assert.ok(Date.now() - t0 >= 150, 'six requests with burst 2 at 20 qps take at least 200 ms');
  const events = api.store.list('events', 'ev') as unknown as StoredEvent[];
  assert.equal(events.length, 4);
  const backoff = events.find((e) => e.reason === 'BackOff');
  assert.equal(backoff?.count, 3);
  assert.equal(backoff?.source.component, 'kubelet');
});

test('dual-stack node IPs, runtime handlers and features reach the Node through the status patch', async () => {
  let handlers = [{ name: 'runc', supportsRecursiveReadOnlyMounts: true, supportsUserNamespaces: false }];
  let features: { supplementalGroupsPolicy: boolean } | undefined = undefined;
  const m = createNodeStatusManager({
    client: clients.main,
    heartbeat: clients.heartbeat,
    nodeIPs: ['192.0.2.20', '2001:db8::20'],
    kubeletPort: 10250,
    registerNode: true,
    node: computeNodeInfo({ nodeName: 'n2', maxPods: 10, capacity: { milliCPU: 1000, memory: 1024 ** 3 } }),
    taints: [],
    rootDir: dir,
    kubeletVersion: 'v0-test',
    runtimeVersion: async () => 'containerd://1.7.0',
    images: async () => [],
    runtimeHandlers: () => handlers,
    runtimeFeatures: () => features,
    readinessErrors: () => [],
    updateFrequencyMs: 50,
    reportFrequencyMs: 60_000,
  });
  m.start();
  await m.registered();
  type Shape = { metadata: { annotations?: Record<string, string> }; status: Record<string, unknown> };
  const get = () => api.store.get('nodes', undefined, 'n2') as unknown as Shape;
  assert.deepEqual(get().status.addresses, [
    { type: 'InternalIP', address: '192.0.2.20' },
    { type: 'InternalIP', address: '2001:db8::20' },
    { type: 'Hostname', address: 'n2' },
  ]);
  assert.deepEqual(get().status.runtimeHandlers, [
    { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: false } },
  ]);
  assert.equal(get().status.features, undefined, 'no features from the runtime: none on the node');
  // Someone merged an address by type and left a stale annotation: the next patch puts both back.
  await api.call('PATCH', '/api/v1/nodes/n2', {
    metadata: { annotations: { 'alpha.kubernetes.io/provided-node-ip': '192.0.2.99' } },
  });
  handlers = [
    { name: '', supportsRecursiveReadOnlyMounts: true, supportsUserNamespaces: true },
    { name: 'runc', supportsRecursiveReadOnlyMounts: true, supportsUserNamespaces: true },
  ];
  features = { supplementalGroupsPolicy: true };
  await waitFor('features', 5000, () => (get().status.features ? true : undefined), 20);
  assert.deepEqual(get().status.features, { supplementalGroupsPolicy: true });
  assert.equal((get().status.runtimeHandlers as unknown[]).length, 2);
  assert.equal((get().status.addresses as unknown[]).length, 3, 'the addresses list is replaced, not merged by type');
  await waitFor(
    'stale annotation removed',
    5000,
    () => (get().metadata.annotations?.['alpha.kubernetes.io/provided-node-ip'] === undefined ? true : undefined),
    20,
  );
  m.stop();
});
