/**
 * CSI volumes end to end (issue 29): the agent in API server mode against the test apiserver,
 * test CSI drivers as processes of their own registering through <root-dir>/plugins_registry
 * (registration → CSINode itself is csi-registration.test.ts), real bind mounts, real
 * containerd. The test plays the cluster's controllers: it creates the CSIDriver objects, binds
 * PVs to claims, creates a generic ephemeral volume's claim, and attaches (VolumeAttachment +
 * node.status.volumesAttached). The tests run in order on one agent:
 * - a PVC pod writes, is deleted (unpublished, unstaged, nothing left mounted), a second pod
 *   on the claim reads the data back;
 * - an inline CSI ephemeral volume gets the pod's info (podInfoOnMount) and is never staged;
 * - a generic ephemeral volume mounts the `<pod>-<volume>` claim the pod owns;
 * - volumes not ready (not attached, claim not bound, claim not the pod's) keep their pods in
 *   ContainerCreating with FailedAttachVolume / FailedMount events, never Failed; attaching
 *   and binding let them start, and volumesInUse lists the attached volume;
 * - the driver killed mid-pod: the pod runs on, its deletion waits (mount and data kept) for
 *   the driver to return, then the volume is unpublished and unstaged;
 * - the agent restarted: a running pod is adopted (same container, its volume never torn down;
 *   at most one idempotent re-stage, as upstream's reconstruction), the volume of a pod deleted
 *   meanwhile is unpublished and unstaged;
 * - the Summary API and /metrics show the claim's volume stats.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { csiAttachmentName, csiStagingPath, csiUniqueVolumeName } from '../../src/volume/csi/csi-types.js';
import { stopKubelet, waitFor } from '../support/kubelet-process.js';
import {
  claimVolume,
  csiDriverObject,
  csiE2e,
  csiPv,
  deletePod,
  execIn,
  mountedAt,
  podCsiDir,
  pvc,
  sleepCmd,
  volumePod,
  waitingCreating,
  waitRunning,
  type E2eDriver,
} from '../support/csi-e2e-fixture.js';

const fx = await csiE2e('csivol');
const { ns: NS, node: NODE, api } = fx;
const PLAIN = fx.driver('pv.csi.kubelet-ts.io');
const ATTACH = fx.driver('attach.csi.kubelet-ts.io');
const INLINE = fx.driver('inline.csi.kubelet-ts.io');
/** How long a pod may take to run once its volume is ready (the agent retries mounts with backoff). */
const START_MS = 60_000;
/** How long until a volume that is not ready shows in the pod's events. */
const EVENT_MS = 150_000;

const nsPath = (plural: string) => `/api/v1/namespaces/${NS}/${plural}`;

async function createPod(pod: Pod): Promise<string> {
  const created = await fx.create(nsPath('pods'), pod as unknown as Record<string, unknown>);
  return (created.metadata as { uid: string }).uid;
}

/** POST, then (the test playing the controllers) the status it was meant to have; returns the uid. */
async function createWithStatus(plural: string, path: string, obj: Record<string, unknown>): Promise<string> {
  await fx.create(path, obj);
  const meta = obj.metadata as { name: string; namespace?: string };
  const stored = api.store.get(plural, meta.namespace, meta.name)!;
  if (JSON.stringify(stored.status) !== JSON.stringify(obj.status)) {
    api.store.put(plural, { ...stored, status: obj.status }, 'MODIFIED');
  }
  return (stored.metadata as { uid: string }).uid;
}

/** The PV controller's part: a PV for a volume on `driver` (created), bound to the claim of that uid. */
async function boundPv(driver: E2eDriver, handle: string, claim: { name: string; uid: string }): Promise<string> {
  await driver.createVolume(handle);
  const pv = `pv-${handle}`;
  const ref = { namespace: NS, ...claim };
  await createWithStatus('persistentvolumes', '/api/v1/persistentvolumes', csiPv(pv, driver.name, handle, ref));
  return pv;
}

