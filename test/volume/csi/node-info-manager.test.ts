/**
 * The CSI node info manager against the test apiserver. Cases after upstream
 * pkg/volume/csi/nodeinfomanager/nodeinfomanager_test.go TestInstallCSIDriver and
 * TestUninstallCSIDriver: the Node's node ID annotation and topology labels, the CSINode object.
 */
import assert from 'node:assert/strict';
import { after, beforeEach, describe, it } from 'node:test';
import { createApiClients } from '../../../src/apiclient/index.js';
import { PluginRegistrationError } from '../../../src/errors.js';
import {
  type CsiNodeObject,
  MIGRATED_PLUGINS,
  MIGRATED_PLUGINS_ANNOTATION,
  NODE_ID_ANNOTATION,
  NodeInfoManager,
} from '../../../src/volume/csi/node-info-manager.js';
import { startTestApiserver } from '../../support/test-apiserver.js';
import { testTempDir } from '../../support/temp-dir.js';

const api = await startTestApiserver();
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-csi-nim-')));
after(async () => {
  clients.close();
  await api.stop();
});

const NODE = 'n1';
const nim = new NodeInfoManager({ client: clients.main, nodeName: NODE, retry: { steps: 4, firstDelayMs: 1 } });

interface NodeMeta {
  metadata: { uid: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}
const getNode = async () => (await api.call('GET', `/api/v1/nodes/${NODE}`)).body as unknown as NodeMeta;
const getCsiNode = async () => {
  const r = await api.call('GET', `/apis/storage.k8s.io/v1/csinodes/${NODE}`);
  return r.status === 200 ? (r.body as unknown as CsiNodeObject) : undefined;
};
const nodeIds = async () => JSON.parse((await getNode()).metadata.annotations?.[NODE_ID_ANNOTATION] ?? '{}') as unknown;

async function resetNode(meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}) {
  await api.call('DELETE', `/apis/storage.k8s.io/v1/csinodes/${NODE}`);
  await api.call('DELETE', `/api/v1/nodes/${NODE}`);
  await api.call('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, ...meta } });
}

describe('NodeInfoManager.installCSIDriver (upstream TestInstallCSIDriver)', () => {
  beforeEach(() => resetNode());

  it('empty node: annotation, topology labels, CSINode owned by the Node with sorted keys and the limit', async () => {
    await nim.installCSIDriver('com.example.csi', {
      nodeId: 'com.example.csi/node1',
      maxVolumesPerNode: 10,
      accessibleTopology: { 'topology.example.com/zone': 'zoneA', 'topology.example.com/rack': 'r1' },
    });
    const node = await getNode();
    assert.deepEqual(await nodeIds(), { 'com.example.csi': 'com.example.csi/node1' });
    assert.equal(node.metadata.labels?.['topology.example.com/zone'], 'zoneA');
    assert.equal(node.metadata.labels?.['topology.example.com/rack'], 'r1');
    const csiNode = await getCsiNode();
    assert.deepEqual(csiNode?.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Node', name: NODE, uid: node.metadata.uid },
    ]);
    assert.deepEqual(csiNode?.spec.drivers, [
      {
        name: 'com.example.csi',
        nodeID: 'com.example.csi/node1',
        topologyKeys: ['topology.example.com/rack', 'topology.example.com/zone'],
        allocatable: { count: 10 },
      },
    ]);
  });

  it('pre-existing driver kept; same driver with a new node ID replaced; no limit → no allocatable', async () => {
    await nim.installCSIDriver('net.example.storage.other-driver', {
      nodeId: 'other/n1',
      maxVolumesPerNode: 0,
      accessibleTopology: undefined,
    });
    await nim.installCSIDriver('com.example.csi', {
      nodeId: 'old',
      maxVolumesPerNode: 0,
      accessibleTopology: undefined,
    });
    await nim.installCSIDriver('com.example.csi', {
      nodeId: 'new',
      maxVolumesPerNode: 0,
      accessibleTopology: undefined,
    });
    assert.deepEqual(await nodeIds(), { 'com.example.csi': 'new', 'net.example.storage.other-driver': 'other/n1' });
    assert.deepEqual((await getCsiNode())?.spec.drivers, [
      { name: 'net.example.storage.other-driver', nodeID: 'other/n1', topologyKeys: [] },
      { name: 'com.example.csi', nodeID: 'new', topologyKeys: [] },
    ]);
  });

  it('the same driver again writes nothing', async () => {
    const info = { nodeId: 'n', maxVolumesPerNode: 3, accessibleTopology: { zone: 'a' } };
    await nim.installCSIDriver('d', info);
    const writes = () => api.requests.filter((r) => r.method !== 'GET').length;
    const before = writes();
    await nim.installCSIDriver('d', info);
    assert.equal(writes(), before);
  });

  it('a limit over int32 is clamped (upstream: math.MaxInt32)', async () => {
    await nim.installCSIDriver('d', { nodeId: 'n', maxVolumesPerNode: 2 ** 40, accessibleTopology: undefined });
    assert.deepEqual((await getCsiNode())?.spec.drivers?.[0]?.allocatable, { count: 2 ** 31 - 1 });
  });

  it('a topology label already set to another value is a collision and changes nothing', async () => {
    await resetNode({ labels: { zone: 'b' } });
    await assert.rejects(
      nim.installCSIDriver('d', { nodeId: 'n', maxVolumesPerNode: 0, accessibleTopology: { zone: 'a' } }),
      (err: Error) => err instanceof PluginRegistrationError && /topology value collision/.test(err.message),
    );
    assert.equal((await getNode()).metadata.annotations?.[NODE_ID_ANNOTATION], undefined);
    assert.equal(await getCsiNode(), undefined);
  });

  it('a malformed node ID annotation is a clear error', async () => {
    await resetNode({ annotations: { [NODE_ID_ANNOTATION]: '[not a map' } });
    await assert.rejects(
      nim.installCSIDriver('d', { nodeId: 'n', maxVolumesPerNode: 0, accessibleTopology: undefined }),
      /annotation is not a JSON object/,
    );
  });

  it('an empty node ID is refused', async () => {
    await assert.rejects(
      nim.installCSIDriver('d', { nodeId: '', maxVolumesPerNode: 0, accessibleTopology: undefined }),
      /empty node ID/,
    );
  });

  it('retries a 409 from a concurrent writer of the CSINode', async () => {
    await nim.installCSIDriver('a', { nodeId: 'na', maxVolumesPerNode: 0, accessibleTopology: undefined });
    let conflicts = 1;
    api.extraHandlers.push((req, res) => {
      if (req.method !== 'PUT' || !req.url?.startsWith('/apis/storage.k8s.io/v1/csinodes/') || conflicts === 0)
        return false;
      conflicts--;
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409, message: 'modified' }),
      );
      return true;
    });
    try {
      await nim.installCSIDriver('b', { nodeId: 'nb', maxVolumesPerNode: 0, accessibleTopology: undefined });
    } finally {
      api.extraHandlers.pop();
    }
    assert.equal(conflicts, 0);
    assert.deepEqual(
      (await getCsiNode())?.spec.drivers?.map((d) => d.name),
      ['a', 'b'],
    );
  });
});

