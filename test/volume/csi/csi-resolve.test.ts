/**
 * resolveCsiVolume (src/volume/csi/csi-resolve.ts): a pod's PVC, generic ephemeral and inline
 * csi volumes resolved through the API objects to what the driver is called with. Our own
 * tables of upstream's cases:
 *  - pkg/kubelet/volumemanager/populator/desired_state_of_world_populator_test.go
 *    (TestCreateVolumeSpec_Valid_File_VolumeMounts, TestCreateVolumeSpec_Invalid_Block_VolumeMounts,
 *    TestEphemeralVolumeOwnerCheck, TestFindAndAddNewPods_WithVolumeRetrievalError: the
 *    getPVCExtractPV / getPVSpec errors);
 *  - pkg/volume/csi/csi_plugin_test.go (TestPluginNewMounter, TestPluginNewMounterWithInline:
 *    the driver's volumeLifecycleModes) and csi_util_test.go / csi_mounter_test.go (makeVolumeHandle,
 *    readOnly from the spec, asCSIAccessMode);
 *  - pkg/volume/csi/csi_attacher_test.go (TestAttacherWaitForVolumeAttachment: attached,
 *    attach error, being deleted, missing).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Pod } from '../../../src/api/types.js';
import {
  csiAccessMode,
  csiDriverPolicy,
  CsiVolumeError,
  ephemeralVolumeHandle,
  isCsiVolume,
  resolveCsiVolume,
} from '../../../src/volume/csi/csi-resolve.js';
import { csiAttachmentName, DEFAULT_DRIVER_POLICY } from '../../../src/volume/csi/csi-types.js';
import type { Volume, VolumeHost } from '../../../src/volume/types.js';
import { FakeMounter } from '../../fakes/fake-mounter.js';
import { FakeStorage } from '../../fakes/fake-storage.js';
import { container, makePod } from '../../kuberuntime/helpers.js';

const DRIVER = 'hostpath.csi.example.com';
const NODE = 'node-a';

function hostWith(storage: FakeStorage | undefined, drivers?: string[]): VolumeHost {
  return {
    rootDir: '/nonexistent',
    mounter: new FakeMounter(),
    allocatable: { cpu: 1000, memory: 2 ** 30 },
    storage,
    ...(drivers
      ? { csiDrivers: { get: (n: string) => (drivers.includes(n) ? ({ name: n } as never) : undefined) } }
      : {}),
    nodeName: NODE,
    hostIP: '192.0.2.1',
  };
}

function podWith(volume: Volume): Pod {
  const pod = makePod({ containers: [container('a', { volumeMounts: [{ name: volume.name, mountPath: '/d' }] })] });
  pod.spec!.volumes = [volume];
  return pod;
}

/** A storage with claim default/data bound to PV pv-1 (driver not attachable unless asked). */
function boundStorage(attachRequired = false): FakeStorage {
  const s = new FakeStorage();
  s.addBoundClaim('default', 'data', { pvName: 'pv-1', driver: DRIVER, handle: 'vol-1' });
  s.drivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { attachRequired } });
  return s;
}

const pvcVolume: Volume = { name: 'data', persistentVolumeClaim: { claimName: 'data' } };