/** A claim bound to a new PV of a volume on `driver` (`owner`: a generic ephemeral volume's claim). */
async function boundClaim(
  driver: E2eDriver,
  claim: string,
  handle: string,
  owner?: Record<string, unknown>,
): Promise<string> {
  const pv = `pv-${handle}`;
  const uid = await createWithStatus(
    'persistentvolumeclaims',
    nsPath('persistentvolumeclaims'),
    pvc(NS, claim, pv, owner),
  );
  return boundPv(driver, handle, { name: claim, uid });
}

const answered = (driver: E2eDriver, method: string, handle: string, since = 0) =>
  driver.callsFor(method, handle, since).filter((c) => c.code === 0);

async function waitAnswered(
  driver: E2eDriver,
  method: string,
  handle: string,
  opts: { since?: number; ms?: number } = {},
) {
  const { since = 0, ms = 30_000 } = opts;
  return waitFor(
    `${driver.name} ${method} ${handle} answered`,
    ms,
    () => answered(driver, method, handle, since)[0],
    200,
  );
}

const podMountPath = (uid: string, specName: string) => join(podCsiDir(fx, uid), specName, 'mount');

async function assertNothingMounted(uid: string, stagingPath?: string): Promise<void> {
  assert.deepEqual(await mountedAt(join(fx.rootDir, 'pods', uid)), [], `mounts left for pod ${uid}`);
  if (stagingPath) assert.deepEqual(await mountedAt(stagingPath), [], `staging mount left at ${stagingPath}`);
}

const hasEvent = (pod: string, reason: string, re: RegExp) =>
  fx.events(pod).find((e) => e.reason === reason && re.test(e.message));

