/**
 * The volume manager (upstream volumemanager): desired state from the containers' volumeMounts,
 * set-up once (or on every sync when the plugin requires remount), one failing volume reported
 * without disturbing the others, teardown through the plugins; and the kubelet's order: volumes
 * mounted before the runtime's SyncPod, torn down after the pod's containers are killed.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { VolumeError } from '../../src/errors.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import type { RunningPod } from '../../src/kuberuntime/types.js';
import { createPodStatusCache } from '../../src/pleg/index.js';
import { createStatusManager } from '../../src/status/index.js';
import { createVolumeManager, DEFAULT_VOLUME_PLUGINS, type VolumePlugin } from '../../src/volume/index.js';
import { podVolumeDir } from '../../src/volume/pod-dirs.js';
import { hugePagesMountSize } from '../../src/volume/plugins/empty-dir.js';
import { FakeMounter } from '../fakes/fake-mounter.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';
import { FakeVolumeManager } from '../fakes/fake-volume-manager.js';
import { FakePLEG } from '../kubelet/fake-pleg.js';
import { container, makePod } from '../kuberuntime/helpers.js';
import { testTempDir } from '../support/temp-dir.js';

let dir: string;
before(() => {
  dir = testTempDir('volume-manager-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A plugin for `nfs` volumes (what an out-of-tree plugin would be; CSI-served volumes are
 * resolved first and hold the pod back, test/volume/volume-wait.test.ts): counts its calls,
 * fails while `failing`.
 */
class CountingPlugin implements VolumePlugin {
  readonly name = 'example.com~counting';
  setUps = 0;
  tearDowns: string[] = [];
  failing = false;
  constructor(readonly requiresRemount: boolean) {}
  canSupport(volume: { nfs?: unknown }): boolean {
    return volume.nfs !== undefined;
  }
  async setUp(pod: Pod, volume: { name: string }, host: { rootDir: string }) {
    this.setUps++;
    if (this.failing) throw new VolumeError(`volume ${volume.name}: the driver is not registered`);
    const dir = podVolumeDir(host.rootDir, pod.metadata!.uid!, this.name, volume.name);
    await mkdir(dir, { recursive: true });
    return { hostPath: dir, readOnly: false };
  }
  async tearDown(dir: string) {
    this.tearDowns.push(dir);
    await rm(dir, { recursive: true, force: true });
  }
}

function podWith(volumes: NonNullable<Pod['spec']>['volumes'], mounts: string[]): Pod {
  const pod = makePod({
    containers: [container('a', { volumeMounts: mounts.map((name) => ({ name, mountPath: `/${name}` })) })],
  });
  pod.spec!.volumes = volumes;
  return pod;
}

