/**
 * The CSI volume plugin against the real test driver (test/support/csi-driver.ts, a process of
 * its own doing real bind mounts; root needed), on a temporary root dir. The cases follow
 * upstream pkg/volume/csi/csi_mounter_test.go (TestMounterSetUp, TestMounterSetUpWithFSGroup,
 * TestUnmounterTeardown, TestUnmounterTeardownNoClientError) and csi_attacher_test.go
 * (TestAttacherMountDevice / TestAttacherUnmountDevice), plus the restart cases of issue 29.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chown, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../../../src/api/types.js';
import { VolumeError } from '../../../src/errors.js';
import { createCsiPlugin, type CsiVolumePlugin } from '../../../src/volume/csi/csi-plugin.js';
import { kubeletAppliesFsGroup } from '../../../src/volume/csi/csi-mounter.js';
import {
  csiStagingDir,
  csiStagingPath,
  DEFAULT_DRIVER_POLICY,
  type CsiDriverPolicy,
  type CsiVolumeSpec,
} from '../../../src/volume/csi/csi-types.js';
import { createVolumeManager } from '../../../src/volume/index.js';
import { hostMounter, mountAt, mountTmpfs, unmount } from '../../../src/volume/mount.js';
import type { Volume, VolumeHost } from '../../../src/volume/types.js';
import { readCallLog, type CsiCall } from '../../support/csi-driver.js';
import { spawnCsiDriver, type CsiDriverProcess } from '../../support/csi-driver-process.js';
import { testTempDir } from '../../support/temp-dir.js';

const root = testTempDir('kts-csi-plugin-');
const DRIVER = 'stage.csi.test';
const NOSTAGE = 'nostage.csi.test';
const MOUNTGROUP = 'mountgroup.csi.test';

interface Driver {
  name: string;
  stateDir: string;
  endpoint: string;
  proc?: CsiDriverProcess;
  caps?: string[];
}

const drivers = new Map<string, Driver>();
const registered = new Set<string>();
const plugins: CsiVolumePlugin[] = [];

function driverDef(name: string, caps?: string[]): Driver {
  const d = { name, stateDir: join(root, `state-${name}`), endpoint: join(root, `${name}.sock`), caps };
  drivers.set(name, d);
  return d;
}

async function start(d: Driver): Promise<void> {
  d.proc = await spawnCsiDriver({
    endpoint: d.endpoint,
    driverName: d.name,
    nodeId: 'node-1',
    stateDir: d.stateDir,
    ...(d.caps ? { nodeCapabilities: d.caps } : {}),
  });
  registered.add(d.name);
}

const host: VolumeHost = {
  rootDir: join(root, 'kubelet'),
  mounter: hostMounter,
  allocatable: { cpu: 1000, memory: 1 << 30, ephemeralStorage: 0 },
  nodeName: 'node-1',
  hostIP: '127.0.0.1',
  csiDrivers: {
    get: (name) => {
      const d = drivers.get(name);
      return d && registered.has(name)
        ? { name, endpoint: d.endpoint, highestSupportedVersion: { major: 1, minor: 0, patch: 0 } }
        : undefined;
    },
  },
};

/** A volume the driver's CreateVolume would have made: a backing dir and its meta file. */
async function createBacking(d: Driver, id: string): Promise<string> {
  const dir = join(d.stateDir, 'volumes', id);
  await mkdir(dir, { recursive: true });
  await writeFile(join(d.stateDir, 'volumes', `${id}.json`), JSON.stringify({ name: id, capacityBytes: '1024' }));
  return dir;
}

type SpecOver = Omit<Partial<CsiVolumeSpec>, 'policy'> & { policy?: Partial<CsiDriverPolicy> };

function makeSpec(over: SpecOver = {}): CsiVolumeSpec {
  return {
    specName: 'pv-1',
    driver: DRIVER,
    volumeHandle: 'vol-1',
    lifecycle: 'Persistent',
    readOnly: false,
    mountOptions: [],
    volumeAttributes: { tier: 'gold' },
    accessMode: 'SINGLE_NODE_WRITER',
    ...over,
    policy: { ...DEFAULT_DRIVER_POLICY, attachRequired: false, ...over.policy },
  };
}

/** A plugin whose resolver answers the spec given per volume name. */
function plugin(specs: Record<string, CsiVolumeSpec>): CsiVolumePlugin {
  const p = createCsiPlugin({
    resolve: async (_pod, volume) => {
      const s = specs[volume.name];
      if (!s) throw new VolumeError(`no spec for ${volume.name}`);
      return s;
    },
    timeoutMs: 5_000,
  });
  plugins.push(p);
  return p;
}