before(async () => {
  fx.startAgent();
  await waitFor('node registered', 60_000, () => api.store.get('nodes', undefined, NODE), 250);
  await fx.create('/apis/storage.k8s.io/v1/csidrivers', csiDriverObject(PLAIN.name, { attachRequired: false }));
  await fx.create('/apis/storage.k8s.io/v1/csidrivers', csiDriverObject(ATTACH.name, { attachRequired: true }));
  await fx.create(
    '/apis/storage.k8s.io/v1/csidrivers',
    csiDriverObject(INLINE.name, { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Ephemeral'] }),
  );
  await Promise.all([PLAIN.start(), ATTACH.start(), INLINE.start()]);
  const registered = () =>
    api.store.get('csinodes', undefined, NODE) as { spec: { drivers: { name: string }[] } } | undefined;
  await waitFor(
    'the three drivers in CSINode',
    30_000,
    () => (registered()?.spec.drivers.length === 3 ? true : undefined),
    250,
  );
});

test('a PVC pod writes, is deleted (unpublished, unstaged, nothing mounted), a second pod reads the data back', async () => {
  const pv = await boundClaim(PLAIN, 'claim-b', 'vol-b');
  const staging = csiStagingPath(fx.rootDir, PLAIN.name, 'vol-b');
  const uid = await createPod(
    volumePod(NS, NODE, 'writer', {
      volumes: [claimVolume('data', 'claim-b')],
      command: sleepCmd('echo payload-b > /data/data/hello'),
    }),
  );
  await waitRunning(fx, 'writer', START_MS);
  const stage = await waitAnswered(PLAIN, 'NodeStageVolume', 'vol-b');
  assert.equal((stage.request as { stagingTargetPath: string }).stagingTargetPath, staging);
  const publish = await waitAnswered(PLAIN, 'NodePublishVolume', 'vol-b');
  assert.equal((publish.request as { targetPath: string }).targetPath, podMountPath(uid, pv));
  await waitFor(
    'the pod wrote to the volume',
    10_000,
    () => existsSync(join(PLAIN.backingDir('vol-b'), 'hello')) || undefined,
    200,
  );
  assert.equal(readFileSync(join(PLAIN.backingDir('vol-b'), 'hello'), 'utf8'), 'payload-b\n');

  await deletePod(fx, 'writer');
  await waitAnswered(PLAIN, 'NodeUnpublishVolume', 'vol-b');
  await waitAnswered(PLAIN, 'NodeUnstageVolume', 'vol-b');
  await assertNothingMounted(uid, staging);

  const readerUid = await createPod(
    volumePod(NS, NODE, 'reader', {
      volumes: [claimVolume('data', 'claim-b')],
      command: ['sh', '-c', 'test "$(cat /data/data/hello)" = payload-b'],
      restartPolicy: 'Never',
    }),
  );
  const done = await waitFor(
    'reader finished',
    START_MS,
    () => {
      const phase = fx.getPod('reader')?.status?.phase;
      return phase === 'Succeeded' || phase === 'Failed' ? phase : undefined;
    },
    250,
  );
  assert.equal(done, 'Succeeded', "the second pod read the first pod's data");
  await deletePod(fx, 'reader');
  await waitFor(
    'reader volume unstaged',
    30_000,
    () => (answered(PLAIN, 'NodeUnstageVolume', 'vol-b').length >= 2 ? true : undefined),
    200,
  );
  await assertNothingMounted(readerUid, staging);
});

test('an inline CSI volume gets the pod info (podInfoOnMount), is not staged, goes with the pod', async () => {
  const pod = volumePod(NS, NODE, 'inline', {
    volumes: [{ name: 'inl', csi: { driver: INLINE.name, volumeAttributes: { color: 'blue' } } }],
    command: sleepCmd('echo inline > /data/inl/x'),
  });
  (pod.spec as { serviceAccountName?: string }).serviceAccountName = 'default';
  const uid = await createPod(pod);
  const running = await waitRunning(fx, 'inline', START_MS);
  const publish = INLINE.calls().find((c) => c.method === 'NodePublishVolume' && c.code === 0)!;
  assert.ok(publish, 'NodePublishVolume answered');
  const req = publish.request as { targetPath: string; volumeId: string; volumeContext: Record<string, string> };
  assert.equal(req.targetPath, podMountPath(uid, 'inl'));
  assert.deepEqual(req.volumeContext, {
    color: 'blue',
    'csi.storage.k8s.io/pod.name': 'inline',
    'csi.storage.k8s.io/pod.namespace': NS,
    'csi.storage.k8s.io/pod.uid': uid,
    'csi.storage.k8s.io/serviceAccount.name': 'default',
    'csi.storage.k8s.io/ephemeral': 'true',
  });
  assert.equal(INLINE.calls().filter((c) => c.method === 'NodeStageVolume').length, 0, 'inline volumes are not staged');
  assert.equal(await execIn(fx, running, 'cat /data/inl/x'), 'inline');
  await deletePod(fx, 'inline');
  await waitAnswered(INLINE, 'NodeUnpublishVolume', req.volumeId);
  await assertNothingMounted(uid);
});

test('a generic ephemeral volume mounts the <pod>-<volume> claim the pod owns', async () => {
  const template = { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  const uid = await createPod(
    volumePod(NS, NODE, 'gen', {
      volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: template } }],
      command: sleepCmd('echo gen > /data/scratch/y'),
    }),
  );
  // The ephemeral volume controller's part: the claim, owned (controller) by the pod, then bound.
  const owner = { apiVersion: 'v1', kind: 'Pod', name: 'gen', uid, controller: true, blockOwnerDeletion: true };
  await boundClaim(PLAIN, 'gen-scratch', 'vol-f', owner);
  const running = await waitRunning(fx, 'gen', START_MS);
  assert.equal(await execIn(fx, running, 'cat /data/scratch/y'), 'gen');
  assert.equal(readFileSync(join(PLAIN.backingDir('vol-f'), 'y'), 'utf8'), 'gen\n');
  await deletePod(fx, 'gen');
  await waitAnswered(PLAIN, 'NodeUnstageVolume', 'vol-f');
  await assertNothingMounted(uid, csiStagingPath(fx.rootDir, PLAIN.name, 'vol-f'));
});

