// Online node expansion (upstream v1.35 node_expander.go with RecoverVolumeExpansionFailure):
// NodeExpandVolume on a real volume of the test CSI driver (its own process, bind mounts: root),
// the claim's status patched through a fake StorageObjectSource that applies the merge patches,
// the pod's events; and the volume manager's hook on a mount pass. The precheck table follows
// upstream's TestNodeExpander (pkg/volume/util/operationexecutor/node_expander_test.go).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { Pod } from '../../../src/api/types.js';
import type { EventType, ObjectReference } from '../../../src/events/index.js';
import { expandIfNeeded, needsNodeExpansion, resizeFinishedPatch } from '../../../src/volume/csi/csi-expand.js';
import type { CsiDriver } from '../../../src/volume/csi/csi-registration.js';
import type { CsiMountedInfo } from '../../../src/volume/csi/csi-types.js';
import type { VolumeHost, VolumePlugin } from '../../../src/volume/types.js';
import { LocalVolumeManager } from '../../../src/volume/volume-manager.js';
import { FakeMounter } from '../../fakes/fake-mounter.js';
import { readCallLog } from '../../support/csi-driver.js';
import { testTempDir } from '../../support/temp-dir.js';
import { FakeStorage } from '../../fakes/fake-storage.js';
import { cleanUp, isRoot, startTestDriver, type TestDriver } from './published-volume.js';

const MI = 1 << 20;

/** A claim bound to pv-<name> (the volume manager resolves it before its plugin runs). */
function claim(name: string, status: V1PersistentVolumeClaim['status']): V1PersistentVolumeClaim {
  const meta = { name, namespace: 'ns', uid: `uid-pvc-${name}` };
  return { metadata: meta, spec: { volumeName: `pv-${name}` }, status: { phase: 'Bound', ...status } };
}

function volume(name: string, handle: string, driver: string, capacity: string): V1PersistentVolume {
  const claimRef = { name: name.replace(/^pv-/, ''), namespace: 'ns', uid: `uid-pvc-${name.replace(/^pv-/, '')}` };
  return {
    metadata: { name },
    spec: {
      capacity: { storage: capacity },
      accessModes: ['ReadWriteOnce'],
      claimRef,
      csi: { driver, volumeHandle: handle },
    },
  };
}