describe('VolumeManager', () => {
  it('sets up only the volumes a container mounts; re-mounting is idempotent, remount plugins are set up again', async () => {
    const root = join(dir, 'idempotent');
    const mounter = new FakeMounter();
    const once = new CountingPlugin(false);
    const vm = createVolumeManager({
      rootDir: root,
      mounter,
      allocatable: { cpu: 1000, memory: 2 ** 30 },
      plugins: [once, ...DEFAULT_VOLUME_PLUGINS],
    });
    const pod = podWith(
      [
        { name: 'mem', emptyDir: { medium: 'Memory' } },
        { name: 'ext', nfs: { server: 'nfs.example', path: '/x' } },
        { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
        { name: 'unused', emptyDir: {} },
      ],
      ['mem', 'ext', 'info'],
    );
    const first = await vm.mountPodVolumes(pod);
    assert.deepEqual([...first.mounted.keys()].sort(), ['ext', 'info', 'mem']);
    assert.equal(first.errors.size, 0);
    assert.equal(
      existsSync(podVolumeDir(root, 'uid-1234', 'kubernetes.io~empty-dir', 'unused')),
      false,
      'a volume no container mounts is not set up',
    );
    const tmpfsMounts = mounter.mountCalls;
    pod.metadata!.name = 'renamed';
    await vm.mountPodVolumes(pod);
    assert.equal(once.setUps, 1, 'set up once');
    assert.equal(mounter.mountCalls, tmpfsMounts, 'no tmpfs mounted twice');
    const info = vm.getMountedVolumesForPod('uid-1234').mounted.get('info')!;
    assert.equal(info.readOnly, true);
    assert.equal(
      await readFile(join(info.hostPath, 'name'), 'utf8'),
      'renamed',
      'API data volumes are refreshed on every mount',
    );
  });

  it('a failing plugin reports its error and does not disturb the other volumes; a later mount clears it', async () => {
    const root = join(dir, 'failing');
    const flaky = new CountingPlugin(false);
    flaky.failing = true;
    const vm = createVolumeManager({
      rootDir: root,
      mounter: new FakeMounter(),
      plugins: [flaky, ...DEFAULT_VOLUME_PLUGINS],
    });
    const pod = podWith(
      [
        { name: 'ext', nfs: { server: 'nfs.example', path: '/x' } },
        { name: 'scratch', emptyDir: {} },
        { name: 'odd', gitRepo: { repository: 'r' } },
      ],
      ['ext', 'scratch', 'odd'],
    );
    const r = await vm.mountPodVolumes(pod);
    assert.deepEqual([...r.mounted.keys()], ['scratch']);
    assert.match(r.errors.get('ext')!.message, /volume ext: the driver is not registered/);
    assert.match(r.errors.get('odd')!.message, /volume odd: type gitRepo is not supported yet/);
    assert.ok(r.errors.get('ext') instanceof VolumeError);
    flaky.failing = false;
    const again = await vm.mountPodVolumes(pod);
    assert.deepEqual([...again.mounted.keys()].sort(), ['ext', 'scratch']);
    assert.deepEqual([...again.errors.keys()], ['odd']);
  });

  it('emptyDir HugePages[-<size>]: a hugetlbfs with the page size (upstream getPageSizeMountOption)', async () => {
    const root = join(dir, 'hugepages');
    const mounter = new FakeMounter();
    const vm = createVolumeManager({ rootDir: root, mounter });
    const pod = podWith(
      [
        { name: 'hp', emptyDir: { medium: 'HugePages' } },
        { name: 'g', emptyDir: { medium: 'HugePages-1Gi' } },
      ],
      ['hp', 'g'],
    );
    pod.spec!.containers[0]!.resources = { limits: { 'hugepages-2Mi': '4Mi', memory: '8Mi' } };
    const r = await vm.mountPodVolumes(pod);
    assert.equal(r.errors.size, 0);
    assert.equal(mounter.hugetlbfs.get(podVolumeDir(root, 'uid-1234', 'kubernetes.io~empty-dir', 'hp')), '2Mi');
    assert.equal(mounter.hugetlbfs.get(podVolumeDir(root, 'uid-1234', 'kubernetes.io~empty-dir', 'g')), '1Gi');
    await vm.unmountPodVolumes('uid-1234');
    assert.equal(mounter.hugetlbfs.size, 0);
  });

  it('emptyDir HugePages: no page size asked for, or several, is an error naming the volume', () => {
    const p = (limits: Record<string, string>) => {
      const pod = podWith([], []);
      pod.spec!.containers[0]!.resources = { limits };
      return pod;
    };
    assert.throws(() => hugePagesMountSize(p({ memory: '1Mi' }), 'hp', 'HugePages'), /volume hp: .*needs a container/);
    assert.throws(
      () => hugePagesMountSize(p({ 'hugepages-2Mi': '2Mi', 'hugepages-1Gi': '1Gi' }), 'hp', 'HugePages'),
      /several page sizes/,
    );
    assert.throws(() => hugePagesMountSize(p({}), 'hp', 'HugePages-x'), /medium HugePages-x is not supported/);
  });

  it('unmountPodVolumes tears each volume down through its plugin, then the pod directories; unknown plugins are left alone', async () => {
    const root = join(dir, 'teardown');
    const mounter = new FakeMounter();
    const ext = new CountingPlugin(false);
    const vm = createVolumeManager({ rootDir: root, mounter, plugins: [ext, ...DEFAULT_VOLUME_PLUGINS] });
    const pod = podWith(
      [
        { name: 'ext', nfs: { server: 'nfs.example', path: '/x' } },
        { name: 'mem', emptyDir: { medium: 'Memory' } },
      ],
      ['ext', 'mem'],
    );
    await vm.mountPodVolumes(pod);
    assert.equal(mounter.mounts.size, 1);
    await vm.unmountPodVolumes('uid-1234');
    assert.equal(mounter.mounts.size, 0);
    assert.deepEqual(ext.tearDowns, [podVolumeDir(root, 'uid-1234', ext.name, 'ext')]);
    assert.equal(existsSync(join(root, 'pods', 'uid-1234')), false);
    assert.equal(vm.getMountedVolumesForPod('uid-1234').mounted.size, 0, 'the actual state forgets the pod');
    // A directory of a plugin this manager does not know (another agent's) is not deleted.
    const foreign = join(root, 'pods', 'uid-9', 'volumes', 'example.com~unknown', 'v');
    await mkdir(foreign, { recursive: true });
    await vm.unmountPodVolumes('uid-9');
    assert.equal(existsSync(foreign), true);
  });

  it('podVolumesExist: set up volumes, or a CSI record left on disk, until the teardown (upstream podVolumesExist)', async () => {
    const root = join(dir, 'exist');
    const ext = new CountingPlugin(false);
    const vm = createVolumeManager({ rootDir: root, mounter: new FakeMounter(), plugins: [ext] });
    const pod = podWith([{ name: 'ext', nfs: { server: 'nfs.example', path: '/x' } }], ['ext']);
    assert.equal(await vm.podVolumesExist('uid-1234'), false, 'nothing yet');
    await vm.mountPodVolumes(pod);
    assert.equal(await vm.podVolumesExist('uid-1234'), true);
    await vm.unmountPodVolumes('uid-1234');
    assert.equal(await vm.podVolumesExist('uid-1234'), false);
    // After a restart: only the record a CSI publish left (its driver down) says so.
    const record = join(root, 'pods', 'uid-7', 'volumes', 'kubernetes.io~csi', 'pv-1');
    await mkdir(record, { recursive: true });
    assert.equal(await vm.podVolumesExist('uid-7'), true);
  });

  it('two teardowns of one pod at once share one run (housekeeping and the runtime GC both ask)', async () => {
    const root = join(dir, 'twice');
    const ext = new CountingPlugin(false);
    const vm = createVolumeManager({ rootDir: root, mounter: new FakeMounter(), plugins: [ext] });
    await vm.mountPodVolumes(podWith([{ name: 'ext', nfs: { server: 'nfs.example', path: '/x' } }], ['ext']));
    await Promise.all([vm.unmountPodVolumes('uid-1234'), vm.unmountPodVolumes('uid-1234')]);
    assert.equal(ext.tearDowns.length, 1);
  });
});

describe('the kubelet and the volume manager', () => {
  /** The fake runtime, its calls in the shared log. */
  class LoggingRuntime extends FakeRuntime {
    constructor(readonly calls: string[]) {
      super();
    }
    override async syncPod(pod: Pod) {
      this.calls.push(`syncPod ${pod.metadata!.uid}`);
      return super.syncPod(pod);
    }
    override async killPod(pod: Pod | undefined, running: RunningPod, grace?: number) {
      this.calls.push(`killPod ${running.uid}`);
      return super.killPod(pod, running, grace);
    }
  }

  it("mounts a pod's volumes before the runtime syncs it, and tears them down after its containers are killed", async () => {
    const calls: string[] = [];
    const runtime = new LoggingRuntime(calls);
    const cache = createPodStatusCache();
    const kubelet = new Kubelet({
      nodeName: 'n',
      hostIP: '192.0.2.1',
      rootDir: join(dir, 'kubelet'),
      maxPods: 110,
      syncFrequencyMs: 60_000,
      runtime,
      volumeManager: new FakeVolumeManager(calls),
      pleg: new FakePLEG(runtime, cache),
      cache,
      statusManager: createStatusManager(),
      sources: new Set(['file']),
    });
    const pod = podWith([{ name: 'scratch', emptyDir: {} }], ['scratch']);
    const ctx = { signal: new AbortController().signal };
    await kubelet.runtimeState.update(); // NetworkReady from the runtime, as run() does first
    await kubelet.syncPod(ctx, 'create', pod, undefined);
    await kubelet.syncTerminatingPod(ctx, pod, undefined, { gracePeriodSeconds: 1, statusFn: undefined });
    await kubelet.syncTerminatedPod(ctx, pod, undefined);
    assert.deepEqual(calls, ['mount uid-1234', 'syncPod uid-1234', 'killPod uid-1234', 'unmount uid-1234']);
  });
});