test('pods whose volumes are not ready wait in ContainerCreating with events, never fail, then start', async () => {
  // c: an attachable driver's volume, not attached yet.
  await boundClaim(ATTACH, 'claim-c', 'vol-c');
  await createPod(
    volumePod(NS, NODE, 'attached', { volumes: [claimVolume('data', 'claim-c')], command: sleepCmd('true') }),
  );
  // d: a claim no PV is bound to.
  const claimD = await createWithStatus('persistentvolumeclaims', nsPath('persistentvolumeclaims'), pvc(NS, 'claim-d'));
  await createPod(
    volumePod(NS, NODE, 'unbound', { volumes: [claimVolume('data', 'claim-d')], command: sleepCmd('true') }),
  );
  // f: a (bound) claim named as the pod's generic ephemeral volume's, but not created for the pod.
  await boundClaim(PLAIN, 'stranger-scratch', 'vol-stranger');
  const template = { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  await createPod(
    volumePod(NS, NODE, 'stranger', {
      volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: template } }],
      command: sleepCmd('true'),
    }),
  );

  await waitFor(
    'FailedAttachVolume, FailedMount x2',
    EVENT_MS,
    () =>
      hasEvent('attached', 'FailedAttachVolume', /vol-c|pv-vol-c|data/) &&
      hasEvent('unbound', 'FailedMount', /claim-d/) &&
      hasEvent(
        'stranger',
        'FailedMount',
        new RegExp(`PVC ${NS}/stranger-scratch was not created for pod ${NS}/stranger \\(pod is not owner\\)`),
      )
        ? true
        : undefined,
    500,
  );
  for (const name of ['attached', 'unbound', 'stranger']) {
    assert.ok(
      waitingCreating(fx.getPod(name)),
      `${name} waits in ContainerCreating: ${JSON.stringify(fx.getPod(name)?.status)}`,
    );
  }
  assert.equal(answered(ATTACH, 'NodeStageVolume', 'vol-c').length, 0, 'nothing staged before the attach');

  // The attach/detach controller's part: an attached VolumeAttachment, then node.status.volumesAttached.
  const unique = csiUniqueVolumeName(ATTACH.name, 'vol-c');
  const vaName = csiAttachmentName('vol-c', ATTACH.name, NODE);
  await createWithStatus('volumeattachments', '/apis/storage.k8s.io/v1/volumeattachments', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name: vaName },
    spec: { attacher: ATTACH.name, nodeName: NODE, source: { persistentVolumeName: 'pv-vol-c' } },
    status: { attached: true, attachmentMetadata: { lun: '7' } },
  });
  const patched = await api.call(
    'PATCH',
    `/api/v1/nodes/${NODE}/status`,
    { status: { volumesAttached: [{ name: unique, devicePath: '' }] } },
    'application/merge-patch+json',
  );
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  // The PV controller's part: a PV bound to claim-d.
  await boundPv(PLAIN, 'vol-d', { name: 'claim-d', uid: claimD });
  const claim = api.store.get('persistentvolumeclaims', NS, 'claim-d')!;
  api.store.put(
    'persistentvolumeclaims',
    {
      ...claim,
      spec: { ...(claim.spec as object), volumeName: 'pv-vol-d' },
      status: pvc(NS, 'claim-d', 'pv-vol-d').status as object,
    },
    'MODIFIED',
  );

  await waitRunning(fx, 'attached', START_MS);
  await waitRunning(fx, 'unbound', START_MS);
  const stage = await waitAnswered(ATTACH, 'NodeStageVolume', 'vol-c');
  assert.deepEqual((stage.request as { publishContext?: Record<string, string> }).publishContext, { lun: '7' });
  const inUse = () =>
    (api.store.get('nodes', undefined, NODE)?.status as { volumesInUse?: string[] }).volumesInUse ?? [];
  await waitFor(
    'volumesInUse lists the attached volume',
    20_000,
    () => (inUse().includes(unique) ? true : undefined),
    250,
  );
  assert.ok(waitingCreating(fx.getPod('stranger')), 'a claim the pod does not own is never mounted');
  assert.equal(fx.getPod('stranger')?.status?.phase, 'Pending');

  for (const name of ['attached', 'unbound', 'stranger']) await deletePod(fx, name);
  await waitAnswered(ATTACH, 'NodeUnstageVolume', 'vol-c');
  await waitAnswered(PLAIN, 'NodeUnstageVolume', 'vol-d');
  await waitFor('volumesInUse no longer lists it', 20_000, () => (inUse().includes(unique) ? undefined : true), 250);
});

