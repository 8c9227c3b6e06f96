/**
 * The agent's CSI wiring (createCsiPluginManager): the test CSI driver registers through a real
 * <root-dir>/plugins_registry; in API server mode it lands in the CSINode object and the node
 * annotation and leaves them when its socket goes; standalone, it is only kept registered.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createApiClients } from '../../../src/apiclient/index.js';
import { hotPaths } from '../../../src/cmd/hot-paths.js';
import { createCsiPluginManager, NODE_ID_ANNOTATION } from '../../../src/volume/csi/index.js';
import type { CsiNodeObject } from '../../../src/volume/csi/node-info-manager.js';
import { startCsiDriver, TOPOLOGY_KEY } from '../../support/csi-driver.js';
import { startTestApiserver } from '../../support/test-apiserver.js';
import { testTempDir } from '../../support/temp-dir.js';
import { waitFor } from './grpc-server.js';

const api = await startTestApiserver();
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-csi-pm-kc-')));
after(async () => {
  clients.close();
  await api.stop();
});
const FAST = { loopMs: 50, backoffInitialMs: 50, backoffMaxMs: 200 };

async function driverIn(rootDir: string, name: string) {
  return startCsiDriver({
    endpoint: join(rootDir, `${name}.sock`),
    registrationDir: join(rootDir, 'plugins_registry'),
    driverName: name,
    nodeId: `${name}-node`,
    stateDir: join(rootDir, `${name}-state`),
    maxVolumes: 5,
  });
}

async function poll<T>(fn: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('createCsiPluginManager', () => {
  it('API server mode: registration → CSINode and annotation; driver gone → entry and key removed', async () => {
    const rootDir = testTempDir('kts-csi-pm-');
    await api.call('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    const pm = createCsiPluginManager({
      rootDir,
      createFsWatcher: hotPaths().inotify.createFsWatcher,
      nodeName: 'n1',
      client: clients.main,
      timeouts: FAST,
    });
    pm.run();
    const driver = await driverIn(rootDir, 'csi.example.com');
    try {
      const csiNode = await poll(async () => {
        const r = await api.call('GET', '/apis/storage.k8s.io/v1/csinodes/n1');
        return r.status === 200 && (r.body as unknown as CsiNodeObject).spec.drivers?.length ? r.body : undefined;
      }, 'the CSINode');
      assert.deepEqual((csiNode as unknown as CsiNodeObject).spec.drivers, [
        {
          name: 'csi.example.com',
          nodeID: 'csi.example.com-node',
          topologyKeys: [TOPOLOGY_KEY],
          allocatable: { count: 5 },
        },
      ]);
      const node = (await api.call('GET', '/api/v1/nodes/n1')).body as {
        metadata: { annotations: Record<string, string>; labels: Record<string, string> };
      };
      assert.equal(node.metadata.annotations[NODE_ID_ANNOTATION], '{"csi.example.com":"csi.example.com-node"}');
      assert.equal(node.metadata.labels[TOPOLOGY_KEY], 'csi.example.com-node');
      await waitFor(() => driver.registrationStatus?.pluginRegistered === true, 5000, 'NotifyRegistrationStatus(true)');
    } finally {
      await driver.stop();
    }
    await poll(async () => {
      const r = await api.call('GET', '/apis/storage.k8s.io/v1/csinodes/n1');
      return (r.body as unknown as CsiNodeObject).spec.drivers?.length === 0 ? true : undefined;
    }, 'the driver to leave the CSINode');
    // Uninstall edits the CSINode and the Node one after the other: wait for the second too.
    await poll(async () => {
      const node = (await api.call('GET', '/api/v1/nodes/n1')).body as {
        metadata: { annotations?: Record<string, string> };
      };
      return node.metadata.annotations?.[NODE_ID_ANNOTATION] === undefined ? true : undefined;
    }, 'the node ID annotation to go');
    await pm.stop();
  });

  it('standalone: the driver is registered with no API', async () => {
    const rootDir = testTempDir('kts-csi-pm-sa-');
    const pm = createCsiPluginManager({
      rootDir,
      createFsWatcher: hotPaths().inotify.createFsWatcher,
      nodeName: 'n1',
      timeouts: FAST,
    });
    pm.run();
    const driver = await driverIn(rootDir, 'csi.example.com');
    try {
      await waitFor(() => driver.registrationStatus?.pluginRegistered === true, 5000, 'NotifyRegistrationStatus(true)');
      assert.equal(pm.registered().size, 1);
    } finally {
      await driver.stop();
      await pm.stop();
    }
  });
});