describe('NodeInfoManager.uninstallCSIDriver (upstream TestUninstallCSIDriver)', () => {
  beforeEach(() => resetNode());

  it('removes the driver entry and its annotation key, keeps the others and the labels', async () => {
    await nim.installCSIDriver('a', { nodeId: 'na', maxVolumesPerNode: 0, accessibleTopology: { zone: 'z' } });
    await nim.installCSIDriver('b', { nodeId: 'nb', maxVolumesPerNode: 0, accessibleTopology: undefined });
    await nim.uninstallCSIDriver('a');
    assert.deepEqual(await nodeIds(), { b: 'nb' });
    assert.equal((await getNode()).metadata.labels?.zone, 'z');
    assert.deepEqual(
      (await getCsiNode())?.spec.drivers?.map((d) => d.name),
      ['b'],
    );
  });

  it('the last driver removes the annotation; the CSINode stays with no drivers', async () => {
    await nim.installCSIDriver('a', { nodeId: 'na', maxVolumesPerNode: 0, accessibleTopology: undefined });
    await nim.uninstallCSIDriver('a');
    assert.equal((await getNode()).metadata.annotations?.[NODE_ID_ANNOTATION], undefined);
    assert.deepEqual((await getCsiNode())?.spec.drivers, []);
  });

  it('an unknown driver and a missing CSINode are no-ops', async () => {
    await nim.uninstallCSIDriver('never');
    assert.equal(await getCsiNode(), undefined);
  });
});

describe('NodeInfoManager.initializeCSINode (upstream TestInstallCSIDriverMigrationAnnotation)', () => {
  beforeEach(() => resetNode());

  it('no CSINode: created, owned by the Node, with no drivers and the migrated-plugins annotation', async () => {
    await nim.initializeCSINode();
    const csiNode = await getCsiNode();
    assert.deepEqual(csiNode?.spec.drivers ?? [], []);
    assert.equal(csiNode?.metadata.annotations?.[MIGRATED_PLUGINS_ANNOTATION], MIGRATED_PLUGINS);
    assert.equal(csiNode?.metadata.ownerReferences?.[0]?.uid, (await getNode()).metadata.uid);
  });

  it('an existing CSINode keeps its drivers and gets the annotation; a second call changes nothing', async () => {
    await nim.installCSIDriver('com.example.csi', { nodeId: 'x', maxVolumesPerNode: 0, accessibleTopology: undefined });
    const before = await getCsiNode();
    await api.call('PUT', `/apis/storage.k8s.io/v1/csinodes/${NODE}`, {
      ...before,
      metadata: { ...before!.metadata, annotations: { [MIGRATED_PLUGINS_ANNOTATION]: 'kubernetes.io/gce-pd' } },
    } as unknown as Record<string, unknown>);
    await nim.initializeCSINode();
    const after1 = await getCsiNode();
    assert.equal(after1?.metadata.annotations?.[MIGRATED_PLUGINS_ANNOTATION], MIGRATED_PLUGINS);
    assert.deepEqual(
      after1?.spec.drivers?.map((d) => d.name),
      ['com.example.csi'],
    );
    await nim.initializeCSINode();
    assert.equal((await getCsiNode())?.metadata.resourceVersion, after1?.metadata.resourceVersion);
  });

  it('the annotation lists the seven in-tree plugins migrated in 1.35, sorted', () => {
    const list = MIGRATED_PLUGINS.split(',');
    assert.equal(list.length, 7);
    assert.deepEqual([...list].sort(), list);
  });
});
