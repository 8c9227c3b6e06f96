import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import { canAdmitPod, matchesNodeAffinity } from '../../src/kubelet/admission.js';
import { computeNodeInfo, goArch, thresholdBytes, type NodeInfo } from '../../src/node/node-info.js';

const Mi = 2 ** 20;
const Gi = 2 ** 30;

function node(): NodeInfo {
  return computeNodeInfo({
    nodeName: 'node-a',
    maxPods: 110,
    capacity: { milliCPU: 4000, memory: 8 * Gi },
    nodeLabels: { disk: 'ssd', zone: '3' },
  });
}

function ctr(name: string, cpu?: string, memory?: string, extra: Partial<Container> = {}): Container {
  const requests: Record<string, string> = {};
  if (cpu) requests.cpu = cpu;
  if (memory) requests.memory = memory;
  return { name, image: 'x', resources: { requests }, ...extra };
}

function pod(
  uid: string,
  containers: Container[],
  spec: Partial<NonNullable<Pod['spec']>> = {},
  labels?: Record<string, string>,
): Pod {
  return {
    metadata: { name: uid, namespace: 'ns', uid, ...(labels ? { labels } : {}) },
    spec: { containers, ...spec },
  } as Pod;
}

test('allocatable = capacity − systemReserved − kubeReserved − hard eviction threshold', () => {
  const n = computeNodeInfo({
    nodeName: 'n',
    maxPods: 10,
    capacity: { milliCPU: 4000, memory: 8 * Gi },
    systemReserved: { cpu: '500m', memory: '1Gi' },
    kubeReserved: { cpu: '0.25', memory: '512Mi' },
    evictionHard: { 'memory.available': '100Mi' },
    hugePages: [{ pageSize: 2 * Mi, pages: 4 }],
  });
  const huge = { 'hugepages-2Mi': 8 * Mi };
  assert.deepEqual(n.capacity, { milliCPU: 4000, memory: 8 * Gi, pods: 10, hugePages: huge });
  assert.deepEqual(n.allocatable, {
    milliCPU: 3250,
    memory: 8 * Gi - Gi - 512 * Mi - 100 * Mi,
    pods: 10,
    hugePages: huge,
  });
  const pct = computeNodeInfo({
    nodeName: 'n',
    maxPods: 10,
    capacity: { milliCPU: 1000, memory: 10 * Gi },
    evictionHard: { 'memory.available': '10%' },
  });
  // upstream's float32 percentage: 10% of 10Gi is 1073741840 there, so 16 bytes less than 9Gi.
  assert.equal(pct.allocatable.memory, 9 * Gi - 16);
  const over = computeNodeInfo({
    nodeName: 'n',
    maxPods: 10,
    capacity: { milliCPU: 1000, memory: Gi },
    systemReserved: { cpu: '2', memory: '2Gi' },
    hugePages: [],
  });
  assert.deepEqual(over.allocatable, { milliCPU: 0, memory: 0, pods: 10, hugePages: {} }, 'never negative');
  assert.equal(thresholdBytes(undefined, 100), 0);
  const host = computeNodeInfo({ nodeName: 'n', maxPods: 5 });
  assert.ok(host.capacity.milliCPU >= 1000 && host.capacity.memory > 0, 'capacity from the host by default');
});

test('node labels: hostname, os, arch (stable and beta) and --node-labels', () => {
  const n = node();
  assert.equal(n.labels['kubernetes.io/hostname'], 'node-a');
  assert.equal(n.labels['kubernetes.io/os'], 'linux');
  assert.equal(n.labels['kubernetes.io/arch'], goArch());
  assert.equal(n.labels['beta.kubernetes.io/os'], 'linux');
  assert.equal(n.labels.disk, 'ssd');
  assert.equal(goArch('x64'), 'amd64');
  assert.equal(goArch('arm64'), 'arm64');
});

test('OutOfpods: the pod count comes first', () => {
  const n = computeNodeInfo({ nodeName: 'n', maxPods: 2, capacity: { milliCPU: 1000, memory: Gi } });
  const r = canAdmitPod(pod('c', [ctr('a', '5')]), [pod('a', []), pod('b', [])], n);
  assert.deepEqual(r, {
    admit: false,
    reason: 'OutOfpods',
    message: "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
  });
});

