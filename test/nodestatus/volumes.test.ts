/**
 * The volume side of the node status (upstream pkg/kubelet/nodestatus/setters.go VolumesInUse
 * and VolumeLimits, kubelet_node_status.go reconcileCMADAnnotationWithExistingNode):
 * status.volumesInUse from the volume manager once it has synced, sorted; no attachable-volumes-*
 * in capacity (CSI limits live in CSINode); the controller-managed-attach-detach annotation on
 * a new and on an adopted Node; and status.volumesAttached as the status loop last read it.
 */
import { describe, it, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClients } from '../../src/apiclient/index.js';
import {
  CONTROLLER_MANAGED_ATTACH_DETACH,
  createNodeStatusManager,
  nodeStatus,
  volumesInUseStatus,
  type NodeStatusDeps,
} from '../../src/nodestatus/index.js';
import { computeNodeInfo } from '../../src/node/node-info.js';
import { strategicMergePatch } from '../support/apiserver-patch.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';
import { attachVolume, detachVolume, uniqueVolumeName, volumesInUse } from '../support/storage-objects.js';

const dir = testTempDir('kts-nodestatus-volumes-');

/** A Node with volumesInUse, as upstream's table starts from, after our status patch. */
const applied = (inUse: readonly string[] | undefined) =>
  (
    strategicMergePatch({ status: { volumesInUse: ['foo'] } }, { status: volumesInUseStatus(inUse) }) as {
      status: { volumesInUse?: string[] };
    }
  ).status.volumesInUse;

describe('upstream TestVolumesInUse (pkg/kubelet/nodestatus/setters_test.go)', () => {
  const cases: { desc: string; volumesInUse: string[] | undefined; expect: string[] }[] = [
    // upstream "synced": the volume manager's list replaces the Node's.
    { desc: 'synced', volumesInUse: ['bar'], expect: ['bar'] },
    // upstream "not synced" (syncedFunc false): the Node keeps what it had.
    { desc: 'not synced', volumesInUse: undefined, expect: ['foo'] },
    // Ours: sorted as upstream's GetVolumesInUse, without duplicates.
    { desc: 'sorted, once each', volumesInUse: ['z^2', 'a^1', 'z^2'], expect: ['a^1', 'z^2'] },
    // Ours: the last volume released clears the field (Go omits the empty list; the patch sends []).
    { desc: 'synced, none in use', volumesInUse: [], expect: [] },
  ];
  for (const c of cases) it(c.desc, () => assert.deepEqual(applied(c.volumesInUse), c.expect));
});

function deps(name: string, over: Partial<NodeStatusDeps> = {}): NodeStatusDeps {
  return {
    client: undefined as never,
    heartbeat: undefined as never,
    nodeIPs: ['10.0.0.7'],
    kubeletPort: 10250,
    registerNode: true,
    node: computeNodeInfo({ nodeName: name, maxPods: 10, capacity: { milliCPU: 2000, memory: 2 * 1024 ** 3 } }),
    taints: [],
    rootDir: dir,
    kubeletVersion: 'v0-test',
    runtimeVersion: async () => 'containerd://1.7.0',
    images: async () => [],
    readinessErrors: () => [],
    updateFrequencyMs: 50,
    reportFrequencyMs: 60_000,
    ...over,
  };
}

const statusOf = (d: NodeStatusDeps) =>
  nodeStatus({ deps: d, runtimeVersion: undefined, images: [], previous: undefined, now: new Date() });

describe('upstream TestVolumeLimits (pkg/kubelet/nodestatus/setters_test.go)', () => {
  // upstream's cases feed fake plugins with GetVolumeLimits. In v1.35 no plugin the kubelet ships
  // reports attach limits there (the in-tree cloud disks are gone; a CSI driver's limit is its
  // NodeGetInfo max_volumes_per_node in CSINode), so the setter adds nothing: the case
  // "no plugins" is the node's, and no attachable-volumes-* key appears in capacity or allocatable.
  it('no plugin with attach limits: capacity and allocatable carry no attachable-volumes-*', () => {
    const s = statusOf(deps('lim'));
    const keys = [...Object.keys(s.capacity ?? {}), ...Object.keys(s.allocatable ?? {})];
    assert.ok(keys.length > 0);
    assert.deepEqual(
      keys.filter((k) => k.startsWith('attachable-volumes-')),
      [],
    );
  });
  it('no volume manager (standalone, or before it starts): no volumesInUse in the status', () => {
    const s = statusOf(deps('none'));
    assert.equal('volumesInUse' in s, false);
  });
});

const api = await startTestApiserver();
const clients = await createApiClients(api.kubeconfig(dir));
after(async () => {
  clients.close();
  await api.stop();
});

type StoredNode = { metadata: { annotations?: Record<string, string> }; status: { volumesInUse?: string[] } };
const node = (name: string) => api.store.get('nodes', undefined, name) as unknown as StoredNode | undefined;

test('volumesInUse reach the Node through the status patch; volumesAttached follow what the controller wrote', async () => {
  let inUse: string[] | undefined = undefined;
  const m = createNodeStatusManager(
    deps('v1', { client: clients.main, heartbeat: clients.heartbeat, volumesInUse: () => inUse }),
  );
  m.start();
  try {
    await m.registered();
    assert.equal(node('v1')?.metadata.annotations?.[CONTROLLER_MANAGED_ATTACH_DETACH], 'true');
    assert.equal(node('v1')?.status.volumesInUse, undefined, 'not synced: field left alone');
    const a = uniqueVolumeName('d.example.com', 'h-a');
    const b = uniqueVolumeName('d.example.com', 'h-b');
    inUse = [b, a];
    await waitFor('volumesInUse', 5000, () => (volumesInUse(api, 'v1').length === 2 ? true : undefined), 20);
    assert.deepEqual(volumesInUse(api, 'v1'), [a, b]);
    assert.deepEqual(m.volumesAttached(), new Set());
    const o = { driver: 'd.example.com', volumeHandle: 'h-a', nodeName: 'v1', pvName: 'pv-a' };
    await attachVolume(api, o);
    await waitFor('volumesAttached read', 5000, () => (m.volumesAttached().has(a) ? true : undefined), 20);
    inUse = [];
    await waitFor('volumesInUse cleared', 5000, () => (volumesInUse(api, 'v1').length === 0 ? true : undefined), 20);
    await detachVolume(api, o);
    await waitFor('detach read', 5000, () => (m.volumesAttached().size === 0 ? true : undefined), 20);
  } finally {
    m.stop();
  }
});

test('an adopted Node without the controller-managed-attach-detach annotation gets it back', async () => {
  const created = await api.call('POST', '/api/v1/nodes', {
    metadata: { name: 'v2', labels: { 'kubernetes.io/hostname': 'v2' }, annotations: { keep: 'me' } },
  });
  assert.equal(created.status, 201);
  const m = createNodeStatusManager(deps('v2', { client: clients.main, heartbeat: clients.heartbeat }));
  m.start();
  try {
    await m.registered();
    assert.deepEqual(node('v2')?.metadata.annotations, { keep: 'me', [CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' });
  } finally {
    m.stop();
  }
});