describe('resolveCsiVolume: persistentVolumeClaim', () => {
  it('a bound claim resolves to its PV: specName, handle, access mode, options, attributes, claim', async () => {
    const s = boundStorage();
    const pv = s.volumes.get('pv-1')!;
    pv.spec!.mountOptions = ['noatime'];
    pv.spec!.accessModes = ['ReadOnlyMany'];
    pv.spec!.csi = { ...pv.spec!.csi!, fsType: 'ext4', volumeAttributes: { k: 'v' } };
    const spec = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s));
    assert.deepEqual(spec, {
      specName: 'pv-1',
      driver: DRIVER,
      volumeHandle: 'vol-1',
      lifecycle: 'Persistent',
      readOnly: false,
      fsType: 'ext4',
      mountOptions: ['noatime'],
      volumeAttributes: { k: 'v' },
      accessMode: 'MULTI_NODE_READER_ONLY',
      policy: { ...DEFAULT_DRIVER_POLICY, attachRequired: false },
      claim: { namespace: 'default', name: 'data' },
      pvName: 'pv-1',
    });
  });

  // upstream getReadOnlyFromSpec: spec.ReadOnly (the pod's claim) || PV csi.readOnly.
  const readOnlyCases: Array<[string, boolean | undefined, boolean | undefined, boolean]> = [
    ['neither', undefined, undefined, false],
    ['the pod claim', true, undefined, true],
    ['the PV', false, true, true],
    ['both', true, true, true],
  ];
  for (const [name, claimRO, pvRO, want] of readOnlyCases) {
    it(`readOnly from ${name}`, async () => {
      const s = boundStorage();
      s.volumes.get('pv-1')!.spec!.csi!.readOnly = pvRO;
      const v: Volume = { name: 'data', persistentVolumeClaim: { claimName: 'data', readOnly: claimRO } };
      assert.equal((await resolveCsiVolume(podWith(v), v, hostWith(s))).readOnly, want);
    });
  }

  // The populator's errors (desired_state_of_world_populator.go getPVCExtractPV / getPVSpec).
  const errorCases: Array<[string, (s: FakeStorage) => void, RegExp]> = [
    [
      'claim missing',
      (s) => s.claims.delete('default/data'),
      /volume data: error processing PVC default\/data: failed to fetch PVC from API server: persistentvolumeclaims "data" not found/,
    ],
    [
      'claim pending',
      (s) => {
        const c = s.claims.get('default/data')!;
        c.status = { phase: 'Pending' };
        c.spec = {};
      },
      /PVC default\/data has non-bound phase \("Pending"\) or empty pvc.Spec.VolumeName \(""\)/,
    ],
    [
      'claim bound phase without volumeName',
      (s) => (s.claims.get('default/data')!.spec = {}),
      /has non-bound phase \("Bound"\) or empty pvc.Spec.VolumeName \(""\)/,
    ],
    [
      'claim being deleted',
      (s) => (s.claims.get('default/data')!.metadata!.deletionTimestamp = new Date()),
      /can't start pod because PVC default\/data is being deleted/,
    ],
    [
      'PV missing',
      (s) => s.volumes.delete('pv-1'),
      /failed to fetch PV pv-1 from API server: persistentvolumes "pv-1" not found/,
    ],
    [
      'PV without claimRef',
      (s) => delete s.volumes.get('pv-1')!.spec!.claimRef,
      /found PV object pv-1 but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim/,
    ],
    [
      'PV bound to another claim UID',
      (s) => (s.volumes.get('pv-1')!.spec!.claimRef!.uid = 'other'),
      /found PV object pv-1 but its pv.Spec.ClaimRef.UID other does not point to claim.UID pvc-uid-data/,
    ],
    [
      'PV bound to another claim name',
      (s) => (s.volumes.get('pv-1')!.spec!.claimRef!.name = 'other'),
      /its pv.Spec.ClaimRef default\/other is another claim/,
    ],
    [
      'PV of another type',
      (s) => {
        const spec = s.volumes.get('pv-1')!.spec!;
        delete spec.csi;
        spec.nfs = { server: 'nfs.example', path: '/x' };
      },
      /volume data: PV pv-1: volume source nfs is not supported/,
    ],
    [
      'PV volumeMode Block',
      (s) => (s.volumes.get('pv-1')!.spec!.volumeMode = 'Block'),
      /volume data has volumeMode Block, but is specified in volumeMounts/,
    ],
    [
      'driver without Persistent',
      (s) => (s.drivers.get(DRIVER)!.spec!.volumeLifecycleModes = ['Ephemeral']),
      /volume data: volume mode "Persistent" not supported by driver hostpath.csi.example.com \(only supports \["Ephemeral"\]\)/,
    ],
  ];
  for (const [name, mutate, want] of errorCases) {
    it(`refused, waiting: ${name}`, async () => {
      const s = boundStorage();
      mutate(s);
      const err = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s)).catch((e: unknown) => e);
      assert.ok(err instanceof CsiVolumeError, String(err));
      assert.equal(err.stage, 'process');
      assert.match(err.message, want);
    });
  }

  it('secrets from nodeStage/nodePublish/nodeExpandSecretRef; a missing one is a mount error', async () => {
    const s = boundStorage();
    const csi = s.volumes.get('pv-1')!.spec!.csi!;
    csi.nodeStageSecretRef = { name: 'stage', namespace: 'kube-system' };
    csi.nodePublishSecretRef = { name: 'pub', namespace: 'default' };
    csi.nodeExpandSecretRef = { name: 'exp', namespace: 'default' };
    s.secrets.set('kube-system/stage', { a: '1' });
    s.secrets.set('default/pub', { b: '2' });
    const err = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s)).catch((e: unknown) => e);
    assert.ok(err instanceof CsiVolumeError);
    assert.equal(err.stage, 'mount');
    assert.match(
      err.message,
      /MountVolume.SetUp failed for volume "pv-1" : failed to find the secret exp in the namespace default with error: secrets "exp" not found/,
    );
    s.secrets.set('default/exp', { c: '3' });
    const spec = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s));
    assert.deepEqual(
      [spec.stageSecrets, spec.publishSecrets, spec.expandSecrets],
      [{ a: '1' }, { b: '2' }, { c: '3' }],
    );
  });

  it('a driver not registered on the node is a mount error (upstream newCsiDriverClient)', async () => {
    const s = boundStorage();
    const err = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s, ['other'])).catch((e: unknown) => e);
    assert.ok(err instanceof CsiVolumeError);
    assert.equal(err.stage, 'mount');
    assert.match(err.message, /driver name hostpath.csi.example.com not found in the list of registered CSI drivers/);
    assert.equal((await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s, [DRIVER]))).driver, DRIVER);
  });

  it('standalone mode (no API server) cannot resolve a claim', async () => {
    const err = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(undefined)).catch((e: unknown) => e);
    assert.ok(err instanceof CsiVolumeError);
    assert.match(err.message, /volume data: persistentVolumeClaim volumes need the API server/);
  });
});