test('OutOfcpu and OutOfmemory: requests against allocatable minus the active pods', () => {
  const n = node();
  const active = [pod('x', [ctr('a', '3', '6Gi')])];
  assert.deepEqual(canAdmitPod(pod('y', [ctr('a', '1', '1Gi')]), active, n), { admit: true });
  assert.deepEqual(canAdmitPod(pod('y', [ctr('a', '1500m')]), active, n), {
    admit: false,
    reason: 'OutOfcpu',
    message: "Node didn't have enough resource: cpu, requested: 1500, used: 3000, capacity: 4000",
  });
  const big = canAdmitPod(pod('y', [ctr('a', undefined, '64Ti')]), [], n);
  assert.equal(big.reason, 'OutOfmemory');
  assert.match(
    big.message!,
    /^Node didn't have enough resource: memory, requested: 70368744177664, used: 0, capacity: \d+$/,
  );
  assert.deepEqual(
    canAdmitPod(pod('y', [ctr('a')]), [pod('x', [ctr('a', '4', '8Gi')])], n),
    { admit: true },
    'a pod without requests always fits',
  );
});

test('NodePorts: the same hostPort, protocol and host IP (0.0.0.0 matches every IP) conflict', () => {
  const n = node();
  const withPort = (uid: string, hostPort: number, protocol?: string, hostIP?: string) =>
    pod(uid, [
      {
        name: 'a',
        image: 'x',
        ports: [{ containerPort: 80, hostPort, ...(protocol ? { protocol } : {}), ...(hostIP ? { hostIP } : {}) }],
      },
    ]);
  const active = [withPort('x', 8080)];
  const r = canAdmitPod(withPort('y', 8080), active, n);
  assert.deepEqual(r, {
    admit: false,
    reason: 'NodePorts',
    message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
  });
  assert.equal(canAdmitPod(withPort('y', 8080, 'UDP'), active, n).admit, true, 'other protocol');
  assert.equal(canAdmitPod(withPort('y', 8081), active, n).admit, true, 'other port');
  assert.equal(canAdmitPod(withPort('y', 8080, 'TCP', '10.0.0.1'), active, n).admit, false, '0.0.0.0 holds every IP');
  assert.equal(
    canAdmitPod(withPort('y', 9090, 'TCP', '10.0.0.1'), [withPort('x', 9090, 'TCP', '10.0.0.2')], n).admit,
    true,
    'different IPs',
  );
  assert.equal(
    canAdmitPod(withPort('y', 9090, 'TCP', '10.0.0.2'), [withPort('x', 9090, 'TCP', '10.0.0.2')], n).admit,
    false,
  );
});

test('NodeName and NodeAffinity (nodeSelector, required node affinity)', () => {
  const n = node();
  assert.deepEqual(canAdmitPod(pod('a', [ctr('a')], { nodeName: 'other' }), [], n), {
    admit: false,
    reason: 'NodeName',
    message: "Predicate NodeName failed: node(s) didn't match the requested node name",
  });
  assert.equal(canAdmitPod(pod('a', [ctr('a')], { nodeName: 'node-a' }), [], n).admit, true);
  assert.deepEqual(canAdmitPod(pod('a', [ctr('a')], { nodeSelector: { disk: 'hdd' } }), [], n), {
    admit: false,
    reason: 'NodeAffinity',
    message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
  });
  assert.equal(
    canAdmitPod(pod('a', [ctr('a')], { nodeSelector: { disk: 'ssd', 'kubernetes.io/hostname': 'node-a' } }), [], n)
      .admit,
    true,
  );
  const affinity = (terms: object[]) =>
    pod('a', [ctr('a')], {
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
    } as never);
  const m = (terms: object[]) => matchesNodeAffinity(affinity(terms), n);
  assert.equal(m([{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd', 'nvme'] }] }]), true);
  assert.equal(m([{ matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['ssd'] }] }]), false);
  assert.equal(m([{ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }]), true);
  assert.equal(
    m([
      {
        matchExpressions: [
          { key: 'zone', operator: 'Gt', values: ['2'] },
          { key: 'zone', operator: 'Lt', values: ['4'] },
        ],
      },
    ]),
    true,
  );
  assert.equal(
    m([
      { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] },
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] },
    ]),
    true,
    'terms are ORed',
  );
  assert.equal(m([{}]), false, 'an empty term matches nothing');
  assert.equal(
    canAdmitPod(affinity([{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }]), [], n).reason,
    'NodeAffinity',
  );
});

test('OS: spec.os.name must be linux; the kubernetes.io/os pod label must match the node', () => {
  const n = node();
  assert.deepEqual(canAdmitPod(pod('a', [ctr('a')], { os: { name: 'windows' } }), [], n), {
    admit: false,
    reason: 'PodOSNotSupported',
    message: "Failed to admit pod as the OS field doesn't match node OS",
  });
  assert.equal(canAdmitPod(pod('a', [ctr('a')], { os: { name: 'linux' } }), [], n).admit, true);
  assert.equal(
    canAdmitPod(pod('a', [ctr('a')], {}, { 'kubernetes.io/os': 'windows' }), [], n).reason,
    'PodOSSelectorNodeLabelDoesNotMatch',
  );
});

