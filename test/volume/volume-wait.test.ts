/**
 * Waiting for CSI-served volumes (upstream WaitForAttachAndMount and the desired state
 * populator): the volume manager resolves PVC / ephemeral / csi volumes, reports which are
 * unmounted, unattached or not processed, lists attachable ones in volumesInUse; the kubelet does
 * not start a pod while one is not set up (FailedMount / FailedAttachVolume events, Pending,
 * ContainerCreating) and starts it once the claim binds. Other plugins keep their behaviour.
 */
import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { Recorder } from '../../src/events/index.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { createPodStatusCache } from '../../src/pleg/index.js';
import { createStatusManager } from '../../src/status/index.js';
import { isCsiVolume, resolveCsiVolume } from '../../src/volume/csi/csi-resolve.js';
import { CSI_POD_PLUGIN_DIR, csiAttachmentName, type CsiVolumeSpec } from '../../src/volume/csi/csi-types.js';
import {
  createVolumeManager,
  DEFAULT_VOLUME_PLUGINS,
  volumesNotReady,
  VolumesNotReadyError,
  type VolumePlugin,
} from '../../src/volume/index.js';
import { podVolumeDir } from '../../src/volume/pod-dirs.js';
import type { MountedVolume, Volume, VolumeHost } from '../../src/volume/types.js';
import { FakeMounter } from '../fakes/fake-mounter.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';
import { FakeStorage } from '../fakes/fake-storage.js';
import { FakePLEG } from '../kubelet/fake-pleg.js';
import { container, makePod } from '../kuberuntime/helpers.js';
import { testTempDir } from '../support/temp-dir.js';
import { Updates, until } from '../fakes/pod-updates.js';

const DRIVER = 'hostpath.csi.example.com';
const UNIQUE = `kubernetes.io/csi/${DRIVER}^vol-1`;