function pod(uid: string, fsGroup?: number, fsGroupChangePolicy?: string): Pod {
  return {
    metadata: { name: `pod-${uid}`, namespace: 'ns1', uid },
    spec: {
      serviceAccountName: 'sa1',
      containers: [{ name: 'c', image: 'busybox' }],
      ...(fsGroup !== undefined ? { securityContext: { fsGroup, fsGroupChangePolicy } } : {}),
    },
  } as Pod;
}

const vol = (name: string): Volume => ({ name, persistentVolumeClaim: { claimName: name } });
const volDir = (uid: string, specName: string) =>
  join(host.rootDir, 'pods', uid, 'volumes', 'kubernetes.io~csi', specName);

function calls(d: Driver, method: string): CsiCall[] {
  return readCallLog(join(d.stateDir, 'calls.jsonl')).filter((c) => c.method === method);
}

function req(c: CsiCall | undefined): Record<string, unknown> {
  return (c?.request ?? {}) as Record<string, unknown>;
}

const mounted = async (p: string) => (await mountAt(p)) !== undefined;

before(async () => {
  await start(driverDef(DRIVER));
  await start(driverDef(NOSTAGE, ['GET_VOLUME_STATS']));
  await start(driverDef(MOUNTGROUP, ['STAGE_UNSTAGE_VOLUME', 'VOLUME_MOUNT_GROUP']));
});

after(async () => {
  for (const p of plugins) p.close();
  for (const d of drivers.values()) await d.proc?.stop();
  // A failed case may leave its mounts: gone with the test's root, never left on the host.
  for (const m of await hostMounter.mountsUnder(root)) await unmount(m).catch(() => undefined);
});

