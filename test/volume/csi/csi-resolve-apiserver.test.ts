/**
 * resolveCsiVolume in API server mode: the StorageObjectSource of src/apimode over the test
 * apiserver (real HTTP and JSON, as a cluster's controllers would have written the objects),
 * for a PVC, a generic ephemeral volume, an attachable volume and an inline volume. The full
 * tables of cases are csi-resolve.test.ts (in-memory objects).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createApiClients } from '../../../src/apiclient/index.js';
import { StorageObjects } from '../../../src/apimode/storage-objects.js';
import { resolveCsiVolume, type CsiVolumeError } from '../../../src/volume/csi/csi-resolve.js';
import type { Volume, VolumeHost } from '../../../src/volume/types.js';
import { FakeMounter } from '../../fakes/fake-mounter.js';
import { container, makePod } from '../../kuberuntime/helpers.js';
import {
  createBoundClaim,
  createCsiDriver,
  createVolumeAttachment,
  uniqueVolumeName,
} from '../../support/storage-objects.js';
import { startTestApiserver } from '../../support/test-apiserver.js';
import { testTempDir } from '../../support/temp-dir.js';

const NODE = 'node-a';
const api = await startTestApiserver({ bookmarkMs: 200 });
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-csi-resolve-')));
const attached = new Set<string>();
const storage = new StorageObjects({ client: clients.main, attachedVolumes: () => attached, syncTimeoutMs: 5000 });
after(async () => {
  storage.stop();
  clients.close();
  await api.stop();
});

const host: VolumeHost = {
  rootDir: '/nonexistent',
  mounter: new FakeMounter(),
  allocatable: { cpu: 1000, memory: 2 ** 30 },
  storage,
  nodeName: NODE,
  hostIP: '192.0.2.1',
};

function podWith(volume: Volume) {
  const pod = makePod({ containers: [container('a', { volumeMounts: [{ name: volume.name, mountPath: '/d' }] })] });
  pod.spec!.volumes = [volume];
  return pod;
}

/** `fn` retried every 50 ms for up to 5 s. */
async function eventually<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= 100) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => assert.fail('resolved'),
    (e: unknown) => e as CsiVolumeError,
  );

test('a PVC waits while its claim is missing, then resolves through the bound PV', async () => {
  await createCsiDriver(api, 'plain.csi.example.com', { attachRequired: false });
  const v: Volume = { name: 'data', persistentVolumeClaim: { claimName: 'data' } };
  const err = await failure(resolveCsiVolume(podWith(v), v, host));
  assert.equal(err.stage, 'process');
  assert.match(err.message, /error processing PVC default\/data: failed to fetch PVC/);
  await createBoundClaim(api, {
    claimName: 'data',
    driver: 'plain.csi.example.com',
    volumeHandle: 'h-data',
    accessModes: ['ReadWriteMany'],
    mountOptions: ['noatime'],
  });
  const spec = await resolveCsiVolume(podWith(v), v, host);
  assert.deepEqual(
    [spec.specName, spec.volumeHandle, spec.accessMode, spec.mountOptions, spec.policy.attachRequired],
    ['pv-data', 'h-data', 'MULTI_NODE_MULTI_WRITER', ['noatime'], false],
  );
});

test("a generic ephemeral volume: the pod's own <pod>-<volume> claim only", async () => {
  const v: Volume = { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } };
  const pod = podWith(v);
  await createBoundClaim(api, {
    claimName: 'web-scratch',
    driver: 'plain.csi.example.com',
    volumeHandle: 'h-eph',
    ownerPod: { name: 'web', uid: 'uid-other' },
  });
  const err = await failure(resolveCsiVolume(pod, v, host));
  assert.match(err.message, /PVC default\/web-scratch was not created for pod default\/web \(pod is not owner\)/);
  pod.metadata!.uid = 'uid-other';
  assert.equal((await resolveCsiVolume(pod, v, host)).volumeHandle, 'h-eph');
});

test('an attachable volume waits for volumesAttached, then its VolumeAttachment', async () => {
  const driver = 'attach.csi.example.com';
  await createCsiDriver(api, driver, { attachRequired: true });
  await createBoundClaim(api, { claimName: 'disk', driver, volumeHandle: 'h-disk' });
  const v: Volume = { name: 'disk', persistentVolumeClaim: { claimName: 'disk' } };
  const unique = uniqueVolumeName(driver, 'h-disk');
  assert.equal((await failure(resolveCsiVolume(podWith(v), v, host))).stage, 'attach');
  attached.add(unique);
  const noVa = await failure(resolveCsiVolume(podWith(v), v, host));
  assert.equal(noVa.stage, 'mount');
  assert.match(noVa.message, /MountVolume.WaitForAttach failed for volume "pv-disk" : .*not found/);
  await createVolumeAttachment(api, {
    driver,
    volumeHandle: 'h-disk',
    nodeName: NODE,
    pvName: 'pv-disk',
    attachmentMetadata: { lun: '3' },
  });
  assert.deepEqual((await resolveCsiVolume(podWith(v), v, host)).publishContext, { lun: '3' });
});

test('an inline volume needs a CSIDriver with the Ephemeral mode', async () => {
  const driver = 'inline.csi.example.com';
  const v: Volume = { name: 'creds', csi: { driver, volumeAttributes: { a: 'b' } } };
  const err = await failure(resolveCsiVolume(podWith(v), v, host));
  assert.match(err.message, /volume mode "Ephemeral" not supported by driver inline.csi.example.com/);
  await createCsiDriver(api, driver, { attachRequired: false, volumeLifecycleModes: ['Ephemeral'] });
  // The CSIDriver informer sees the creation through its watch, a moment later.
  const spec = await eventually(() => resolveCsiVolume(podWith(v), v, host));
  assert.deepEqual([spec.lifecycle, spec.specName, spec.volumeAttributes], ['Ephemeral', 'creds', { a: 'b' }]);
});
