/**
 * Downward API volume files, the atomic writer, memory emptyDir sizing, the volumes of a pod
 * mounted by the volume manager and bound by the runtime's syncPod (tmpfs for secret-bearing
 * volumes, modes, fsGroup, 0750 directories), teardown and cleanup.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Container, Pod } from '../../src/api/types.js';
import { EnvError } from '../../src/fieldpath/index.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager } from '../../src/kuberuntime/index.js';
import { downwardAPIPayload } from '../../src/volume/api-volumes.js';
import { writeAtomic } from '../../src/volume/atomic-writer.js';
import {
  createVolumeManager,
  setupDataDirs,
  type PodObjectSource,
  type VolumeManagerOptions,
} from '../../src/volume/index.js';
import { fsTypeAt, mountAt } from '../../src/volume/mount.js';
import { emptyDirMemorySize } from '../../src/volume/tmpfs.js';
import { ConfigError, VolumeError } from '../../src/errors.js';
import { FakeMounter } from '../fakes/fake-mounter.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { container, makePod } from '../kuberuntime/helpers.js';
import { testTempDir } from '../support/temp-dir.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const alloc = { cpu: 4000, memory: 8 * GiB };

/**
 * A volume manager over a fake mounter and a runtime manager over the fake CRI, sharing it, the
 * root dir under <dir>/<name>; sync(pod) mounts the pod's volumes, then syncs it (as the kubelet).
 */
function manager(name: string, extra: Partial<VolumeManagerOptions> = {}) {
  const fake = new FakeRuntimeService();
  fake.addImage('busybox:1.36');
  const root = join(dir, name);
  const mounter = new FakeMounter();
  const vm = createVolumeManager({ rootDir: root, nodeName: 'n', allocatable: alloc, mounter, ...extra });
  const rt = createRuntimeManager({
    runtime: fake,
    imageManager: createImageManager({ images: fake }),
    podLogsDir: join(dir, `${name}-logs`),
    rootDir: root,
    nodeName: 'n',
    resolvConf: '',
    cgroupsPerQOS: false,
    volumes: vm,
  });
  const sync = async (pod: Pod) => {
    await vm.mountPodVolumes(pod);
    return rt.syncPod(
      pod,
      await rt.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace ?? 'default'),
    );
  };
  return { fake, root, mounter, rt, vm, sync };
}
const limited = (limits: Record<string, string>): Container => container('main', { resources: { limits } });