describe('resolveCsiVolume: attachable volumes (csi_attacher WaitForAttach)', () => {
  const unique = `kubernetes.io/csi/${DRIVER}^vol-1`;
  const vaName = csiAttachmentName('vol-1', DRIVER, NODE);

  it('not in node.status.volumesAttached: an attach error carrying the unique name', async () => {
    const s = boundStorage(true);
    const err = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s)).catch((e: unknown) => e);
    assert.ok(err instanceof CsiVolumeError);
    assert.equal(err.stage, 'attach');
    assert.equal(err.uniqueName, unique);
    assert.match(
      err.message,
      /^Volume not attached according to node status for volume "pv-1" \(UniqueName: ".*\^vol-1"\)/,
    );
  });

  const vaCases: Array<[string, Parameters<FakeStorage['attachments']['set']>[1] | undefined, RegExp]> = [
    ['VolumeAttachment missing', undefined, /has GET error for volume attachment csi-[0-9a-f]{64}: .*not found/],
    [
      'VolumeAttachment being deleted',
      { metadata: { deletionTimestamp: new Date() }, spec: {} as never, status: { attached: true } },
      /volume attachment is being deleted/,
    ],
    [
      'attach error reported',
      { spec: {} as never, status: { attached: false, attachError: { message: 'disk busy' } } },
      /MountVolume.WaitForAttach failed for volume "pv-1" : disk busy/,
    ],
    ['not attached yet', { spec: {} as never, status: { attached: false } }, /is not attached yet/],
  ];
  for (const [name, va, want] of vaCases) {
    it(`in volumesAttached, ${name}: a mount error`, async () => {
      const s = boundStorage(true);
      s.attached.add(unique);
      if (va) s.attachments.set(vaName, va);
      const err = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s)).catch((e: unknown) => e);
      assert.ok(err instanceof CsiVolumeError);
      assert.equal(err.stage, 'mount');
      assert.equal(err.uniqueName, unique);
      assert.match(err.message, want);
    });
  }

  it('attached: the attachment metadata is the publish context', async () => {
    const s = boundStorage(true);
    s.attached.add(unique);
    s.attachments.set(vaName, { spec: {} as never, status: { attached: true, attachmentMetadata: { dev: '/dev/x' } } });
    const spec = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s));
    assert.deepEqual(spec.publishContext, { dev: '/dev/x' });
    assert.ok(s.calls.includes(`va ${vaName}`));
  });

  it('no CSIDriver object: attachRequired by default', async () => {
    const s = boundStorage(true);
    s.drivers.clear();
    const err = await resolveCsiVolume(podWith(pvcVolume), pvcVolume, hostWith(s)).catch((e: unknown) => e);
    assert.equal((err as CsiVolumeError).stage, 'attach');
  });
});

