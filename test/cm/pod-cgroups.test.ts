/**
 * Pod cgroups on plain directories standing in for cgroup filesystems: mount detection, the
 * cgroupfs driver (v1 hierarchies, cpuset inheritance, the unified tree's controllers), the QoS
 * hierarchy and pod-level limits, and upstream's pod resource arithmetic.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Container, Pod } from '../../src/api/types.js';
import {
  Cgroupfs,
  CgroupfsCgroupManager,
  PodContainerManagerImpl,
  cpuSharesToCpuWeight,
  createPodContainerManager,
  parseCgroupMounts,
  podResourceConfig,
  type CgroupMounts,
} from '../../src/cm/index.js';
import { podLimits, podRequests } from '../../src/util/pod-resources.js';
import { testTempDir } from '../support/temp-dir.js';

const MiB = 2 ** 20;

function ctr(
  name: string,
  requests?: Record<string, string>,
  limits?: Record<string, string>,
  extra: Partial<Container> = {},
): Container {
  return {
    name,
    image: 'busybox',
    resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
    ...extra,
  };
}

function pod(containers: Container[], initContainers?: Container[], uid = 'u1'): Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid },
    spec: { containers, ...(initContainers ? { initContainers } : {}) },
  };
}

describe('parseCgroupMounts', () => {
  it('a hybrid host: v1 controllers (co-mounted and named) and an empty unified tree', () => {
    const text = [
      '25 24 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755',
      '26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate',
      '27 25 0:24 / /sys/fs/cgroup/systemd rw,nosuid shared:11 - cgroup cgroup rw,xattr,name=systemd',
      '30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:14 - cgroup cgroup rw,cpu,cpuacct',
      '31 25 0:28 / /sys/fs/cgroup/memory rw,nosuid shared:15 - cgroup cgroup rw,memory',
      '32 25 0:29 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset,clone_children',
    ].join('\n');
    const m = parseCgroupMounts(text);
    assert.equal(m.unified, '/sys/fs/cgroup/unified');
    assert.deepEqual(
      [...m.v1],
      [
        ['/sys/fs/cgroup/systemd', ['name=systemd']],
        ['/sys/fs/cgroup/cpu,cpuacct', ['cpu', 'cpuacct']],
        ['/sys/fs/cgroup/memory', ['memory']],
        ['/sys/fs/cgroup/cpuset', ['cpuset']],
      ],
    );
  });
  it('a pure cgroup v2 host', () => {
    const m = parseCgroupMounts(
      '35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot',
    );
    assert.equal(m.unified, '/sys/fs/cgroup');
    assert.equal(m.v1.size, 0);
  });
});

describe('pod resources (upstream PodRequests / PodLimits / ResourceConfigForPod)', () => {
  it('init containers run alone, sidecars add up', () => {
    const p = pod(
      [ctr('app', { cpu: '100m', memory: '100Mi' })],
      [
        ctr('big-init', { cpu: '1', memory: '50Mi' }),
        ctr('side', { cpu: '200m', memory: '200Mi' }, undefined, { restartPolicy: 'Always' }),
        ctr('late-init', { cpu: '150m', memory: '10Mi' }),
      ],
    );
    // sum: app + side = 300m / 300Mi; init peaks: big-init 1 cpu alone, late-init 150m + side 200m.
    assert.deepEqual(podRequests(p), { cpu: 1000, memory: 300 * MiB });
  });
  it('Guaranteed: shares, quota and memory from the containers', () => {
    const p = pod([
      ctr('a', undefined, { cpu: '500m', memory: '64Mi' }),
      ctr('b', undefined, { cpu: '250m', memory: '32Mi' }),
    ]);
    assert.deepEqual(podResourceConfig(p), { cpuShares: 768, cpuQuota: 75000, cpuPeriod: 100000, memory: 96 * MiB });
    assert.deepEqual(podLimits(p), { cpu: 750, memory: 96 * MiB });
  });
  it('Burstable: quota and memory only when every container declares them', () => {
    assert.deepEqual(podResourceConfig(pod([ctr('a', { cpu: '100m' }, { cpu: '200m', memory: '64Mi' })])), {
      cpuShares: 102,
      cpuQuota: 20000,
      cpuPeriod: 100000,
      memory: 64 * MiB,
    });
    assert.deepEqual(podResourceConfig(pod([ctr('a', { cpu: '100m' }, { cpu: '200m' }), ctr('b')])), {
      cpuShares: 102,
    });
    assert.deepEqual(
      podResourceConfig(
        pod([ctr('a', { memory: '10Mi' }, { memory: '20Mi' }), ctr('b', undefined, { memory: '30Mi' })]),
      ),
      { cpuShares: 2, memory: 50 * MiB },
    );
  });
  // upstream component-helpers resource.PodRequests / PodLimits with spec.overhead (KEP 688).
  it('pod overhead: added to requests, and to limits only where the pod has a limit', () => {
    const overhead = { cpu: '250m', memory: '120Mi' };
    const guaranteed = pod([ctr('a', undefined, { cpu: '500m', memory: '64Mi' })]);
    guaranteed.spec!.overhead = overhead;
    assert.deepEqual(podRequests(guaranteed), { cpu: 750, memory: 184 * MiB });
    assert.deepEqual(podRequests(guaranteed, { excludeOverhead: true }), { cpu: 500, memory: 64 * MiB });
    assert.deepEqual(podLimits(guaranteed), { cpu: 750, memory: 184 * MiB });
    assert.deepEqual(podResourceConfig(guaranteed), {
      cpuShares: 768,
      cpuQuota: 75000,
      cpuPeriod: 100000,
      memory: 184 * MiB,
    });

    // Only memory is limited: the cpu limit stays absent (an unlimited pod stays unlimited).
    const memOnly = pod([ctr('a', { cpu: '100m', memory: '32Mi' }, { memory: '64Mi' })]);
    memOnly.spec!.overhead = overhead;
    assert.deepEqual(podLimits(memOnly), { cpu: 0, memory: 184 * MiB });
    assert.deepEqual(podResourceConfig(memOnly), { cpuShares: 358, memory: 184 * MiB });

    // BestEffort stays BestEffort (the class comes from the containers): the minimum shares.
    const bestEffort = pod([ctr('a')]);
    bestEffort.spec!.overhead = overhead;
    assert.deepEqual(podResourceConfig(bestEffort), { cpuShares: 2 });
  });
  it('BestEffort: the minimum shares', () => {
    assert.deepEqual(podResourceConfig(pod([ctr('a')])), { cpuShares: 2 });
  });
  it('cpu.weight from shares (cgroup v2)', () => {
    assert.equal(cpuSharesToCpuWeight(2), 1);
    assert.equal(cpuSharesToCpuWeight(1024), 39);
    assert.equal(cpuSharesToCpuWeight(262144), 10000);
  });
});

describe('Cgroupfs and the pod container manager on plain directories', () => {
  let root: string;
  let mounts: CgroupMounts;
  let fs: Cgroupfs;
  const rmdirRecursive = (p: string) => rm(p, { recursive: true });

  beforeEach(async () => {
    root = testTempDir('cm-test-');
    for (const h of ['cpu,cpuacct', 'memory', 'cpuset', 'unified']) await mkdir(join(root, h), { recursive: true });
    await writeFile(join(root, 'cpuset', 'cpuset.cpus'), '0-3\n');
    await writeFile(join(root, 'cpuset', 'cpuset.mems'), '0\n');
    await writeFile(join(root, 'unified', 'cgroup.controllers'), 'cpu memory pids hugetlb\n');
    await writeFile(join(root, 'unified', 'cgroup.subtree_control'), '');
    mounts = {
      v1: new Map([
        [join(root, 'cpu,cpuacct'), ['cpu', 'cpuacct']],
        [join(root, 'memory'), ['memory']],
        [join(root, 'cpuset'), ['cpuset']],
      ]),
      unified: join(root, 'unified'),
    };
    fs = new Cgroupfs(mounts, { rmdir: rmdirRecursive, hugePageSizes: [2 * MiB, 1024 * MiB] });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const read = (h: string, ...p: string[]) => readFile(join(root, h, ...p), 'utf8');

  it('create makes the cgroup in every hierarchy; cpuset levels inherit cpus/mems; v2 controllers enabled in ancestors', async () => {
    // An empty cpuset.cpus appears with each new level on a real cgroupfs.
    await mkdir(join(root, 'cpuset', 'a'), { recursive: true });
    await writeFile(join(root, 'cpuset', 'a', 'cpuset.cpus'), '\n');
    await fs.create('/a/b');
    for (const h of ['cpu,cpuacct', 'memory', 'cpuset', 'unified']) assert.ok(existsSync(join(root, h, 'a', 'b')), h);
    assert.equal(await read('cpuset', 'a', 'cpuset.cpus'), '0-3');
    assert.equal(
      await read('unified', 'cgroup.subtree_control'),
      '+cpu +memory +pids +hugetlb',
      'every controller the pod cgroups are limited by, hugetlb included',
    );
    assert.equal(await fs.exists('/a/b'), true);
    assert.equal(await fs.exists('/a/c'), false);
  });

  it('set writes v1 files, and v2 files where the parent enables the controller', async () => {
    await mkdir(join(root, 'unified', 'a'), { recursive: true });
    await writeFile(join(root, 'unified', 'a', 'cgroup.subtree_control'), 'cpu memory');
    await fs.create('/a/b');
    await fs.set('/a/b', { cpuShares: 1024, cpuQuota: 50000, cpuPeriod: 100000, memory: 64 * MiB, pidsLimit: 100 });
    assert.equal(await read('cpu,cpuacct', 'a', 'b', 'cpu.shares'), '1024');
    assert.equal(await read('cpu,cpuacct', 'a', 'b', 'cpu.cfs_quota_us'), '50000');
    assert.equal(await read('cpu,cpuacct', 'a', 'b', 'cpu.cfs_period_us'), '100000');
    assert.equal(await read('memory', 'a', 'b', 'memory.limit_in_bytes'), String(64 * MiB));
    assert.equal(await read('unified', 'a', 'b', 'cpu.weight'), '39');
    assert.equal(await read('unified', 'a', 'b', 'cpu.max'), '50000 100000');
    assert.equal(await read('unified', 'a', 'b', 'memory.max'), String(64 * MiB));
    assert.equal(existsSync(join(root, 'unified', 'a', 'b', 'pids.max')), false, 'pids is not enabled in the parent');
    await fs.set('/a/b', { cpuQuota: 0 });
    assert.equal(await read('cpu,cpuacct', 'a', 'b', 'cpu.cfs_quota_us'), '-1');
  });

  /** The fixture's hierarchies plus v1 ones of these controllers. */
  async function withHierarchies(...controllers: string[]): Promise<Cgroupfs> {
    const v1 = new Map(mounts.v1);
    for (const c of controllers) {
      await mkdir(join(root, c), { recursive: true });
      v1.set(join(root, c), [c]);
    }
    return new Cgroupfs(
      { v1, unified: mounts.unified },
      { rmdir: rmdirRecursive, hugePageSizes: [2 * MiB, 1024 * MiB] },
    );
  }

  it('hugetlb: the limit asked for each page size, 0 for the others (v1 limit_in_bytes, v2 max)', async () => {
    const withV1 = await withHierarchies('hugetlb');
    await mkdir(join(root, 'unified', 'a'), { recursive: true });
    await writeFile(join(root, 'unified', 'a', 'cgroup.subtree_control'), 'hugetlb');
    await withV1.create('/a/b');
    await withV1.set('/a/b', { hugePageLimit: new Map([[2 * MiB, 8 * MiB]]) });
    assert.equal(await read('hugetlb', 'a', 'b', 'hugetlb.2MB.limit_in_bytes'), String(8 * MiB));
    assert.equal(await read('hugetlb', 'a', 'b', 'hugetlb.1GB.limit_in_bytes'), '0');
    assert.equal(await read('unified', 'a', 'b', 'hugetlb.2MB.max'), String(8 * MiB), 'enabled in the parent');
    assert.equal(await read('unified', 'a', 'b', 'hugetlb.1GB.max'), '0');
    await withV1.set('/a/b', { cpuShares: 2 });
    assert.equal(await read('hugetlb', 'a', 'b', 'hugetlb.2MB.limit_in_bytes'), String(8 * MiB), 'unset: left alone');
  });

  it('node allocatable on kubepods, podPidsLimit on pod cgroups, hugetlb from the pod, reserved cgroups', async () => {
    const reserved = [{ name: '/system.slice', config: { cpuShares: 512, memory: 256 * MiB } }];
    const withV1 = await withHierarchies('hugetlb', 'pids');
    const make = () =>
      new PodContainerManagerImpl({
        cgroups: new CgroupfsCgroupManager(withV1),
        cgroupRoot: '/na',
        kubepods: { cpuShares: 1536, memory: 3 * 1024 * MiB, pidsLimit: 4000, hugePageLimit: new Map([[2 * MiB, 0]]) },
        podPidsLimit: 64,
        reservedCgroups: reserved,
      });
    const huge = pod(
      [ctr('a', { 'hugepages-2Mi': '4Mi' }, { 'hugepages-2Mi': '4Mi', memory: '64Mi' })],
      undefined,
      'h1',
    );
    await assert.rejects(make().ensureExists(huge), /reserved cgroup \/system.slice does not exist/);
    await withV1.create('/system.slice');
    const pcm = make();
    await pcm.ensureExists(huge);
    assert.equal(await read('cpu,cpuacct', 'na', 'kubepods', 'cpu.shares'), '1536');
    assert.equal(await read('memory', 'na', 'kubepods', 'memory.limit_in_bytes'), String(3 * 1024 * MiB));
    assert.equal(await read('hugetlb', 'na', 'kubepods', 'hugetlb.2MB.limit_in_bytes'), '0');
    assert.equal(await read('pids', 'na', 'kubepods', 'pids.max'), '4000');
    assert.equal(await read('cpu,cpuacct', 'system.slice', 'cpu.shares'), '512');
    assert.equal(await read('memory', 'system.slice', 'memory.limit_in_bytes'), String(256 * MiB));
    const podDir = ['na', 'kubepods', 'burstable', 'podh1'];
    assert.equal(await read('hugetlb', ...podDir, 'hugetlb.2MB.limit_in_bytes'), String(4 * MiB));
    assert.equal(await read('hugetlb', ...podDir, 'hugetlb.1GB.limit_in_bytes'), '0');
    assert.equal(await read('pids', ...podDir, 'pids.max'), '64', 'podPidsLimit');
  });

  it('the QoS hierarchy, pod cgroups by QoS, their limits, listing and removal', async () => {
    const pcm = new PodContainerManagerImpl({
      cgroups: new CgroupfsCgroupManager(fs),
      cgroupRoot: '/test-root',
      allocatableMilliCPU: 2000,
    });
    const guaranteed = pod([ctr('a', undefined, { cpu: '1', memory: '128Mi' })], undefined, 'g1');
    const burstable = pod([ctr('a', { cpu: '250m' })], undefined, 'b1');
    const burstable2 = pod([ctr('a', { cpu: '500m' })], undefined, 'b2');
    const besteffort = pod([ctr('a')], undefined, 'e1');
    assert.equal(pcm.getPodContainerName(guaranteed), '/test-root/kubepods/podg1');
    assert.equal(pcm.getPodContainerName(burstable), '/test-root/kubepods/burstable/podb1');
    assert.equal(pcm.getPodContainerName(besteffort), '/test-root/kubepods/besteffort/pode1');
    for (const p of [guaranteed, burstable, burstable2, besteffort]) {
      assert.equal(await pcm.exists(p), false);
      await pcm.ensureExists(p);
      assert.equal(await pcm.exists(p), true);
    }
    const cpu = (...p: string[]) => read('cpu,cpuacct', 'test-root', 'kubepods', ...p);
    assert.equal(await cpu('cpu.shares'), '2048', 'node allocatable');
    assert.equal(await cpu('besteffort', 'cpu.shares'), '2');
    assert.equal(await cpu('burstable', 'cpu.shares'), '768', "the sum of the burstable pods' requests");
    assert.equal(await cpu('podg1', 'cpu.shares'), '1024');
    assert.equal(await cpu('podg1', 'cpu.cfs_quota_us'), '100000');
    assert.equal(await read('memory', 'test-root', 'kubepods', 'podg1', 'memory.limit_in_bytes'), String(128 * MiB));
    assert.equal(await cpu('burstable', 'podb1', 'cpu.shares'), '256');
    assert.equal(
      existsSync(join(root, 'cpu,cpuacct', 'test-root', 'kubepods', 'burstable', 'podb1', 'cpu.cfs_quota_us')),
      false,
      'no quota without cpu limits',
    );
    assert.deepEqual([...(await pcm.getAllPodsFromCgroups())].sort(), [
      ['b1', '/test-root/kubepods/burstable/podb1'],
      ['b2', '/test-root/kubepods/burstable/podb2'],
      ['e1', '/test-root/kubepods/besteffort/pode1'],
      ['g1', '/test-root/kubepods/podg1'],
    ]);
    await pcm.destroy('/test-root/kubepods/burstable/podb2');
    assert.equal(await pcm.exists(burstable2), false);
    for (const h of ['cpu,cpuacct', 'memory', 'cpuset', 'unified'])
      assert.equal(existsSync(join(root, h, 'test-root', 'kubepods', 'burstable', 'podb2')), false, h);
    assert.equal(await cpu('burstable', 'cpu.shares'), '256', 'burstable shares follow the pods that remain');
  });

  it('createPodContainerManager: disabled by cgroupsPerQOS false or without any cgroup mount', () => {
    assert.equal(createPodContainerManager({ cgroupsPerQOS: false }).enabled, false);
    assert.equal(createPodContainerManager({ mounts: { v1: new Map() } }).enabled, false);
    const on = createPodContainerManager({ mounts, cgroupRoot: '/' });
    assert.equal(on.enabled, true);
    assert.equal(on.getPodContainerName(pod([ctr('a')])), '/kubepods/besteffort/podu1');
  });
});