describe('CSI plugin: stage and publish (upstream TestMounterSetUp, TestAttacherMountDevice)', () => {
  it('stages, publishes, then unpublishes and unstages; the data stays with the driver', async () => {
    const d = drivers.get(DRIVER)!;
    const backing = await createBacking(d, 'vol-1');
    const p = plugin({ data: makeSpec({ mountOptions: ['noatime'], fsType: 'ext4' }) });
    const mv = await p.setUp(pod('u1'), vol('data'), host);
    const dir = volDir('u1', 'pv-1');
    assert.equal(mv.hostPath, join(dir, 'mount'));
    assert.equal(mv.csi?.stagingPath, csiStagingPath(host.rootDir, DRIVER, 'vol-1'));
    assert.ok(await mounted(mv.hostPath));
    assert.ok(await mounted(mv.csi!.stagingPath!));
    const data = JSON.parse(await readFile(join(dir, 'vol_data.json'), 'utf8'));
    assert.deepEqual(
      { ...data, attachmentID: typeof data.attachmentID },
      {
        specVolID: 'pv-1',
        volumeHandle: 'vol-1',
        driverName: DRIVER,
        nodeName: 'node-1',
        attachmentID: 'string',
        volumeLifecycleMode: 'Persistent',
      },
    );
    const stageData = JSON.parse(
      await readFile(join(csiStagingDir(host.rootDir, DRIVER, 'vol-1'), 'vol_data.json'), 'utf8'),
    );
    assert.deepEqual(stageData, { driverName: DRIVER, volumeHandle: 'vol-1' });
    const pub = req(calls(d, 'NodePublishVolume').pop());
    assert.equal(pub.stagingTargetPath, mv.csi!.stagingPath);
    assert.deepEqual((pub.volumeCapability as { mount: object }).mount, {
      fsType: 'ext4',
      mountFlags: ['noatime'],
      volumeMountGroup: '',
    });
    assert.deepEqual(pub.volumeContext, { tier: 'gold' });
    await writeFile(join(mv.hostPath, 'hello'), 'world');

    await p.tearDown(dir, host);
    assert.equal(existsSync(dir), false);
    assert.equal(existsSync(csiStagingDir(host.rootDir, DRIVER, 'vol-1')), false);
    assert.equal(calls(d, 'NodeUnstageVolume').length, 1);
    assert.equal(await readFile(join(backing, 'hello'), 'utf8'), 'world');
  });

  it('two pods share one staged volume: staged once, unstaged after the last', async () => {
    const d = drivers.get(DRIVER)!;
    await createBacking(d, 'vol-2');
    const p = plugin({ shared: makeSpec({ specName: 'pv-2', volumeHandle: 'vol-2' }) });
    const stages = calls(d, 'NodeStageVolume').length;
    const unstages = calls(d, 'NodeUnstageVolume').length;
    await p.setUp(pod('a2'), vol('shared'), host);
    await p.setUp(pod('b2'), vol('shared'), host);
    assert.equal(calls(d, 'NodeStageVolume').length, stages + 1);
    await p.tearDown(volDir('a2', 'pv-2'), host);
    assert.equal(calls(d, 'NodeUnstageVolume').length, unstages);
    assert.ok(await mounted(csiStagingPath(host.rootDir, DRIVER, 'vol-2')));
    assert.ok(await mounted(join(volDir('b2', 'pv-2'), 'mount')));
    await p.tearDown(volDir('b2', 'pv-2'), host);
    assert.equal(calls(d, 'NodeUnstageVolume').length, unstages + 1);
    assert.equal(existsSync(csiStagingDir(host.rootDir, DRIVER, 'vol-2')), false);
  });

  it('a driver without STAGE_UNSTAGE_VOLUME is only published', async () => {
    const d = drivers.get(NOSTAGE)!;
    await createBacking(d, 'vol-3');
    const p = plugin({ v: makeSpec({ driver: NOSTAGE, specName: 'pv-3', volumeHandle: 'vol-3', readOnly: true }) });
    const mv = await p.setUp(pod('u3'), vol('v'), host);
    assert.equal(mv.csi?.stagingPath, undefined);
    assert.equal(mv.readOnly, true);
    assert.equal(calls(d, 'NodeStageVolume').length, 0);
    const pub = req(calls(d, 'NodePublishVolume').pop());
    assert.equal(pub.stagingTargetPath, '');
    assert.equal(pub.readonly, true);
    await p.tearDown(volDir('u3', 'pv-3'), host);
    assert.equal(calls(d, 'NodeUnstageVolume').length, 0);
    assert.equal(existsSync(volDir('u3', 'pv-3')), false);
  });

  it('a publish that fails for good removes the pod record; one that may still be running keeps it', async () => {
    const d = drivers.get(DRIVER)!;
    await createBacking(d, 'vol-15');
    const p = plugin({ v: makeSpec({ specName: 'pv-15', volumeHandle: 'vol-15' }) });
    const dir = volDir('u15', 'pv-15');
    try {
      await writeFile(join(d.stateDir, 'faults'), 'NodePublishVolume=fail:INVALID_ARGUMENT\n');
      await assert.rejects(p.setUp(pod('u15'), vol('v'), host), /volume v: publishing to .*INVALID_ARGUMENT/);
      assert.equal(existsSync(dir), false);
      await writeFile(join(d.stateDir, 'faults'), 'NodePublishVolume=fail:DEADLINE_EXCEEDED\n');
      await assert.rejects(p.setUp(pod('u15'), vol('v'), host), /DEADLINE_EXCEEDED/);
      assert.ok(existsSync(join(dir, 'vol_data.json')), 'uncertain: kept for the teardown');
    } finally {
      await writeFile(join(d.stateDir, 'faults'), '');
    }
    await p.tearDown(dir, host);
    assert.equal(existsSync(dir), false);
    assert.equal(existsSync(csiStagingDir(host.rootDir, DRIVER, 'vol-15')), false);
  });

  it('an unregistered driver is upstream error text; the lifecycle mode must be listed', async () => {
    const p = plugin({
      x: makeSpec({ driver: 'nope.csi.test' }),
      e: makeSpec({ lifecycle: 'Ephemeral', specName: 'inline-e', volumeHandle: 'csi-e' }),
    });
    await assert.rejects(
      p.setUp(pod('u4'), vol('x'), host),
      /driver name nope\.csi\.test not found in the list of registered CSI drivers/,
    );
    await assert.rejects(p.setUp(pod('u4'), vol('e'), host), /volume mode "Ephemeral" not supported by driver/);
  });
});