describe('resolveCsiVolume: generic ephemeral (TestEphemeralVolumeOwnerCheck)', () => {
  const eph: Volume = { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } };

  function storageFor(pod: Pod, owner: { uid: string; controller?: boolean } | undefined): FakeStorage {
    const s = new FakeStorage();
    s.addBoundClaim('default', 'web-scratch', { pvName: 'pv-e', driver: DRIVER, handle: 'vol-e' });
    s.drivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { attachRequired: false } });
    if (owner) {
      s.claims.get('default/web-scratch')!.metadata!.ownerReferences = [
        { apiVersion: 'v1', kind: 'Pod', name: pod.metadata!.name!, ...owner },
      ];
    }
    return s;
  }

  const ownerCases: Array<[string, { uid: string; controller?: boolean } | undefined, boolean]> = [
    ['owned by the pod', { uid: 'uid-1234', controller: true }, true],
    ['no owner', undefined, false],
    ['owner reference not controller', { uid: 'uid-1234' }, false],
    ['controlled by another pod (same name, other UID)', { uid: 'uid-old', controller: true }, false],
  ];
  for (const [name, owner, ok] of ownerCases) {
    it(`the <pod>-<volume> claim, ${name}`, async () => {
      const pod = podWith(eph);
      const s = storageFor(pod, owner);
      const r = await resolveCsiVolume(pod, eph, hostWith(s)).catch((e: unknown) => e);
      if (ok) {
        assert.equal((r as { specName: string }).specName, 'pv-e');
        assert.deepEqual((r as { claim: unknown }).claim, { namespace: 'default', name: 'web-scratch' });
      } else {
        assert.ok(r instanceof CsiVolumeError);
        assert.match(r.message, /PVC default\/web-scratch was not created for pod default\/web \(pod is not owner\)/);
      }
    });
  }

  it('the claim not created yet: waits as for a missing PVC', async () => {
    const pod = podWith(eph);
    const s = storageFor(pod, undefined);
    s.claims.clear();
    await assert.rejects(
      resolveCsiVolume(pod, eph, hostWith(s)),
      /error processing PVC default\/web-scratch: failed to fetch PVC/,
    );
  });
});

