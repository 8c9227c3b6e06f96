/**
 * CSI driver registration end to end: the agent in API server mode, the test CSI driver as a
 * process of its own registering through <root-dir>/plugins_registry as node-driver-registrar
 * does. The agent answers NotifyRegistrationStatus(true) and installs the driver into the
 * CSINode object and the Node's csi.volume.kubernetes.io/nodeid annotation; stopping the driver
 * (its registration socket goes) removes it again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startKubelet, waitFor } from '../support/kubelet-process.js';
import { apiModeE2e } from '../support/api-mode-e2e.js';
import { readCallLog, TOPOLOGY_KEY } from '../support/csi-driver.js';
import { spawnCsiDriver, type CsiDriverProcess } from '../support/csi-driver-process.js';

const fx = await apiModeE2e('csireg');
const { node: NODE, endpoint, dir, manifests, kubeconfig, api } = fx;
const DRIVER = 'csi.kubelet-ts.io';

interface CsiNode {
  metadata: { ownerReferences?: { kind: string; name: string; uid: string }[]; annotations?: Record<string, string> };
  spec: { drivers: { name: string; nodeID: string; topologyKeys: string[]; allocatable?: { count: number } }[] };
}
interface NodeMeta {
  metadata: { uid: string; annotations?: Record<string, string>; labels?: Record<string, string> };
}

const csiNode = () => api.store.get('csinodes', undefined, NODE) as CsiNode | undefined;
const nodeObject = () => api.store.get('nodes', undefined, NODE) as NodeMeta | undefined;

test('a CSI driver registers into CSINode and the node annotation, and leaves when it stops', async () => {
  fx.kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    extraArgs: [`--kubeconfig=${kubeconfig}`, `--hostname-override=${NODE}`, '--node-ip=127.0.0.1'],
  });
  await waitFor('node registered', 60_000, () => nodeObject(), 250);
  const stateDir = join(dir, 'csi-state');
  let driver: CsiDriverProcess | undefined = await spawnCsiDriver({
    endpoint: join(dir, 'csi.sock'),
    registrationDir: join(dir, 'root', 'plugins_registry'),
    driverName: DRIVER,
    nodeId: 'e2e-node-id',
    stateDir,
    maxVolumes: 7,
  });
  try {
    const installed = await waitFor(
      'driver in CSINode',
      30_000,
      () => (csiNode()?.spec.drivers.length ? csiNode() : undefined),
      250,
    );
    const node = nodeObject()!;
    assert.deepEqual(
      installed.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid]),
      [['Node', NODE, node.metadata.uid]],
    );
    assert.deepEqual(installed.spec.drivers, [
      { name: DRIVER, nodeID: 'e2e-node-id', topologyKeys: [TOPOLOGY_KEY], allocatable: { count: 7 } },
    ]);
    assert.deepEqual(JSON.parse(node.metadata.annotations?.['csi.volume.kubernetes.io/nodeid'] ?? '{}'), {
      [DRIVER]: 'e2e-node-id',
    });
    assert.equal(node.metadata.labels?.[TOPOLOGY_KEY], 'e2e-node-id');
    const notified = await waitFor(
      'NotifyRegistrationStatus',
      10_000,
      () => readCallLog(join(stateDir, 'calls.jsonl')).find((c) => c.method === 'NotifyRegistrationStatus'),
      100,
    );
    assert.equal((notified.request as { pluginRegistered?: boolean }).pluginRegistered, true);

    await driver.stop();
    driver = undefined;
    // Uninstall writes the CSINode first, then the Node's annotation: wait for both.
    const nodeId = () => nodeObject()?.metadata.annotations?.['csi.volume.kubernetes.io/nodeid'];
    await waitFor(
      'driver gone from CSINode and the node annotation',
      30_000,
      () => (csiNode()?.spec.drivers.length === 0 && nodeId() === undefined ? true : undefined),
      250,
    );
    assert.equal(
      csiNode()?.metadata.annotations?.['storage.alpha.kubernetes.io/migrated-plugins']?.split(',').length,
      7,
      'the CSINode made at start carries the migrated-plugins annotation',
    );
  } finally {
    await driver?.stop();
  }
});