let dir: string;
before(async () => {
  dir = testTempDir('kuberuntime-volumes-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('downwardAPI volume payload', () => {
  const pod = makePod({ containers: [limited({ cpu: '500m' })] });
  pod.metadata!.labels = { b: '2', a: '1' };
  const pc = { nodeName: 'n', hostIP: '', podIP: '', podIPs: [], pod, allocatable: alloc };
  it('fieldRefs and resourceFieldRefs with modes', () => {
    const p = downwardAPIPayload(pc, {
      defaultMode: 0o600,
      items: [
        { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
        { path: 'a', fieldRef: { fieldPath: "metadata.labels['a']" } },
        {
          path: 'x/cpu',
          resourceFieldRef: { containerName: 'main', resource: 'limits.cpu', divisor: '1m' },
          mode: 0o644,
        },
      ],
    });
    assert.deepEqual(
      [...p],
      [
        ['labels', { data: 'a="1"\nb="2"', mode: 0o600 }],
        ['a', { data: '1', mode: 0o600 }],
        ['x/cpu', { data: '500', mode: 0o644 }],
      ],
    );
  });
  it('rejects paths leaving the volume and fields volumes cannot have', () => {
    assert.throws(
      () => downwardAPIPayload(pc, { items: [{ path: '../x', fieldRef: { fieldPath: 'metadata.name' } }] }),
      EnvError,
    );
    assert.throws(
      () => downwardAPIPayload(pc, { items: [{ path: '/abs', fieldRef: { fieldPath: 'metadata.name' } }] }),
      EnvError,
    );
    assert.throws(
      () => downwardAPIPayload(pc, { items: [{ path: 'ip', fieldRef: { fieldPath: 'status.podIP' } }] }),
      /not supported in volumes/,
    );
  });
});

describe('writeAtomic (upstream AtomicWriter layout)', () => {
  it('writes through ..data, swaps on change, leaves an unchanged payload alone', async () => {
    const d = join(dir, 'atomic');
    await writeAtomic(
      d,
      new Map([
        ['name', { data: 'web', mode: 0o644 }],
        ['sub/cpu', { data: '1', mode: 0o600 }],
      ]),
    );
    const first = await readlink(join(d, '..data'));
    assert.equal(await readFile(join(d, 'name'), 'utf8'), 'web');
    assert.equal(await readFile(join(d, 'sub', 'cpu'), 'utf8'), '1');
    assert.ok((await lstat(join(d, 'name'))).isSymbolicLink());
    assert.equal((await stat(join(d, 'sub', 'cpu'))).mode & 0o777, 0o600);
    await writeAtomic(
      d,
      new Map([
        ['name', { data: 'web', mode: 0o644 }],
        ['sub/cpu', { data: '1', mode: 0o600 }],
      ]),
    );
    assert.equal(await readlink(join(d, '..data')), first, 'unchanged: not rewritten');
    await writeAtomic(d, new Map([['name', { data: 'api', mode: 0o644 }]]));
    assert.notEqual(await readlink(join(d, '..data')), first);
    assert.equal(await readFile(join(d, 'name'), 'utf8'), 'api');
    assert.equal(existsSync(join(d, 'sub')), false, 'a top-level entry no longer in the payload goes');
    assert.deepEqual(
      (await readdir(d)).filter((e) => e.startsWith('..')).length,
      2,
      '..data and one versioned directory',
    );
  });
});

describe('memory-backed emptyDir size (upstream calculateEmptyDirMemorySize)', () => {
  const pod = (limits?: Record<string, string>) =>
    makePod({ containers: [container('a', limits ? { resources: { limits } } : {})] });
  it('node allocatable, lowered to the pod memory limit, then to sizeLimit', () => {
    assert.equal(emptyDirMemorySize(pod(), undefined, 8 * GiB), 8 * GiB);
    assert.equal(emptyDirMemorySize(pod({ memory: '1Gi' }), undefined, 8 * GiB), GiB);
    assert.equal(emptyDirMemorySize(pod({ memory: '1Gi' }), '64Mi', 8 * GiB), 64 * MiB);
    assert.equal(
      emptyDirMemorySize(pod({ memory: '1Gi' }), '2Gi', 8 * GiB),
      GiB,
      'a sizeLimit above what the pod may use does not raise it',
    );
    assert.equal(emptyDirMemorySize(pod(), '0', 8 * GiB), 8 * GiB, 'zero is no limit');
  });
});

describe('downwardAPI volumes through the volume manager and syncPod, and cleanup', () => {
  it('files exist, the mount is read-only, unmountPodVolumes deletes them', async () => {
    const { fake, root, mounter, vm, sync } = manager('root');
    const pod = makePod({
      containers: [
        container('a', {
          volumeMounts: [
            { name: 'info', mountPath: '/info' },
            { name: 'scratch', mountPath: '/scratch' },
          ],
        }),
      ],
    });
    pod.spec!.volumes = [
      { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
      { name: 'scratch', emptyDir: {} },
    ];
    const r = await sync(pod);
    assert.deepEqual([...r.waiting], []);
    const mounts = fake.containersNamed('a')[0]!.config.mounts;
    const info = mounts.find((m) => m.containerPath === '/info')!;
    assert.equal(info.readonly, true);
    assert.equal(await readFile(join(info.hostPath, 'name'), 'utf8'), 'web');
    assert.deepEqual(
      [...mounter.mounts.keys()],
      [info.hostPath],
      'downwardAPI on a tmpfs (upstream), the emptyDir on disk',
    );
    await vm.unmountPodVolumes('uid-1234');
    assert.equal(mounter.mounts.size, 0);
    // The pod directory keeps etc-hosts: housekeeping removes it once the pod is gone.
    assert.equal(existsSync(join(root, 'pods', 'uid-1234', 'volumes')), false);
  });
});

const asRoot = process.getuid?.() === 0;

describe('secret-bearing volumes through the volume manager and syncPod: tmpfs, modes, fsGroup, 0750 directories, teardown', () => {
  const objects: PodObjectSource = {
    configMap: (_ns, name) => (name === 'cfg' ? { data: { 'app.conf': 'x=1' } } : null),
    secret: (_ns, name) => {
      const data: Record<string, Record<string, string>> = {
        sec: { password: 's3cret', user: 'me' },
        evil: { '..data': 'x' },
      };
      const d = data[name];
      return d
        ? { data: Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) }
        : null;
    },
    serviceAccountToken: () => 'tok',
  };
  const mode = async (p: string) => ((await stat(p)).mode & 0o7777).toString(8);

  async function setUp(name: string, podExtra: (pod: ReturnType<typeof makePod>) => void) {
    const { fake, root, mounter, vm, sync } = manager(name, { objects, allocatable: { cpu: 4000, memory: 8 * GiB } });
    const pod = makePod({
      containers: [
        container('a', {
          volumeMounts: [
            { name: 'sec', mountPath: '/sec' },
            { name: 'cfg', mountPath: '/cfg' },
            { name: 'proj', mountPath: '/proj' },
            { name: 'tmp', mountPath: '/tmp' },
          ],
        }),
      ],
    });
    pod.spec!.volumes = [
      {
        name: 'sec',
        secret: {
          secretName: 'sec',
          defaultMode: 0o400,
          items: [
            { key: 'password', path: 'password' },
            { key: 'user', path: 'user', mode: 0o444 },
          ],
        },
      },
      { name: 'cfg', configMap: { name: 'cfg' } },
      {
        name: 'proj',
        projected: {
          sources: [
            { serviceAccountToken: { path: 'token' } },
            { downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
          ],
        },
      },
      { name: 'tmp', emptyDir: {} },
    ];
    podExtra(pod);
    const r = await sync(pod);
    return { fake, root, mounter, vm, pod, r };
  }

  it('secret and projected on a bounded tmpfs, configMap on disk; the directories above are 0750', async () => {
    const { fake, root, mounter, vm, r } = await setUp('plain', () => undefined);
    assert.deepEqual([...r.waiting], []);
    const vol = (plugin: string, v: string) => join(root, 'pods', 'uid-1234', 'volumes', plugin, v);
    assert.deepEqual([...mounter.mounts.keys()].sort(), [
      vol('kubernetes.io~projected', 'proj'),
      vol('kubernetes.io~secret', 'sec'),
    ]);
    for (const opts of mounter.mounts.values()) assert.deepEqual(opts, { sizeBytes: 64 * MiB, mode: 0o755 });
    for (const d of [
      'pods',
      'pods/uid-1234',
      'pods/uid-1234/volumes',
      'pods/uid-1234/volumes/kubernetes.io~secret',
      'pods/uid-1234/volumes/kubernetes.io~configmap',
      'pods/uid-1234/volumes/kubernetes.io~projected',
      'pods/uid-1234/volumes/kubernetes.io~empty-dir',
    ]) {
      assert.equal(await mode(join(root, d)), '750', d);
    }
    assert.equal(await mode(root), '750', 'a root dir the agent creates');
    assert.equal(await mode(vol('kubernetes.io~secret', 'sec')), '755');
    assert.equal(await mode(join(vol('kubernetes.io~secret', 'sec'), 'password')), '400', 'defaultMode');
    assert.equal(await mode(join(vol('kubernetes.io~secret', 'sec'), 'user')), '444', 'items[].mode');
    assert.equal(await mode(join(vol('kubernetes.io~configmap', 'cfg'), 'app.conf')), '644', 'the default 0644');
    assert.equal(
      await mode(join(vol('kubernetes.io~projected', 'proj'), 'token')),
      '644',
      'no fsGroup, no fsUser: defaultMode',
    );
    assert.equal(await mode(vol('kubernetes.io~empty-dir', 'tmp')), '777');
    assert.ok(
      (await lstat(join(vol('kubernetes.io~secret', 'sec'), 'password'))).isSymbolicLink(),
      'user-visible names are symlinks into ..data',
    );
    const mounts = fake.containersNamed('a')[0]!.config.mounts;
    assert.deepEqual(
      mounts.map((m) => [m.containerPath, m.readonly]),
      [
        ['/sec', true],
        ['/cfg', true],
        ['/proj', true],
        ['/tmp', false],
        ['/etc/hosts', false], // the kubelet-managed hosts file, last
      ],
    );
    // Teardown (the kubelet calls it once the pod is terminated): unmounted, deleted.
    await vm.unmountPodVolumes('uid-1234');
    assert.equal(mounter.mounts.size, 0);
    assert.equal(existsSync(join(root, 'pods', 'uid-1234', 'volumes')), false);
  });

  it(
    'fsGroup: files group-owned with g+r, directories g+rx setgid; the token 0640 owned by the common runAsUser; supplemental group',
    { skip: !asRoot && 'chown needs root' },
    async () => {
      const { fake, root, r } = await setUp('fsgroup', (pod) => {
        pod.spec!.securityContext = { fsGroup: 2000, runAsUser: 1000, supplementalGroups: [3000] };
      });
      assert.deepEqual([...r.waiting], []);
      const sec = join(root, 'pods', 'uid-1234', 'volumes', 'kubernetes.io~secret', 'sec');
      const proj = join(root, 'pods', 'uid-1234', 'volumes', 'kubernetes.io~projected', 'proj');
      const st = async (p: string) => {
        const s = await stat(p);
        return [(s.mode & 0o7777).toString(8), s.uid, s.gid];
      };
      assert.deepEqual(await st(join(sec, 'password')), ['440', 0, 2000]);
      assert.deepEqual(await st(join(sec, 'user')), ['444', 0, 2000]);
      assert.deepEqual(await st(sec), ['2755', 0, 2000]);
      assert.deepEqual(await st(join(sec, await readlink(join(sec, '..data')))), ['2755', 0, 2000]);
      assert.deepEqual(await st(join(proj, 'token')), ['640', 1000, 2000]);
      assert.deepEqual(await st(join(proj, 'name')), ['644', 0, 2000]);
      assert.deepEqual(await st(join(root, 'pods', 'uid-1234', 'volumes', 'kubernetes.io~empty-dir', 'tmp')), [
        '2777',
        0,
        2000,
      ]);
      const sc = fake.containersNamed('a')[0]!.config.linux!.securityContext!;
      assert.deepEqual(sc.supplementalGroups, [2000, 3000]);
      assert.deepEqual(sc.runAsUser, { value: 1000 });
    },
  );

  it('hostile input: a bad mode or fsGroup from the API, a key named ..data: CreateContainerConfigError, nothing mounted', async () => {
    const badMode = await setUp('badmode', (pod) => {
      pod.spec!.volumes![0]!.secret!.defaultMode = 0o1000;
    });
    assert.equal(badMode.r.waiting.get('a')?.reason, 'CreateContainerConfigError');
    assert.match(
      badMode.r.waiting.get('a')!.message,
      /volume sec: defaultMode: 01000 \(512\) must be a number between 0 and 0777/,
    );
    const badGroup = await setUp('badgroup', (pod) => {
      pod.spec!.securityContext = { fsGroup: -1 };
    });
    assert.match(badGroup.r.waiting.get('a')!.message, /securityContext\.fsGroup: -1 must be between 0 and 2147483647/);
    const evil = await setUp('evil', (pod) => {
      pod.spec!.volumes![0] = { name: 'sec', secret: { secretName: 'evil' } };
    });
    assert.match(evil.r.waiting.get('a')!.message, /volume sec: file name "\.\.data" must not start with '\.\.'/);
    const evilSec = join(evil.root, 'pods', 'uid-1234', 'volumes', 'kubernetes.io~secret', 'sec');
    assert.equal(evil.mounter.mounts.has(evilSec), false, 'contents are checked before the tmpfs is mounted');
    assert.equal(
      evil.mounter.mounts.size,
      1,
      'the other volumes are set up all the same (the projected one on its tmpfs)',
    );
  });
});

describe('fsTypeAt (device test + statfs, upstream IsLikelyNotMountPoint / GetMountMedium)', () => {
  it('agrees with the mount table: no mount at a plain directory, the type at a mount point', async () => {
    assert.equal(await fsTypeAt(dir), (await mountAt(dir))?.fsType);
    assert.equal(await fsTypeAt(join(dir, 'no-such-dir')), undefined);
    for (const p of ['/dev/shm', '/proc']) {
      const m = await mountAt(p);
      if (m) assert.equal(await fsTypeAt(p), m.fsType, p);
    }
  });
});

describe('writeAtomic with bytes', () => {
  it('writes them exactly, and an unchanged byte payload is left alone', async () => {
    const d = join(dir, 'atomic-bytes');
    const raw = Buffer.from([0xff, 0x00, 0x80, 0xc3, 0x28]);
    await writeAtomic(d, new Map([['der', { data: raw, mode: 0o400 }]]));
    const first = await readlink(join(d, '..data'));
    assert.deepEqual(await readFile(join(d, 'der')), raw);
    await writeAtomic(d, new Map([['der', { data: Buffer.from(raw), mode: 0o400 }]]));
    assert.equal(await readlink(join(d, '..data')), first);
  });
});

describe('writeAtomic refuses paths that leave the volume', () => {
  it('a VolumeError, nothing written', async () => {
    const d = join(dir, 'atomic-evil');
    await assert.rejects(
      writeAtomic(d, new Map([['../escape', { data: 'x', mode: 0o644 }]])),
      (e: unknown) => e instanceof VolumeError && /must not contain '\.\.'/.test(e.message),
    );
    assert.equal(existsSync(join(dir, 'escape')), false);
  });
});

describe('a volume an earlier version wrote on disk', () => {
  it('is left on disk (running containers bind-mount it) and still updated', async () => {
    const { root, mounter, sync } = manager('legacy');
    const old = join(root, 'pods', 'uid-1234', 'volumes', 'kubernetes.io~downward-api', 'info');
    await writeAtomic(old, new Map([['name', { data: 'old', mode: 0o644 }]]));
    const pod = makePod({ containers: [container('a', { volumeMounts: [{ name: 'info', mountPath: '/info' }] })] });
    pod.spec!.volumes = [
      { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
    ];
    const r = await sync(pod);
    assert.deepEqual([...r.waiting], []);
    assert.equal(mounter.mountCalls, 0);
    assert.equal(await readFile(join(old, 'name'), 'utf8'), 'web');
  });
});

describe('setupDataDirs (upstream setupDataDirs, plus narrowing what exists)', () => {
  it('creates <root> and pods 0750; narrows an existing root, pods, pod, volumes and plugin directories', async () => {
    const root = join(dir, 'data-dirs');
    const plugin = join(root, 'pods', 'uid-1', 'volumes', 'kubernetes.io~secret');
    await mkdir(join(plugin, 'v'), { recursive: true });
    await mkdir(join(root, 'pods', 'uid-1', 'containers'));
    for (const d of [
      root,
      join(root, 'pods'),
      join(root, 'pods', 'uid-1'),
      join(root, 'pods', 'uid-1', 'containers'),
      join(root, 'pods', 'uid-1', 'volumes'),
      plugin,
      join(plugin, 'v'),
    ])
      await chmod(d, 0o755);
    await chmod(join(root, 'pods', 'uid-1', 'containers'), 0o700);
    await setupDataDirs(root);
    const m = async (p: string) => ((await stat(p)).mode & 0o7777).toString(8);
    for (const d of [
      root,
      join(root, 'pods'),
      join(root, 'pods', 'uid-1'),
      join(root, 'pods', 'uid-1', 'volumes'),
      plugin,
    ])
      assert.equal(await m(d), '750', d);
    assert.equal(await m(join(root, 'pods', 'uid-1', 'containers')), '700', 'narrower modes are kept');
    assert.equal(await m(join(plugin, 'v')), '755', 'volume directories themselves are not touched');
    const fresh = join(dir, 'data-dirs-fresh', 'kubelet');
    await setupDataDirs(fresh);
    assert.equal(await m(fresh), '750');
    assert.equal(await m(join(fresh, 'pods')), '750');
  });

  it('leaves a sticky (shared) root alone; a root that is a file is a ConfigError', async () => {
    const shared = join(dir, 'shared-root');
    await mkdir(shared);
    await chmod(shared, 0o1777);
    await setupDataDirs(shared);
    assert.equal((await stat(shared)).mode & 0o7777, 0o1777);
    assert.equal((await stat(join(shared, 'pods'))).mode & 0o7777, 0o750);
    const file = join(dir, 'root-file');
    await writeFile(file, 'x');
    await assert.rejects(
      setupDataDirs(file),
      (e: unknown) => e instanceof ConfigError && /--root-dir .*root-file/.test(e.message),
    );
    const link = join(dir, 'root-link');
    await symlink(join(dir, 'data-dirs'), link);
    await setupDataDirs(link);
  });
});