describe('resolveCsiVolume: inline csi (TestPluginNewMounterWithInline)', () => {
  const inline: Volume = {
    name: 'secrets',
    csi: {
      driver: DRIVER,
      readOnly: true,
      fsType: 'xfs',
      volumeAttributes: { a: 'b' },
      nodePublishSecretRef: { name: 'creds' },
    },
  };

  it('a driver with the Ephemeral mode: handle csi-<sha256(uid+name)>, pod volume name, publish secret', async () => {
    const s = new FakeStorage();
    s.drivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { volumeLifecycleModes: ['Persistent', 'Ephemeral'] } });
    s.secrets.set('default/creds', { token: 't' });
    const pod = podWith(inline);
    const spec = await resolveCsiVolume(pod, inline, hostWith(s));
    const handle = `csi-${createHash('sha256').update('uid-1234secrets').digest('hex')}`;
    assert.equal(ephemeralVolumeHandle('uid-1234', 'secrets'), handle);
    assert.deepEqual(spec, {
      specName: 'secrets',
      driver: DRIVER,
      volumeHandle: handle,
      lifecycle: 'Ephemeral',
      readOnly: true,
      fsType: 'xfs',
      mountOptions: [],
      volumeAttributes: { a: 'b' },
      publishSecrets: { token: 't' },
      accessMode: 'SINGLE_NODE_WRITER',
      policy: { ...DEFAULT_DRIVER_POLICY, volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
    });
    assert.ok(!s.calls.some((c) => c.startsWith('va ')), 'an inline volume is never attached');
  });

  const modeCases: Array<[string, string[] | undefined | null, string]> = [
    ['no CSIDriver object', null, '["Persistent"]'],
    ['modes unset', undefined, '["Persistent"]'],
    ['Persistent only', ['Persistent'], '["Persistent"]'],
  ];
  for (const [name, modes, listed] of modeCases) {
    it(`refused: ${name}`, async () => {
      const s = new FakeStorage();
      if (modes !== null) s.drivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { volumeLifecycleModes: modes } });
      const err = await resolveCsiVolume(podWith(inline), inline, hostWith(s)).catch((e: unknown) => e);
      assert.ok(err instanceof CsiVolumeError);
      assert.equal(err.stage, 'process');
      assert.equal(
        err.message,
        `volume secrets: volume mode "Ephemeral" not supported by driver ${DRIVER} (only supports ${listed})`,
      );
    });
  }
});

describe('CSI helpers', () => {
  it('asCSIAccessMode from the PV first access mode', () => {
    const cases: Array<[string[] | undefined, string]> = [
      [undefined, 'SINGLE_NODE_WRITER'],
      [['ReadWriteOnce'], 'SINGLE_NODE_WRITER'],
      [['ReadOnlyMany'], 'MULTI_NODE_READER_ONLY'],
      [['ReadWriteMany'], 'MULTI_NODE_MULTI_WRITER'],
      [['ReadWriteOncePod'], 'SINGLE_NODE_SINGLE_WRITER'],
      [['ReadWriteMany', 'ReadOnlyMany'], 'MULTI_NODE_MULTI_WRITER'],
    ];
    for (const [modes, want] of cases) assert.equal(csiAccessMode(modes), want, String(modes));
  });

  it('CSIDriver policy: upstream defaults for what is unset', () => {
    assert.deepEqual(csiDriverPolicy(null), DEFAULT_DRIVER_POLICY);
    assert.deepEqual(
      csiDriverPolicy({
        spec: { attachRequired: false, podInfoOnMount: true, fsGroupPolicy: 'File', requiresRepublish: true },
      }),
      {
        attachRequired: false,
        podInfoOnMount: true,
        fsGroupPolicy: 'File',
        requiresRepublish: true,
        volumeLifecycleModes: ['Persistent'],
      },
    );
  });

  it('isCsiVolume: PVC, ephemeral and csi', () => {
    assert.equal(isCsiVolume({ name: 'a', persistentVolumeClaim: { claimName: 'x' } }), true);
    assert.equal(isCsiVolume({ name: 'a', ephemeral: {} }), true);
    assert.equal(isCsiVolume({ name: 'a', csi: { driver: 'd' } }), true);
    assert.equal(isCsiVolume({ name: 'a', emptyDir: {} }), false);
  });
});