describe('CSI plugin: pod info on mount (upstream MounterSetUpTests WithCSIPodInfo / WithoutCSIPodInfo)', () => {
  const cases: {
    name: string;
    podInfo: boolean;
    lifecycle: 'Persistent' | 'Ephemeral';
    want: Record<string, string>;
  }[] = [
    { name: 'without pod info', podInfo: false, lifecycle: 'Persistent', want: { tier: 'gold' } },
    {
      name: 'with pod info',
      podInfo: true,
      lifecycle: 'Persistent',
      want: {
        tier: 'gold',
        'csi.storage.k8s.io/pod.name': 'pod-u5',
        'csi.storage.k8s.io/pod.namespace': 'ns1',
        'csi.storage.k8s.io/pod.uid': 'u5',
        'csi.storage.k8s.io/serviceAccount.name': 'sa1',
        'csi.storage.k8s.io/ephemeral': 'false',
      },
    },
    {
      // upstream: the ephemeral key is one of the pod info keys, never sent alone.
      name: 'inline volume with pod info says ephemeral',
      podInfo: true,
      lifecycle: 'Ephemeral',
      want: {
        tier: 'gold',
        'csi.storage.k8s.io/pod.name': 'pod-u5',
        'csi.storage.k8s.io/pod.namespace': 'ns1',
        'csi.storage.k8s.io/pod.uid': 'u5',
        'csi.storage.k8s.io/serviceAccount.name': 'sa1',
        'csi.storage.k8s.io/ephemeral': 'true',
      },
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const d = drivers.get(DRIVER)!;
      const handle = `vol-5-${c.lifecycle}-${c.podInfo}`;
      if (c.lifecycle === 'Persistent') await createBacking(d, handle);
      const spec = makeSpec({
        specName: handle,
        volumeHandle: handle,
        lifecycle: c.lifecycle,
        policy: { podInfoOnMount: c.podInfo, volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
      });
      const p = plugin({ v: spec });
      await p.setUp(pod('u5'), vol('v'), host);
      const pub = req(calls(d, 'NodePublishVolume').pop());
      assert.deepEqual(pub.volumeContext, c.want);
      if (c.lifecycle === 'Ephemeral') assert.equal(pub.stagingTargetPath, '');
      await p.tearDown(volDir('u5', handle), host);
    });
  }
});