let dir: string;
before(() => {
  dir = testTempDir('volume-wait-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A stand-in for the CSI plugin: a directory per volume; fails while `failing` is set; teardown may refuse. */
class FakeCsiPlugin implements VolumePlugin {
  readonly name = CSI_POD_PLUGIN_DIR;
  readonly requiresRemount = false;
  failing: string | undefined;
  stuck = false;
  setUps: string[] = [];
  canSupport(volume: Volume): boolean {
    return isCsiVolume(volume);
  }
  async setUp(pod: Pod, volume: Volume, host: VolumeHost): Promise<MountedVolume> {
    this.setUps.push(volume.name);
    if (this.failing) throw new Error(this.failing);
    const path = podVolumeDir(host.rootDir, pod.metadata!.uid!, this.name, volume.name);
    await mkdir(path, { recursive: true });
    return { hostPath: path, readOnly: false };
  }
  async tearDown(path: string): Promise<void> {
    if (this.stuck) throw new Error('driver down');
    await rm(path, { recursive: true, force: true });
  }
}

function podWith(volumes: Volume[]): Pod {
  const pod = makePod({
    containers: [container('a', { volumeMounts: volumes.map((v) => ({ name: v.name, mountPath: `/${v.name}` })) })],
  });
  pod.spec!.volumes = volumes;
  return pod;
}

const pvc: Volume = { name: 'data', persistentVolumeClaim: { claimName: 'data' } };

/** Claim default/data, Pending until `bind` is called. */
function pendingClaim(attachRequired = false): { storage: FakeStorage; bind: () => void } {
  const storage = new FakeStorage();
  storage.drivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { attachRequired } });
  storage.claims.set('default/data', {
    metadata: { name: 'data', namespace: 'default' },
    status: { phase: 'Pending' },
  });
  const bind = () => storage.addBoundClaim('default', 'data', { pvName: 'pv-1', driver: DRIVER, handle: 'vol-1' });
  return { storage, bind };
}

function manager(name: string, storage: FakeStorage | undefined, plugin = new FakeCsiPlugin()) {
  const rootDir = join(dir, name);
  const vm = createVolumeManager({
    rootDir,
    mounter: new FakeMounter(),
    nodeName: 'node-a',
    ...(storage ? { storage } : {}),
    plugins: [plugin, ...DEFAULT_VOLUME_PLUGINS], // probed before the real CSI plugin
  });
  return { vm, plugin, rootDir };
}

describe('volume manager: CSI-served volumes', () => {
  it('an unbound claim is "failed to process" (no per-volume event); once bound it is set up', async () => {
    const { storage, bind } = pendingClaim();
    const { vm, plugin } = manager('unbound', storage);
    const pod = podWith([pvc, { name: 'scratch', emptyDir: {} }]);
    const err = volumesNotReady(pod, await vm.mountPodVolumes(pod));
    assert.ok(err instanceof VolumesNotReadyError);
    assert.deepEqual([err.unmounted, err.unattached, err.unprocessed], [['data'], [], ['data']]);
    assert.equal(
      err.message,
      'unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: volume data: error processing PVC default/data: PVC default/data has non-bound phase ("Pending") or empty pvc.Spec.VolumeName ("")',
    );
    assert.deepEqual(
      err.events.map((e) => e.reason),
      ['FailedMount'],
    );
    assert.equal(err.events[0]!.message, `Unable to attach or mount volumes: ${err.message}`);
    assert.deepEqual(plugin.setUps, [], 'the plugin is not called for an unresolved volume');
    bind();
    const ok = await vm.mountPodVolumes(pod);
    assert.equal(volumesNotReady(pod, ok), undefined);
    assert.deepEqual([...ok.mounted.keys()].sort(), ['data', 'scratch']);
    assert.deepEqual(vm.getVolumesInUse(), [], 'a driver without attach is never in use');
  });

  it('an attachable volume: in use before it is attached (FailedAttachVolume), until its teardown succeeds', async () => {
    const { storage, bind } = pendingClaim(true);
    bind();
    const { vm, plugin } = manager('attach', storage);
    const pod = podWith([pvc]);
    const err = volumesNotReady(pod, await vm.mountPodVolumes(pod))!;
    assert.deepEqual([err.unmounted, err.unattached, err.unprocessed], [['data'], ['data'], []]);
    assert.deepEqual(
      err.events.map((e) => e.reason),
      ['FailedAttachVolume', 'FailedMount'],
    );
    assert.match(err.events[0]!.message, /^Volume not attached according to node status for volume "pv-1"/);
    assert.deepEqual(vm.getVolumesInUse(), [UNIQUE], 'reported in use while it waits for the attach');

    storage.attached.add(UNIQUE);
    storage.attachments.set(csiAttachmentName('vol-1', DRIVER, 'node-a'), {
      spec: {} as never,
      status: { attached: true },
    });
    assert.equal(volumesNotReady(pod, await vm.mountPodVolumes(pod)), undefined);
    assert.deepEqual(vm.getVolumesInUse(), [UNIQUE]);

    plugin.stuck = true;
    await assert.rejects(vm.unmountPodVolumes('uid-1234'), /driver down/);
    assert.deepEqual(vm.getVolumesInUse(), [UNIQUE], 'still mounted: still in use');
    plugin.stuck = false;
    await vm.unmountPodVolumes('uid-1234');
    assert.deepEqual(vm.getVolumesInUse(), []);
  });

  it("a plugin's error is MountVolume.SetUp failed (FailedMount for the volume)", async () => {
    const { storage, bind } = pendingClaim();
    bind();
    const plugin = new FakeCsiPlugin();
    plugin.failing = 'rpc error: code = Internal desc = mkfs failed';
    const { vm } = manager('setup', storage, plugin);
    const pod = podWith([pvc]);
    const err = volumesNotReady(pod, await vm.mountPodVolumes(pod))!;
    assert.deepEqual([err.unattached, err.unprocessed], [[], []]);
    assert.deepEqual(err.events[0], {
      reason: 'FailedMount',
      message: 'MountVolume.SetUp failed for volume "pv-1" : rpc error: code = Internal desc = mkfs failed',
    });
  });

  it('the CSI plugin sets up the spec just resolved (setUpResolved): one GET of each object per attempt', async () => {
    const { storage, bind } = pendingClaim();
    bind();
    const resolved: string[] = [];
    class ResolvingPlugin extends FakeCsiPlugin {
      async setUpResolved(pod: Pod, volume: Volume, spec: CsiVolumeSpec, host: VolumeHost): Promise<MountedVolume> {
        resolved.push(spec.volumeHandle);
        return super.setUp(pod, volume, host);
      }
    }
    const { vm } = manager('reuse', storage, new ResolvingPlugin());
    const pod = podWith([pvc]);
    assert.equal(volumesNotReady(pod, await vm.mountPodVolumes(pod)), undefined);
    assert.deepEqual(resolved, ['vol-1']);
    assert.deepEqual(
      storage.calls.filter((c) => !c.startsWith('csidriver')),
      ['pvc default/data', 'pv pv-1'],
    );
    // A lookup of its own is a fresh one.
    const host = { rootDir: '/x', mounter: new FakeMounter(), allocatable: { cpu: 1, memory: 1 }, storage };
    await resolveCsiVolume(pod, pvc, { ...host, nodeName: 'node-a', hostIP: '' });
    assert.equal(storage.calls.filter((c) => c === 'pvc default/data').length, 2);
  });

  it('volumes of other plugins never hold the pod back (their containers report the error)', async () => {
    const { vm } = manager('others', undefined);
    const pod = podWith([{ name: 'cfg', configMap: { name: 'missing' } }]);
    const r = await vm.mountPodVolumes(pod);
    assert.equal(r.errors.size, 1);
    assert.equal(volumesNotReady(pod, r), undefined);
  });

  it('getVolumesInUse is sorted and unique across pods', async () => {
    const storage = new FakeStorage();
    storage.drivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { attachRequired: true } });
    storage.addBoundClaim('default', 'b', { pvName: 'pv-b', driver: DRIVER, handle: 'h-b' });
    storage.addBoundClaim('default', 'a', { pvName: 'pv-a', driver: DRIVER, handle: 'h-a' });
    const { vm } = manager('inuse', storage);
    const p1 = podWith([{ name: 'b', persistentVolumeClaim: { claimName: 'b' } }]);
    const p2 = podWith([
      { name: 'a', persistentVolumeClaim: { claimName: 'a' } },
      { name: 'b', persistentVolumeClaim: { claimName: 'b' } },
    ]);
    p2.metadata!.uid = 'uid-2';
    await vm.mountPodVolumes(p1);
    await vm.mountPodVolumes(p2);
    assert.deepEqual(vm.getVolumesInUse(), [`kubernetes.io/csi/${DRIVER}^h-a`, `kubernetes.io/csi/${DRIVER}^h-b`]);
  });
});