test('the driver killed mid-pod: the pod runs on; its teardown waits for the driver, nothing lost', async () => {
  const pv = await boundClaim(PLAIN, 'claim-g', 'vol-g');
  const uid = await createPod(
    volumePod(NS, NODE, 'survivor', {
      volumes: [claimVolume('data', 'claim-g')],
      command: sleepCmd('echo kept > /data/data/z'),
    }),
  );
  const running = await waitRunning(fx, 'survivor', START_MS);
  const since = PLAIN.calls().length;
  let finishedEarly: boolean | undefined;
  await PLAIN.stop('SIGKILL');
  try {
    await new Promise((r) => setTimeout(r, 3000));
    const still = fx.getPod('survivor');
    assert.equal(still?.status?.phase, 'Running');
    assert.equal(
      still?.status?.containerStatuses?.[0]?.containerID,
      running.status?.containerStatuses?.[0]?.containerID,
    );
    assert.equal(await execIn(fx, running, 'cat /data/data/z'), 'kept');

    const r = await api.call('DELETE', `${nsPath('pods')}/survivor`);
    assert.equal(r.status, 200);
    await new Promise((res) => setTimeout(res, 8000));
    const target = podMountPath(uid, pv);
    assert.deepEqual(await mountedAt(target), [target], 'the publish mount stays while the driver is down');
    assert.equal(readFileSync(join(PLAIN.backingDir('vol-g'), 'z'), 'utf8'), 'kept\n');
    // Asserted last, so that the teardown after the driver's return is checked either way.
    finishedEarly = fx.getPod('survivor') === undefined;
  } finally {
    await PLAIN.start();
  }
  await waitAnswered(PLAIN, 'NodeUnpublishVolume', 'vol-g', { since, ms: 60_000 });
  await waitAnswered(PLAIN, 'NodeUnstageVolume', 'vol-g', { since, ms: 30_000 });
  await waitFor('survivor gone', 30_000, () => (fx.getPod('survivor') ? undefined : true), 250);
  await assertNothingMounted(uid, csiStagingPath(fx.rootDir, PLAIN.name, 'vol-g'));
  assert.equal(readFileSync(join(PLAIN.backingDir('vol-g'), 'z'), 'utf8'), 'kept\n');
  // upstream podResourcesAreReclaimed: the pod object stays until its volumes are unmounted.
  assert.equal(finishedEarly, false, 'the pod left the API while its volume was still mounted');
});