describe('CSI plugin: fsGroup (upstream TestMounterSetUpWithFSGroup)', () => {
  type Case = [string, SpecOver, number | undefined, boolean];
  const rwx = 'MULTI_NODE_MULTI_WRITER' as const;
  const table: Case[] = [
    ['default fstype, with no fsgroup', {}, undefined, false],
    ['default fstype with fsgroup', {}, 3000, false],
    ['fstype, fsgroup, RWM, ROM provided', { fsType: 'ext4', accessMode: rwx }, 3000, false],
    ['fstype, fsgroup, RWO, but readOnly', { fsType: 'ext4', readOnly: true }, 3000, false],
    ['fstype, fsgroup, RWO provided', { fsType: 'ext4' }, 3000, true],
    ['fstype, fsgroup, RWOP provided', { fsType: 'ext4', accessMode: 'SINGLE_NODE_SINGLE_WRITER' }, 3000, true],
    ['fstype, fsgroup, RWX provided, ReadWriteOnceWithFSType', { fsType: 'ext4', accessMode: rwx }, 3000, false],
    [
      'fstype, fsgroup, RWO provided, FSGroupPolicy None',
      { fsType: 'ext4', policy: { fsGroupPolicy: 'None' } },
      3000,
      false,
    ],
    [
      'fstype, fsgroup, readOnly, FSGroupPolicy File',
      { fsType: 'ext4', readOnly: true, policy: { fsGroupPolicy: 'File' } },
      3000,
      false,
    ],
    ['no fstype, RWX, FSGroupPolicy File', { accessMode: rwx, policy: { fsGroupPolicy: 'File' } }, 3000, true],
    ['inline volume with fstype', { fsType: 'ext4', lifecycle: 'Ephemeral', accessMode: rwx }, 3000, true],
  ];
  for (const [name, over, fsGroup, want] of table) {
    it(`${name}: ${want ? 'applied' : 'not applied'}`, () => {
      assert.equal(kubeletAppliesFsGroup(makeSpec(over), fsGroup), want);
    });
  }

  it('File policy: the published tree is group-owned and group-writable, recursively', async () => {
    const d = drivers.get(DRIVER)!;
    const backing = await createBacking(d, 'vol-6');
    await mkdir(join(backing, 'sub'));
    await writeFile(join(backing, 'sub', 'f'), 'x', { mode: 0o600 });
    const p = plugin({ v: makeSpec({ specName: 'pv-6', volumeHandle: 'vol-6', policy: { fsGroupPolicy: 'File' } }) });
    const mv = await p.setUp(pod('u6', 3000), vol('v'), host);
    const f = await stat(join(mv.hostPath, 'sub', 'f'));
    const sub = await stat(join(mv.hostPath, 'sub'));
    assert.equal(f.gid, 3000);
    assert.equal(f.mode & 0o777, 0o660);
    assert.equal(sub.gid, 3000);
    assert.equal(sub.mode & 0o2070, 0o2070);
    await p.tearDown(volDir('u6', 'pv-6'), host);
  });

  it('OnRootMismatch skips the walk when the root already matches; Always walks again', async () => {
    const d = drivers.get(DRIVER)!;
    await createBacking(d, 'vol-14');
    const p = plugin({ v: makeSpec({ specName: 'pv-14', volumeHandle: 'vol-14', policy: { fsGroupPolicy: 'File' } }) });
    const mv = await p.setUp(pod('u14', 3000, 'OnRootMismatch'), vol('v'), host);
    await writeFile(join(mv.hostPath, 'late'), 'x');
    await chown(join(mv.hostPath, 'late'), 0, 0); // (the setgid root would have given it the group)
    await p.setUp(pod('u14', 3000, 'OnRootMismatch'), vol('v'), host);
    assert.equal((await stat(join(mv.hostPath, 'late'))).gid, 0, 'the root matched: not walked');
    await p.setUp(pod('u14', 3000, 'Always'), vol('v'), host);
    assert.equal((await stat(join(mv.hostPath, 'late'))).gid, 3000);
    await p.tearDown(volDir('u14', 'pv-14'), host);
  });

  it('None policy: nothing is changed', async () => {
    const d = drivers.get(DRIVER)!;
    const backing = await createBacking(d, 'vol-7');
    await writeFile(join(backing, 'f'), 'x', { mode: 0o600 });
    const p = plugin({
      v: makeSpec({ specName: 'pv-7', volumeHandle: 'vol-7', fsType: 'ext4', policy: { fsGroupPolicy: 'None' } }),
    });
    const mv = await p.setUp(pod('u7', 3000), vol('v'), host);
    const f = await stat(join(mv.hostPath, 'f'));
    assert.equal(f.gid, 0);
    assert.equal(f.mode & 0o777, 0o600);
    await p.tearDown(volDir('u7', 'pv-7'), host);
  });

  it('VOLUME_MOUNT_GROUP: the fsGroup goes to the driver, the kubelet changes nothing', async () => {
    const d = drivers.get(MOUNTGROUP)!;
    const backing = await createBacking(d, 'vol-8');
    await writeFile(join(backing, 'f'), 'x', { mode: 0o600 });
    const p = plugin({
      v: makeSpec({ driver: MOUNTGROUP, specName: 'pv-8', volumeHandle: 'vol-8', policy: { fsGroupPolicy: 'File' } }),
      w: makeSpec({ driver: MOUNTGROUP, specName: 'pv-8b', volumeHandle: 'vol-8' }),
    });
    const mv = await p.setUp(pod('u8', 3000), vol('v'), host);
    const group = (c: CsiCall | undefined) =>
      (req(c).volumeCapability as { mount: { volumeMountGroup: string } }).mount.volumeMountGroup;
    assert.equal(group(calls(d, 'NodePublishVolume').pop()), '3000');
    assert.equal(group(calls(d, 'NodeStageVolume').pop()), '3000');
    assert.equal((await stat(join(mv.hostPath, 'f'))).gid, 0);
    await p.setUp(pod('u8b'), vol('w'), host);
    assert.equal(group(calls(d, 'NodePublishVolume').pop()), '');
    await p.tearDown(volDir('u8', 'pv-8'), host);
    await p.tearDown(volDir('u8b', 'pv-8b'), host);
  });
});