function podUsing(claimName: string): Pod {
  return {
    metadata: { uid: `uid-${claimName}`, name: `pod-${claimName}`, namespace: 'ns' },
    spec: {
      containers: [{ name: 'c', image: 'i', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  } as Pod;
}

const pending = (capacity: string): V1PersistentVolumeClaim['status'] => ({
  capacity: { storage: capacity },
  allocatedResourceStatuses: { storage: 'NodeResizePending' },
  conditions: [{ type: 'FileSystemResizePending', status: 'True' }],
});

describe('NodeExpandVolume', { skip: !isRoot && 'needs root (bind mounts)' }, () => {
  const dir = testTempDir('kts-csi-expand-');
  let d: TestDriver;
  const storage = new FakeStorage();
  const drivers = new Map<string, CsiDriver>();
  const host = (): VolumeHost => ({
    rootDir: dir,
    mounter: new FakeMounter(),
    allocatable: { cpu: 1000, memory: 1 << 30, ephemeralStorage: 0 },
    storage,
    csiDrivers: { get: (n) => drivers.get(n) },
    nodeName: 'node-a',
    hostIP: '',
  });
  const calls = (method: string) =>
    readCallLog(join(d.stateDir, 'calls.jsonl')).filter((c) => c.method === method) as Array<{
      request: Record<string, unknown>;
      code?: number;
    }>;
  /** A published volume behind claim `name`: PVC at 1Mi, PV at `pvSize`. */
  const setUp = async (name: string, pvSize: string, status = pending('1Mi')): Promise<CsiMountedInfo> => {
    const info = await d.publish(`vol-${name}`, MI);
    storage.claims.set(`ns/${name}`, claim(name, status));
    storage.volumes.set(`pv-${name}`, volume(`pv-${name}`, `vol-${name}`, d.driver.name, pvSize));
    return info;
  };

  before(async () => {
    d = await startTestDriver(dir, 'expand.csi.test');
    // Its CSIDriver attaches nothing: claims mount as soon as they are bound.
    storage.drivers.set(d.driver.name, { metadata: { name: d.driver.name }, spec: { attachRequired: false } });
    drivers.set(d.driver.name, d.driver);
  });
  after(() => cleanUp(dir, [d]));

  it('expands a mounted volume the resize controller handed to the node, then finishes the claim', async () => {
    const csi = await setUp('grow', '2Mi');
    const h = host();
    const event = await expandIfNeeded(podUsing('grow'), 'data', { hostPath: '', readOnly: false, csi }, h);
    assert.deepEqual(event, {
      type: 'Normal',
      reason: 'FileSystemResizeSuccessful',
      message: 'MountVolume.NodeExpandVolume succeeded for volume "pv-grow" node-a',
    });
    const expand = calls('NodeExpandVolume').at(-1)!.request as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(expand.volumeId, 'vol-grow');
    assert.equal(expand.volumePath, csi.targetPath);
    assert.equal(expand.stagingTargetPath, csi.stagingPath);
    assert.equal(expand.capacityRange.requiredBytes, String(2 * MI));
    assert.equal(expand.volumeCapability.accessMode.mode, 'SINGLE_NODE_WRITER');
    const meta = JSON.parse(await readFile(join(d.stateDir, 'volumes', 'vol-grow.json'), 'utf8')) as {
      capacityBytes: string;
    };
    assert.equal(meta.capacityBytes, String(2 * MI), 'the driver grew the volume');
    assert.deepEqual(
      storage.patches.filter((p) => `${p.namespace}/${p.name}` === 'ns/grow').map((p) => p.patch),
      [
        { status: { allocatedResourceStatuses: { storage: 'NodeResizeInProgress' } } },
        { status: { capacity: { storage: '2Mi' }, allocatedResourceStatuses: null, conditions: null } },
      ],
    );
    const after = storage.claims.get('ns/grow')!.status!;
    assert.deepEqual(
      after,
      { phase: 'Bound', capacity: { storage: '2Mi' } },
      'capacity set, resize status and conditions cleared',
    );
    const n = calls('NodeExpandVolume').length;
    assert.equal(await expandIfNeeded(podUsing('grow'), 'data', { hostPath: '', readOnly: false, csi }, h), undefined);
    assert.equal(calls('NodeExpandVolume').length, n, 'done: not expanded again');
  });

  it('leaves a claim alone that the node was not asked to expand (upstream runPreCheck)', async () => {
    const h = host();
    const cases: Array<[string, string, V1PersistentVolumeClaim['status']]> = [
      ['same', '1Mi', pending('1Mi')],
      ['nostatus', '2Mi', { capacity: { storage: '1Mi' } }],
      [
        'oldcond',
        '2Mi',
        { capacity: { storage: '1Mi' }, conditions: [{ type: 'FileSystemResizePending', status: 'True' }] },
      ],
      ['failed', '2Mi', { capacity: { storage: '1Mi' }, allocatedResourceStatuses: { storage: 'NodeResizeFailed' } }],
    ];
    const before = calls('NodeExpandVolume').length;
    for (const [name, pvSize, status] of cases) {
      const csi = await setUp(name, pvSize, status);
      const event = await expandIfNeeded(podUsing(name), 'data', { hostPath: '', readOnly: false, csi }, h);
      assert.equal(event, undefined, name);
    }
    assert.equal(calls('NodeExpandVolume').length, before);
    assert.equal(
      storage.patches.filter((p) => cases.some(([n]) => `${p.namespace}/${p.name}` === `ns/${n}`)).length,
      0,
    );
  });

  it('a final driver error: FileSystemResizeFailed, NodeResizeInfeasible with NodeResizeError, not retried', async () => {
    const csi = await setUp('bad', '3Mi');
    await writeFile(join(d.stateDir, 'faults'), 'NodeExpandVolume=fail:INVALID_ARGUMENT\n');
    const h = host();
    const pod = podUsing('bad');
    const event = await expandIfNeeded(pod, 'data', { hostPath: '', readOnly: false, csi }, h);
    await writeFile(join(d.stateDir, 'faults'), '');
    assert.equal(event?.type, 'Warning');
    assert.equal(event?.reason, 'FileSystemResizeFailed');
    assert.match(event!.message, /^NodeExpandVolume\.NodeExpandVolume failed for volume "pv-bad" : .*INVALID_ARGUMENT/);
    const status = storage.claims.get('ns/bad')!.status!;
    assert.equal(status.allocatedResourceStatuses?.storage, 'NodeResizeInfeasible');
    const cond = status.conditions!.find((c) => c.type === 'NodeResizeError')!;
    assert.equal(cond.status, 'True');
    assert.match(cond.message!, /^failed to expand pvc with .*injected failure of NodeExpandVolume/);
    assert.ok(
      status.conditions!.some((c) => c.type === 'FileSystemResizePending'),
      'old resize conditions kept',
    );
    assert.equal(status.capacity?.storage, '1Mi');
    const n = calls('NodeExpandVolume').length;
    storage.claims.get('ns/bad')!.status!.allocatedResourceStatuses = { storage: 'NodeResizePending' };
    assert.equal(await expandIfNeeded(pod, 'data', { hostPath: '', readOnly: false, csi }, h), undefined);
    assert.equal(calls('NodeExpandVolume').length, n, 'the same size is not tried again after a final error');
  });

  it('a transient driver error: FileSystemResizeFailed, the claim stays in progress, retried after back-off', async () => {
    const csi = await setUp('flaky', '2Mi');
    await writeFile(join(d.stateDir, 'faults'), 'NodeExpandVolume=fail:UNAVAILABLE\n');
    const h = host();
    const pod = podUsing('flaky');
    const mounted = { hostPath: '', readOnly: false, csi };
    const event = await expandIfNeeded(pod, 'data', mounted, h);
    await writeFile(join(d.stateDir, 'faults'), '');
    assert.equal(event?.reason, 'FileSystemResizeFailed');
    assert.equal(storage.claims.get('ns/flaky')!.status!.allocatedResourceStatuses?.storage, 'NodeResizeInProgress');
    assert.equal(await expandIfNeeded(pod, 'data', mounted, h), undefined, 'within the back-off: not called');
    await new Promise((r) => setTimeout(r, 600));
    const retried = await expandIfNeeded(pod, 'data', mounted, h);
    assert.equal(retried?.reason, 'FileSystemResizeSuccessful');
    assert.equal(storage.claims.get('ns/flaky')!.status!.capacity?.storage, '2Mi');
  });

  it("the volume manager's mount pass expands a mounted CSI volume in the background and records the event", async () => {
    const csi = await setUp('hook', '4Mi');
    const events: Array<[ObjectReference, EventType, string, string]> = [];
    const plugin: VolumePlugin = {
      name: 'kubernetes.io~csi',
      requiresRemount: false,
      canSupport: (v) => v.persistentVolumeClaim !== undefined,
      setUp: async () => ({ hostPath: csi.targetPath, readOnly: false, csi }),
      tearDown: async () => undefined,
    };
    await mkdir(join(dir, 'pods'), { recursive: true });
    const vm = new LocalVolumeManager(host(), [plugin], async () => ({ isDir: true }), {
      event: (...e: [ObjectReference, EventType, string, string]) => void events.push(e),
    });
    const pod = podUsing('hook');
    await vm.mountPodVolumes(pod); // sets up: nothing to expand yet
    await vm.mountPodVolumes(pod); // mounted: the expansion starts, the pass does not wait for it
    for (let i = 0; i < 100 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      events.map(([ref, type, reason]) => [ref.name, type, reason]),
      [['pod-hook', 'Normal', 'FileSystemResizeSuccessful']],
    );
    assert.equal(storage.claims.get('ns/hook')!.status!.capacity?.storage, '4Mi');
  });
});

describe('node expansion tables', () => {
  // upstream TestNodeExpander's precheck rows: which resize statuses let the node expand.
  const rows: Array<[string, string | undefined, string, boolean]> = [
    ['pv.spec.cap > pvc.status.cap, resizeStatus=node_expansion_pending', 'NodeResizePending', '1Gi', true],
    ['pv.spec.cap > pvc.status.cap, resizeStatus=node_expansion_inprogress', 'NodeResizeInProgress', '1Gi', true],
    ['pv.spec.cap > pvc.status.cap, resizeStatus=node_expansion_failed', 'NodeResizeFailed', '1Gi', false],
    ['pv.spec.cap > pvc.status.cap, resizeStatus=infeasible', 'NodeResizeInfeasible', '1Gi', false],
    [
      'pv.spec.cap > pvc.status.cap, resizeStatus=controller_expansion_inprogress',
      'ControllerResizeInProgress',
      '1Gi',
      false,
    ],
    ['pv.spec.cap > pvc.status.cap, resizeStatus empty (old resize controller)', undefined, '1Gi', false],
    ['pv.spec.cap = pvc.status.cap, resizeStatus=node_expansion_pending', 'NodeResizePending', '2Gi', false],
  ];
  for (const [name, status, pvcCap, want] of rows) {
    it(name, () => {
      const pvc = claim('c', {
        capacity: { storage: pvcCap },
        ...(status ? { allocatedResourceStatuses: { storage: status } } : {}),
      });
      assert.equal(needsNodeExpansion(pvc, 2 * 1024 ** 3), want);
    });
  }

  it('upstream MergeResizeConditionOnPVC: resize conditions dropped, others kept', () => {
    const pvc = claim('c', {
      conditions: [
        { type: 'Resizing', status: 'True' },
        { type: 'FileSystemResizePending', status: 'True' },
        { type: 'NodeResizeError', status: 'True' },
        { type: 'ModifyingVolume', status: 'True' },
      ],
    });
    assert.deepEqual(resizeFinishedPatch(pvc, volume('pv', 'h', 'd', '5Gi')), {
      status: {
        capacity: { storage: '5Gi' },
        allocatedResourceStatuses: null,
        conditions: [{ type: 'ModifyingVolume', status: 'True' }],
      },
    });
  });
});
