/**
 * Extended resources in the Node status. Cases from upstream pkg/kubelet/kubelet_node_status_test.go
 * (TestReconcileExtendedResource: a recreated node's extended resources zeroed at registration;
 * TestUpdateNewNodeStatus' device plugin capacity and allocatable) and
 * pkg/kubelet/cm/devicemanager/manager_test.go TestUpdateCapacityAllocatable (a removed resource
 * stays at capacity 0).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClients } from '../../src/apiclient/index.js';
import { createNodeStatusManager, nodeStatus, type NodeStatusDeps } from '../../src/nodestatus/index.js';
import { zeroedExtendedResources } from '../../src/nodestatus/node-object.js';
import { ExtendedResources } from '../../src/devicemanager/index.js';
import type { DeviceCapacity } from '../../src/devicemanager/index.js';
import { computeNodeInfo } from '../../src/node/node-info.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const R = 'example.com/dev';
const dir = testTempDir('kts-extended-');

function baseDeps(name: string): Omit<NodeStatusDeps, 'client' | 'heartbeat'> {
  return {
    nodeIPs: ['10.0.0.5'],
    kubeletPort: 10250,
    registerNode: true,
    node: computeNodeInfo({
      nodeName: name,
      maxPods: 10,
      capacity: { milliCPU: 1000, memory: 2 ** 30 },
      hugePages: [],
    }),
    taints: [],
    rootDir: dir,
    kubeletVersion: 'v0-test',
    runtimeVersion: async () => 'containerd://2.0.0',
    images: async () => [],
    readinessErrors: () => [],
    updateFrequencyMs: 60_000,
    reportFrequencyMs: 600_000,
  };
}

test('ExtendedResources: counts, a removed resource stays 0, a returning one counts again (TestUpdateCapacityAllocatable)', () => {
  const steps: Array<{ got: DeviceCapacity; capacity: Record<string, number>; allocatable: Record<string, number> }> = [
    {
      got: { capacity: { [R]: 3 }, allocatable: { [R]: 2 }, removed: [] },
      capacity: { [R]: 3 },
      allocatable: { [R]: 2 },
    },
    { got: { capacity: {}, allocatable: {}, removed: [R] }, capacity: { [R]: 0 }, allocatable: { [R]: 0 } },
    { got: { capacity: {}, allocatable: {}, removed: [] }, capacity: { [R]: 0 }, allocatable: { [R]: 0 } },
    {
      got: { capacity: { [R]: 1 }, allocatable: { [R]: 1 }, removed: [] },
      capacity: { [R]: 1 },
      allocatable: { [R]: 1 },
    },
  ];
  let i = 0;
  const tracker = new ExtendedResources({ getCapacity: () => structuredClone(steps[i]!.got) });
  const changes: number[] = [];
  tracker.onChange(() => changes.push(i));
  for (; i < steps.length; i++) {
    const { capacity, allocatable } = tracker.refresh();
    assert.deepEqual({ capacity, allocatable }, { capacity: steps[i]!.capacity, allocatable: steps[i]!.allocatable });
  }
  assert.deepEqual(changes, [0, 1, 3], 'a listener hears each change, not a repeat');
});

test('node status: device counts in capacity and allocatable (DecimalSI), healthy only in allocatable', () => {
  const status = nodeStatus({
    deps: {
      ...baseDeps('n0'),
      client: undefined as never,
      heartbeat: undefined as never,
      extendedResources: () => ({
        capacity: { [R]: 3, 'example.com/gone': 0 },
        allocatable: { [R]: 2, 'example.com/gone': 0 },
      }),
    },
    runtimeVersion: undefined,
    images: [],
    previous: undefined,
    now: new Date(0),
  });
  assert.equal(status.capacity?.[R], '3');
  assert.equal(status.allocatable?.[R], '2');
  assert.equal(status.capacity?.['example.com/gone'], '0');
  assert.equal(status.allocatable?.['example.com/gone'], '0');
});

test('zeroedExtendedResources (TestReconcileExtendedResource): only extended names, capacity and allocatable', () => {
  const node = { status: { capacity: { cpu: '2', [R]: '4', 'hugepages-2Mi': '0' }, allocatable: { [R]: '4' } } };
  assert.deepEqual(zeroedExtendedResources(node), { capacity: { [R]: '0' }, allocatable: { [R]: '0' } });
  assert.equal(zeroedExtendedResources({ status: { capacity: { cpu: '2' } } }), undefined);
});

const api = await startTestApiserver();
const clients = await createApiClients(api.kubeconfig(dir));
after(async () => {
  clients.close();
  await api.stop();
});

interface StoredNode {
  status: { capacity: Record<string, string>; allocatable: Record<string, string> };
}

test('registration of an existing Node on a recreated node zeroes its extended resources; poke updates promptly', async () => {
  const created = await api.call('POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n2' },
    status: { capacity: { [R]: '4', 'other.io/x': '2' }, allocatable: { [R]: '4', 'other.io/x': '2' } },
  });
  assert.ok(created.status < 300, `created: ${created.status}`);
  const extended = { capacity: { [R]: '4', 'other.io/x': '2' }, allocatable: { [R]: '4', 'other.io/x': '2' } };
  await api.call('PATCH', '/api/v1/nodes/n2/status', { status: extended }, 'application/merge-patch+json');
  let counts = { capacity: {} as Record<string, number>, allocatable: {} as Record<string, number> };
  const m = createNodeStatusManager({
    ...baseDeps('n2'),
    client: clients.main,
    heartbeat: clients.heartbeat,
    resetExtendedResources: true,
    extendedResources: () => counts,
  });
  m.start();
  await m.registered();
  const get = () => api.store.get('nodes', undefined, 'n2') as unknown as StoredNode;
  await waitFor('zeroed', 5000, () => (get().status.capacity[R] === '0' ? true : undefined), 20);
  assert.equal(get().status.allocatable[R], '0');
  assert.equal(get().status.capacity['other.io/x'], '0', 'every extended resource, as upstream');
  // The plugin registers: its devices show at the next pass, which poke() brings forward.
  counts = { capacity: { [R]: 2 }, allocatable: { [R]: 1 } };
  m.poke();
  await waitFor('devices shown', 5000, () => (get().status.capacity[R] === '2' ? true : undefined), 20);
  assert.equal(get().status.allocatable[R], '1');
  m.stop();
});
