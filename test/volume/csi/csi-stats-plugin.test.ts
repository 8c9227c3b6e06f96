// Stats and expansion through the real pieces: the volume manager mounts a PVC volume with the
// CSI plugin (csi-plugin.ts) on the test CSI driver (its own process, real bind mounts: root);
// the stats cache reads what the plugin left in MountedVolume.csi into the Summary shape, and a
// later mount pass expands the volume once its claim asks for it. Teardown unpublishes it all.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../../../src/api/types.js';
import type { EventType, ObjectReference } from '../../../src/events/index.js';
import { CsiVolumeStatsCache } from '../../../src/stats/csi-volume-stats.js';
import { createCsiPlugin } from '../../../src/volume/csi/csi-plugin.js';
import { DEFAULT_DRIVER_POLICY, type CsiVolumeSpec } from '../../../src/volume/csi/csi-types.js';
import type { CsiDriver } from '../../../src/volume/csi/csi-registration.js';
import { hostMounter, mountsUnder } from '../../../src/volume/mount.js';
import { LocalVolumeManager } from '../../../src/volume/volume-manager.js';
import { bindSubPathTs } from '../../../src/volume/subpath/subpath-bind-ts.js';
import { testTempDir } from '../../support/temp-dir.js';
import { FakeStorage } from '../../fakes/fake-storage.js';
import { cleanUp, isRoot, startTestDriver, type TestDriver } from './published-volume.js';

const MI = 1 << 20;

describe('CSI stats and expansion through the CSI plugin', { skip: !isRoot && 'needs root (bind mounts)' }, () => {
  const dir = testTempDir('kts-csi-stats-plugin-');
  let d: TestDriver;
  const storage = new FakeStorage();
  const drivers = new Map<string, CsiDriver>();
  const events: Array<[ObjectReference, EventType, string, string]> = [];
  let vm: LocalVolumeManager;
  const pod = {
    metadata: { uid: 'uid-web', name: 'web', namespace: 'ns' },
    spec: {
      containers: [{ name: 'c', image: 'i', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'claim' } }],
    },
  } as Pod;

  before(async () => {
    d = await startTestDriver(dir, 'plugin.csi.test');
    // Its CSIDriver attaches nothing: claims mount as soon as they are bound.
    storage.drivers.set(d.driver.name, { metadata: { name: d.driver.name }, spec: { attachRequired: false } });
    drivers.set(d.driver.name, d.driver);
    await d.publish('vol-p', MI); // CreateVolume (the publish under dir/pods is undone by cleanUp)
    storage.claims.set('ns/claim', {
      metadata: { name: 'claim', namespace: 'ns', uid: 'uid-claim' },
      spec: { volumeName: 'pv-p' },
      status: { phase: 'Bound', capacity: { storage: '1Mi' } },
    });
    storage.volumes.set('pv-p', {
      metadata: { name: 'pv-p' },
      spec: {
        capacity: { storage: '1Mi' },
        claimRef: { name: 'claim', namespace: 'ns', uid: 'uid-claim' },
        csi: { driver: d.driver.name, volumeHandle: 'vol-p' },
      },
    });
    const spec: CsiVolumeSpec = {
      specName: 'pv-p',
      driver: d.driver.name,
      volumeHandle: 'vol-p',
      lifecycle: 'Persistent',
      readOnly: false,
      mountOptions: [],
      volumeAttributes: {},
      accessMode: 'SINGLE_NODE_WRITER',
      policy: { ...DEFAULT_DRIVER_POLICY, attachRequired: false },
      claim: { namespace: 'ns', name: 'claim' },
      pvName: 'pv-p',
    };
    const plugin = createCsiPlugin({ resolve: async () => spec, timeoutMs: 5000 });
    const host = {
      rootDir: join(dir, 'kubelet'),
      mounter: hostMounter,
      allocatable: { cpu: 1000, memory: 1 << 30, ephemeralStorage: 0 },
      storage,
      csiDrivers: { get: (n: string) => drivers.get(n) },
      nodeName: 'node-a',
      hostIP: '',
    };
    vm = new LocalVolumeManager(host, [plugin], bindSubPathTs, {
      event: (...e: [ObjectReference, EventType, string, string]) => void events.push(e),
    });
  });
  after(async () => {
    await vm?.unmountPodVolumes('uid-web').catch(() => undefined);
    await cleanUp(dir, [d]);
  });

  it('mounts through the plugin; the stats cache reports the volume by pod volume name with its claim', async () => {
    const volumes = await vm.mountPodVolumes(pod);
    assert.deepEqual([...volumes.errors.values()], []);
    const csi = volumes.mounted.get('data')!.csi!;
    assert.equal(csi.volumeHandle, 'vol-p');
    const cache = new CsiVolumeStatsCache({
      pods: () => [pod],
      volumes: vm,
      drivers: { get: (n) => drivers.get(n) },
      timeoutMs: 5000,
    });
    await cache.refresh();
    cache.stop();
    const [stats] = cache.podVolumes('uid-web');
    assert.equal(stats?.name, 'data');
    assert.deepEqual(stats?.pvcRef, { name: 'claim', namespace: 'ns' });
    assert.ok((stats?.capacityBytes ?? 0n) > 0n);
  });

  it('expands on a later mount pass once the claim is NodeResizePending, and tears down cleanly', async () => {
    storage.volumes.get('pv-p')!.spec!.capacity = { storage: '3Mi' };
    storage.claims.get('ns/claim')!.status = {
      capacity: { storage: '1Mi' },
      allocatedResourceStatuses: { storage: 'NodeResizePending' },
    };
    await vm.mountPodVolumes(pod);
    for (let i = 0; i < 100 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      events.map(([ref, type, reason, message]) => [ref.name, type, reason, message]),
      [
        [
          'web',
          'Normal',
          'FileSystemResizeSuccessful',
          'MountVolume.NodeExpandVolume succeeded for volume "pv-p" node-a',
        ],
      ],
    );
    assert.deepEqual(storage.claims.get('ns/claim')!.status, { capacity: { storage: '3Mi' } });
    await vm.unmountPodVolumes('uid-web');
    assert.deepEqual(await mountsUnder(join(dir, 'kubelet')), [], 'unpublished and unstaged');
    const meta = JSON.parse(await readFile(join(d.stateDir, 'volumes', 'vol-p.json'), 'utf8')) as {
      capacityBytes: string;
    };
    assert.equal(meta.capacityBytes, String(3 * MI), 'the driver was asked for the PV size');
  });
});