test('the first failing check decides, in upstream order', () => {
  const n = computeNodeInfo({ nodeName: 'n', maxPods: 1, capacity: { milliCPU: 100, memory: Mi } });
  const bad = pod('z', [ctr('a', '1', '1Gi')], { nodeName: 'other', os: { name: 'windows' } });
  assert.equal(canAdmitPod(bad, [pod('x', [])], n).reason, 'PodOSNotSupported');
  bad.spec!.os = undefined;
  assert.equal(canAdmitPod(bad, [pod('x', [])], n).reason, 'OutOfpods');
  assert.equal(canAdmitPod(bad, [], n).reason, 'OutOfcpu');
  bad.spec!.containers[0]!.resources!.requests!.cpu = '10m';
  assert.equal(canAdmitPod(bad, [], n).reason, 'OutOfmemory');
  bad.spec!.containers[0]!.resources!.requests!.memory = '1Ki';
  assert.equal(canAdmitPod(bad, [], n).reason, 'NodeName');
});

test('hugepages-*: requests against the host pool minus the active pods (OutOfhugepages-2Mi); none without the pool', () => {
  const hugeCtr = (name: string, amount: string): Container => ({
    name,
    image: 'x',
    resources: { requests: { memory: '16Mi', 'hugepages-2Mi': amount }, limits: { 'hugepages-2Mi': amount } },
  });
  const n = computeNodeInfo({
    nodeName: 'n',
    maxPods: 10,
    capacity: { milliCPU: 1000, memory: Gi },
    hugePages: [{ pageSize: 2 * Mi, pages: 4 }],
  });
  const first = pod('h1', [hugeCtr('a', '6Mi')]);
  assert.deepEqual(canAdmitPod(first, [], n), { admit: true });
  assert.deepEqual(canAdmitPod(pod('h2', [hugeCtr('a', '4Mi')]), [first], n), {
    admit: false,
    reason: 'OutOfhugepages-2Mi',
    message: `Node didn't have enough resource: hugepages-2Mi, requested: ${4 * Mi}, used: ${6 * Mi}, capacity: ${8 * Mi}`,
  });
  const none = computeNodeInfo({ nodeName: 'n', maxPods: 10, capacity: { milliCPU: 1000, memory: Gi }, hugePages: [] });
  assert.equal(canAdmitPod(pod('h3', [hugeCtr('a', '2Mi')]), [], none).reason, 'OutOfhugepages-2Mi');
  assert.equal(canAdmitPod(pod('h4', [hugeCtr('a', '2Mi')]), [], n).admit, true);
});

// Cases of upstream TestRejectPodAdmissionBasedOnSupplementalGroupsPolicy
// (pkg/kubelet/lifecycle/predicate_test.go), the gate being GA in 1.35.
test('SupplementalGroupsPolicyNotSupported: Strict only where the runtime reports the feature', () => {
  const rows: Array<[string, string | undefined, NodeInfo['features'], boolean]> = [
    ['no policy, node without features', undefined, undefined, true],
    ['Merge, node without features', 'Merge', undefined, true],
    ['Merge, node feature false', 'Merge', { supplementalGroupsPolicy: false }, true],
    ['Strict, node without features (containerd 1.6/1.7)', 'Strict', undefined, false],
    ['Strict, node feature false', 'Strict', { supplementalGroupsPolicy: false }, false],
    ['Strict, node feature true', 'Strict', { supplementalGroupsPolicy: true }, true],
  ];
  for (const [what, policy, features, admit] of rows) {
    const sc = policy ? { supplementalGroupsPolicy: policy } : {};
    const n = features ? { ...node(), features } : node();
    const r = canAdmitPod(pod('a', [ctr('a')], { securityContext: sc }), [], n);
    if (admit) assert.deepEqual(r, { admit: true }, what);
    else
      assert.deepEqual(
        r,
        {
          admit: false,
          reason: 'SupplementalGroupsPolicyNotSupported',
          message: 'SupplementalGroupsPolicy=Strict is not supported in this node',
        },
        what,
      );
  }
  // After the OS checks, before the resource fit (upstream's order).
  const both = pod('b', [ctr('b', '100')], { securityContext: { supplementalGroupsPolicy: 'Strict' } });
  assert.equal(canAdmitPod(both, [], node()).reason, 'SupplementalGroupsPolicyNotSupported');
  both.spec!.os = { name: 'windows' };
  assert.equal(canAdmitPod(both, [], node()).reason, 'PodOSNotSupported');
});