test('the agent restarted: a running pod is adopted, a pod deleted meanwhile is unpublished and unstaged', async () => {
  await boundClaim(PLAIN, 'claim-h1', 'vol-h1');
  await boundClaim(PLAIN, 'claim-h2', 'vol-h2');
  await createPod(
    volumePod(NS, NODE, 'kept', {
      volumes: [claimVolume('data', 'claim-h1')],
      command: sleepCmd('echo h1 > /data/data/k'),
    }),
  );
  const goneUid = await createPod(
    volumePod(NS, NODE, 'gone', { volumes: [claimVolume('data', 'claim-h2')], command: sleepCmd('true') }),
  );
  const kept = await waitRunning(fx, 'kept', START_MS);
  await waitRunning(fx, 'gone', START_MS);
  assert.equal(answered(PLAIN, 'NodeStageVolume', 'vol-h1').length, 1);

  await stopKubelet(fx.kubelet!);
  const since = PLAIN.calls().length;
  const r = await api.call('DELETE', `${nsPath('pods')}/gone`, { gracePeriodSeconds: 0 });
  assert.equal(r.status, 200);
  fx.startAgent();

  // Housekeeping tears down an orphan whose pod runs no more (upstream: the reconciler, at once).
  await waitAnswered(PLAIN, 'NodeUnpublishVolume', 'vol-h2', { since, ms: 30_000 });
  await waitAnswered(PLAIN, 'NodeUnstageVolume', 'vol-h2', { since, ms: 30_000 });
  await assertNothingMounted(goneUid, csiStagingPath(fx.rootDir, PLAIN.name, 'vol-h2'));
  // Adopted: the same container, still running, its data there; the volume neither re-staged nor torn down.
  await waitFor(
    'the agent reports kept again',
    30_000,
    () => {
      const p = fx.getPod('kept');
      return p?.status?.containerStatuses?.[0]?.ready ? true : undefined;
    },
    250,
  );
  const after = fx.getPod('kept')!;
  assert.equal(after.status?.containerStatuses?.[0]?.containerID, kept.status?.containerStatuses?.[0]?.containerID);
  assert.equal(after.status?.containerStatuses?.[0]?.restartCount, 0);
  assert.equal(await execIn(fx, after, 'cat /data/data/k'), 'h1');
  // upstream reconstructs a mounted volume as "uncertain" and stages it again (CSI calls are
  // idempotent): at most once, at the same staging path.
  const restaged = answered(PLAIN, 'NodeStageVolume', 'vol-h1', since);
  assert.ok(restaged.length <= 1, `staged ${restaged.length} times after the restart`);
  const staging = csiStagingPath(fx.rootDir, PLAIN.name, 'vol-h1');
  for (const c of restaged) assert.equal((c.request as { stagingTargetPath: string }).stagingTargetPath, staging);
  for (const m of ['NodeUnpublishVolume', 'NodeUnstageVolume']) {
    assert.equal(PLAIN.callsFor(m, 'vol-h1', since).length, 0, `no ${m} of the adopted volume`);
  }
});

test("the Summary API and /metrics show the claim volume's stats", async () => {
  interface VolStats {
    name: string;
    usedBytes?: number;
    capacityBytes?: number;
    pvcRef?: { name: string; namespace: string };
  }
  const summaryVolume = async () => {
    const r = await fx.get('/stats/summary');
    assert.equal(r.status, 200, r.body);
    const pods = (JSON.parse(r.body) as { pods: { podRef: { name: string }; volume?: VolStats[] }[] }).pods;
    return pods.find((p) => p.podRef.name === 'kept')?.volume?.find((v) => v.name === 'data');
  };
  const vol = await waitFor(
    "kept's volume in the Summary",
    60_000,
    async () => ((await summaryVolume())?.pvcRef ? summaryVolume() : undefined),
    1000,
  );
  assert.deepEqual(vol!.pvcRef, { name: 'claim-h1', namespace: NS });
  assert.ok(
    typeof vol!.usedBytes === 'number' && typeof vol!.capacityBytes === 'number' && vol!.capacityBytes > 0,
    JSON.stringify(vol),
  );
  const line = await waitFor(
    'kubelet_volume_stats_used_bytes of claim-h1',
    30_000,
    async () => {
      const m = await fx.get('/metrics');
      return m.body
        .split('\n')
        .find(
          (l) =>
            l.startsWith('kubelet_volume_stats_used_bytes{') &&
            l.includes(`persistentvolumeclaim="claim-h1"`) &&
            l.includes(`namespace="${NS}"`),
        );
    },
    1000,
  );
  assert.match(line, / \d+(\.\d+)?(e[+-]?\d+)?$/);
  await deletePod(fx, 'kept');
  await waitAnswered(PLAIN, 'NodeUnstageVolume', 'vol-h1');
});