describe('the kubelet waits for CSI volumes (upstream SyncPod → WaitForAttachAndMount)', () => {
  it('a pod with an unbound PVC stays Pending/ContainerCreating with FailedMount, and starts once it binds', async () => {
    const { storage, bind } = pendingClaim();
    const { kubelet, runtime, statusManager, recorder, updates, stop } = startKubelet('kubelet', storage);
    const pod = podWith([pvc]);
    pod.metadata!.annotations = { 'kubernetes.io/config.source': 'api' };
    updates.push({ op: 'ADD', pods: [pod], source: 'api' });
    const events = () => recorder.recent().filter((e) => e.involvedObject.uid === 'uid-1234');
    await until('FailedMount', () => events().some((e) => e.reason === 'FailedMount'));
    const failed = events().find((e) => e.reason === 'FailedMount')!;
    assert.equal(failed.type, 'Warning');
    assert.match(
      failed.message,
      /^Unable to attach or mount volumes: unmounted volumes=\[data\], unattached volumes=\[\], failed to process volumes=\[data\]: .*non-bound phase/,
    );
    assert.ok(!runtime.synced.includes('uid-1234'), 'no sandbox while a volume is not mounted');
    const status = statusManager.getPodStatus('uid-1234')!;
    assert.equal(status.phase, 'Pending');
    assert.deepEqual(
      status.containerStatuses?.map((c) => c.state?.waiting?.reason),
      ['ContainerCreating'],
    );

    bind();
    kubelet.handlePodSyncs([pod]); // the worker's back-off expiring
    await until('synced once bound', () => runtime.synced.includes('uid-1234'));
    assert.notEqual(statusManager.getPodStatus('uid-1234')?.phase, 'Failed');
    await stop();
  });

  it('standalone mode: the pod is refused at admission naming the field, not left waiting', async () => {
    const { runtime, statusManager, updates, stop } = startKubelet('standalone', undefined);
    const pod = podWith([pvc]);
    pod.metadata!.annotations = { 'kubernetes.io/config.source': 'api' };
    updates.push({ op: 'ADD', pods: [pod], source: 'api' });
    await until('rejected', () => statusManager.getPodStatus('uid-1234')?.phase === 'Failed');
    const status = statusManager.getPodStatus('uid-1234')!;
    assert.equal(status.reason, 'PodFeatureUnsupported');
    assert.match(
      status.message ?? '',
      /^Pod was rejected: spec\.volumes\[0\]\.persistentVolumeClaim is not supported .*needs the API server/,
    );
    assert.ok(!runtime.synced.includes('uid-1234'));
    await stop();
  });
});

const running: Array<() => Promise<void>> = [];
after(async () => {
  for (const stop of running) await stop();
});

/** A Kubelet over the real volume manager (API server mode when `storage` is given), running. */
function startKubelet(name: string, storage: FakeStorage | undefined) {
  const { vm, rootDir } = manager(name, storage);
  const runtime = new FakeRuntime();
  const cache = createPodStatusCache();
  const statusManager = createStatusManager();
  const recorder = new Recorder();
  const kubelet = new Kubelet({
    nodeName: 'n',
    hostIP: '192.0.2.1',
    rootDir,
    volumeManager: vm,
    maxPods: 110,
    syncFrequencyMs: 60_000,
    runtime,
    pleg: new FakePLEG(runtime, cache),
    cache,
    statusManager,
    recorder,
    apiServer: storage !== undefined,
    sources: new Set(['api']),
    syncPeriodMs: 20,
    housekeepingPeriodMs: 30,
  });
  const updates = new Updates();
  const done = kubelet.run(updates);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      kubelet.stop();
      await done;
      await kubelet.podWorkers.idle();
    })());
  running.push(stop); // a failed assertion must not leave the kubelet running (the file would never end)
  return { kubelet, runtime, statusManager, recorder, updates, stop };
}
