/**
 * Extended resources at admission. Cases from upstream pkg/kubelet/lifecycle/predicate_test.go
 * (TestRemoveMissingExtendedResources, TestGeneralPredicates' InsufficientResourceError) and
 * pkg/kubelet/cm/devicemanager (the allocator errors that admission turns into
 * UnexpectedAdmissionError). One deliberate difference: a resource the node does not have at
 * all refuses the pod (capacity 0) where upstream drops the request and admits it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import { canAdmitPod, podExtendedRequests } from '../../src/kubelet/admission.js';
import { deviceAdmission } from '../../src/kubelet/device-admission.js';
import { computeNodeInfo } from '../../src/node/node-info.js';
import { DeviceAllocationError } from '../../src/errors.js';

const node = computeNodeInfo({
  nodeName: 'n',
  maxPods: 110,
  capacity: { milliCPU: 4000, memory: 2 ** 33 },
  hugePages: [],
});
const R = 'foo.com/bar';

type Res = Record<string, string>;
const ctr = (name: string, requests: Res = {}, limits: Res = {}, extra: Partial<Container> = {}): Container => ({
  name,
  image: 'x',
  resources: { requests, limits },
  ...extra,
});
const pod = (uid: string, containers: Container[], initContainers: Container[] = []): Pod =>
  ({ metadata: { name: uid, namespace: 'ns', uid }, spec: { containers, initContainers } }) as Pod;

test('extended resources fit (predicate_test.go TestRemoveMissingExtendedResources, TestGeneralPredicates)', () => {
  const cases: Array<{
    name: string;
    pod: Pod;
    active?: Pod[];
    allocatable: Record<string, number>;
    want?: { reason: string; message: string };
  }> = [
    {
      name: 'requests for resources available in node should not be removed: admitted',
      pod: pod('a', [ctr('c', { [R]: '1' })]),
      allocatable: { [R]: 1 },
    },
    {
      name: 'requests for resources unavailable in node (upstream: removed, admitted): refused, capacity 0',
      pod: pod('a', [ctr('c', { [R]: '1' })]),
      allocatable: { 'foo.com/baz': 1 },
      want: {
        reason: `OutOf${R}`,
        message: `Node didn't have enough resource: ${R}, requested: 1, used: 0, capacity: 0`,
      },
    },
    {
      name: 'requests for extended resources with Allocatable 0 should not be removed: refused',
      pod: pod('a', [ctr('c', { [R]: '1' }, { [R]: '1' })]),
      allocatable: { [R]: 0 },
      want: {
        reason: `OutOf${R}`,
        message: `Node didn't have enough resource: ${R}, requested: 1, used: 0, capacity: 0`,
      },
    },
    {
      name: 'limits only (requests defaulted from limits, as the API does): counted',
      pod: pod('a', [ctr('c', {}, { [R]: '5' })]),
      allocatable: {},
      want: {
        reason: `OutOf${R}`,
        message: `Node didn't have enough resource: ${R}, requested: 5, used: 0, capacity: 0`,
      },
    },
    {
      name: 'InsufficientResourceError: used by the active pods',
      pod: pod('a', [ctr('c', { [R]: '1' })]),
      active: [pod('b', [ctr('c', { [R]: '2' })])],
      allocatable: { [R]: 2 },
      want: {
        reason: `OutOf${R}`,
        message: `Node didn't have enough resource: ${R}, requested: 1, used: 2, capacity: 2`,
      },
    },
    {
      name: 'native and hugepages resources are not extended resources',
      pod: pod('a', [ctr('c', { cpu: '1', memory: '1Mi' })]),
      allocatable: {},
    },
  ];
  for (const c of cases) {
    const r = canAdmitPod(c.pod, c.active ?? [], node, { extendedAllocatable: c.allocatable });
    if (!c.want) assert.equal(r.admit, true, c.name);
    else assert.deepEqual(r, { admit: false, ...c.want }, c.name);
  }
});

test('extended requests of a pod (resource.PodRequests: init containers and sidecars)', () => {
  const sidecar = (name: string, n: string) => ctr(name, { [R]: n }, {}, { restartPolicy: 'Always' });
  const cases: Array<{ name: string; pod: Pod; want: Record<string, number> }> = [
    { name: 'containers add up', pod: pod('a', [ctr('a', { [R]: '1' }), ctr('b', { [R]: '2' })]), want: { [R]: 3 } },
    {
      name: 'the largest init container wins over a smaller sum',
      pod: pod('a', [ctr('a', { [R]: '1' })], [ctr('i', { [R]: '4' })]),
      want: { [R]: 4 },
    },
    {
      name: 'sidecars add to the containers and to later init containers',
      pod: pod('a', [ctr('a', { [R]: '1' })], [sidecar('s', '2'), ctr('i', { [R]: '2' })]),
      want: { [R]: 4 },
    },
    { name: 'no extended resources', pod: pod('a', [ctr('a', { cpu: '1' })]), want: {} },
  ];
  for (const c of cases) assert.deepEqual(podExtendedRequests(c.pod), c.want, c.name);
});

test('the allocator: init containers then containers; an error is UnexpectedAdmissionError', async () => {
  const calls: string[] = [];
  const dm = {
    allocate: async (_p: Pod, c: Container) => {
      calls.push(c.name);
      if (c.name === 'boom')
        throw new DeviceAllocationError(`requested number of devices unavailable for ${R}. Requested: 2, Available: 1`);
    },
    sanitizeAllocatable: (_p: Pod, a: Readonly<Record<string, number>>) => ({ ...a, [R]: Math.max(a[R] ?? 0, 1) }),
  };
  const admission = deviceAdmission(dm, () => ({ [R]: 0 }));
  assert.deepEqual(await admission.allocate(pod('a', [ctr('c1'), ctr('c2')], [ctr('i1')])), { admit: true });
  assert.deepEqual(calls, ['i1', 'c1', 'c2']);
  // manager_test.go TestPodContainerDeviceAllocation's over-asking text, wrapped as GetPodAdmitResult does.
  assert.deepEqual(await admission.allocate(pod('b', [ctr('boom'), ctr('never')])), {
    admit: false,
    reason: 'UnexpectedAdmissionError',
    message: `Allocate failed due to requested number of devices unavailable for ${R}. Requested: 2, Available: 1, which is unexpected`,
  });
  assert.ok(!calls.includes('never'));
  // UpdatePluginResources: allocatable raised to what the pod holds (a restart before its plugin is back).
  assert.deepEqual(admission.extendedAllocatable(pod('a', [])), { [R]: 1 });
});