describe('CSI plugin: teardown (upstream TestUnmounterTeardown, TestUnmounterTeardownNoClientError)', () => {
  it('a driver that is down delays the teardown; nothing is removed; a later try succeeds', async () => {
    const d = drivers.get(DRIVER)!;
    const backing = await createBacking(d, 'vol-9');
    const p = plugin({ v: makeSpec({ specName: 'pv-9', volumeHandle: 'vol-9' }) });
    const mv = await p.setUp(pod('u9'), vol('v'), host);
    await writeFile(join(mv.hostPath, 'keep'), 'data');
    await d.proc!.stop('SIGKILL');
    const dir = volDir('u9', 'pv-9');
    await assert.rejects(
      p.tearDown(dir, host),
      (e: Error) => e instanceof VolumeError && /NodeUnpublishVolume|unpublishing/.test(e.message),
    );
    registered.delete(DRIVER);
    await assert.rejects(
      p.tearDown(dir, host),
      /driver name stage\.csi\.test not found in the list of registered CSI drivers/,
    );
    assert.ok(existsSync(join(dir, 'vol_data.json')));
    assert.ok(await mounted(mv.hostPath));
    assert.equal(await readFile(join(mv.hostPath, 'keep'), 'utf8'), 'data');
    await start(d);
    await p.tearDown(dir, host);
    assert.equal(existsSync(dir), false);
    assert.equal(existsSync(csiStagingDir(host.rootDir, DRIVER, 'vol-9')), false);
    assert.equal(await readFile(join(backing, 'keep'), 'utf8'), 'data');
  });

  it('a dir without vol_data.json: removed when nothing is mounted, refused when something is', async () => {
    const p = plugin({});
    const bare = volDir('u10', 'bare');
    await mkdir(join(bare, 'mount'), { recursive: true });
    await p.tearDown(bare, host);
    assert.equal(existsSync(bare), false);
    const held = volDir('u10', 'held');
    await mkdir(join(held, 'mount'), { recursive: true });
    await mountTmpfs(join(held, 'mount'), { sizeBytes: 1 << 20 });
    try {
      await assert.rejects(p.tearDown(held, host), /has no vol_data\.json/);
      assert.ok(existsSync(join(held, 'mount')));
    } finally {
      await unmount(join(held, 'mount'));
    }
  });
});

describe('CSI plugin: after an agent restart', () => {
  it('a new plugin adopts a running pod volume (set up again) and tears down from vol_data.json', async () => {
    const d = drivers.get(DRIVER)!;
    await createBacking(d, 'vol-11');
    const spec = { v: makeSpec({ specName: 'pv-11', volumeHandle: 'vol-11' }) };
    const mv = await plugin(spec).setUp(pod('u11'), vol('v'), host);
    const restarted = plugin(spec);
    const again = await restarted.setUp(pod('u11'), vol('v'), host);
    assert.equal(again.hostPath, mv.hostPath);
    const points = (await hostMounter.mountsUnder(volDir('u11', 'pv-11'))).filter((m) => m === mv.hostPath);
    assert.equal(points.length, 1);
    const fresh = plugin({});
    await fresh.tearDown(volDir('u11', 'pv-11'), host);
    assert.equal(await mounted(mv.hostPath), false);
    assert.equal(existsSync(csiStagingDir(host.rootDir, DRIVER, 'vol-11')), false);
  });

  it("the volume manager tears a gone pod's CSI volumes down (garbage collection's path)", async () => {
    const d = drivers.get(DRIVER)!;
    await createBacking(d, 'vol-12');
    const spec = { v: makeSpec({ specName: 'pv-12', volumeHandle: 'vol-12' }) };
    await plugin(spec).setUp(pod('u12'), vol('v'), host);
    const vm = createVolumeManager({ rootDir: host.rootDir, csiDrivers: host.csiDrivers!, plugins: [plugin({})] });
    await vm.unmountPodVolumes('u12');
    assert.equal(existsSync(join(host.rootDir, 'pods', 'u12')), false);
    assert.equal(existsSync(csiStagingDir(host.rootDir, DRIVER, 'vol-12')), false);
  });

  it('a global mount whose last publisher is gone is unstaged by the orphan sweep', async () => {
    const d = drivers.get(DRIVER)!;
    await createBacking(d, 'vol-13');
    const spec = { v: makeSpec({ specName: 'pv-13', volumeHandle: 'vol-13' }) };
    const mv = await plugin(spec).setUp(pod('u13'), vol('v'), host);
    // An agent that stopped after the unpublish, before the unstage: the pod's record is gone.
    await unmount(mv.hostPath);
    const { rm } = await import('node:fs/promises');
    await rm(join(host.rootDir, 'pods', 'u13'), { recursive: true });
    const staging = csiStagingPath(host.rootDir, DRIVER, 'vol-13');
    assert.ok(await mounted(staging));
    const vm = createVolumeManager({ rootDir: host.rootDir, csiDrivers: host.csiDrivers!, plugins: [plugin({})] });
    await vm.cleanupOrphanedVolumes!();
    assert.equal(await mounted(staging), false);
    assert.equal(existsSync(csiStagingDir(host.rootDir, DRIVER, 'vol-13')), false);
  });
});
