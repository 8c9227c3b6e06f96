/**
 * The systemd driver over a recording stand-in for systemd's slice operations (the real systemd
 * is driven in test/e2e/systemd-cgroup-driver.test.ts) and plain directories standing in for the
 * cgroup hierarchies: which slices it starts with which properties, the files it writes too, and
 * the resource → property conversion of runc's systemd managers (libcontainer/cgroups/systemd).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import {
  Cgroupfs, PodContainerManagerImpl, SYSTEMD_INFINITY, SystemdCgroupManager, sliceResourceProperties,
  type SliceProperties, type SliceUnits,
} from '../../src/cm/index.js';

const MiB = 2 ** 20;

class RecordingUnits implements SliceUnits {
  readonly calls: Array<[op: string, unit: string, props?: SliceProperties]> = [];
  constructor(private readonly root: string) {}
  async startSlice(unit: string, props: SliceProperties): Promise<void> {
    this.calls.push(['start', unit, props]);
  }
  async setSliceProperties(unit: string, props: SliceProperties): Promise<void> {
    this.calls.push(['set', unit, props]);
  }
  async stopSlice(unit: string): Promise<void> {
    this.calls.push(['stop', unit]);
    // systemd removes the slice's cgroup in the hierarchies it manages (here: memory).
    await rm(join(this.root, 'memory', ...this.pathOf(unit)), { recursive: true, force: true });
  }
  private pathOf(unit: string): string[] {
    const parts = unit.replace(/\.slice$/, '').split('-');
    return parts.map((_, i) => `${parts.slice(0, i + 1).join('-')}.slice`);
  }
}

describe('sliceResourceProperties (runc systemd v1/v2 conversion)', () => {
  it('cgroup v1: CPUShares, MemoryLimit; quota per second rounded up to 10 ms; unlimited is infinity', () => {
    assert.deepEqual(sliceResourceProperties({ cpuShares: 1024, cpuQuota: 50_000, cpuPeriod: 100_000, memory: 64 * MiB, pidsLimit: 100 }, false), {
      CPUShares: 1024n, CPUQuotaPeriodUSec: 100_000n, CPUQuotaPerSecUSec: 500_000n, MemoryLimit: BigInt(64 * MiB), TasksMax: 100n,
    });
    assert.equal(sliceResourceProperties({ cpuQuota: 1_234, cpuPeriod: 100_000 }, false).CPUQuotaPerSecUSec, 20_000n, '12.34 ms per s → 20 ms');
    assert.deepEqual(sliceResourceProperties({ cpuQuota: 0, memory: 0, pidsLimit: 0 }, false), {
      CPUQuotaPerSecUSec: SYSTEMD_INFINITY, MemoryLimit: SYSTEMD_INFINITY, TasksMax: SYSTEMD_INFINITY,
    });
  });
  it('cgroup v2: CPUWeight from shares, MemoryMax', () => {
    assert.deepEqual(sliceResourceProperties({ cpuShares: 1024, memory: MiB }, true), { CPUWeight: 39n, MemoryMax: BigInt(MiB) });
    assert.deepEqual(sliceResourceProperties({}, true), {});
  });
});

describe('the systemd driver', () => {
  let root: string;
  let fs: Cgroupfs;
  let units: RecordingUnits;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kts-systemd-cm-'));
    for (const h of ['cpu', 'memory', 'cpuset']) await mkdir(join(root, h), { recursive: true });
    fs = new Cgroupfs({ v1: new Map([[join(root, 'cpu'), ['cpu']], [join(root, 'memory'), ['memory']], [join(root, 'cpuset'), ['cpuset']]]) }, { rmdir: (p) => rm(p, { recursive: true }) });
    units = new RecordingUnits(root);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const uid = '6c1a4e95-6bb6-11e6-bc26-28d2444e470d';
  const burstable = { metadata: { name: 'p', namespace: 'd', uid }, spec: { containers: [{ name: 'a', image: 'i', resources: { requests: { cpu: '250m' }, limits: { memory: '64Mi' } } }] } } as Pod;
  const leaf = `kubepods-burstable-pod${uid.replace(/-/g, '_')}.slice`;

  it('pods get slices named as upstream, started with their parents wanted and their limits, then the files', async () => {
    const pcm = new PodContainerManagerImpl({ cgroups: new SystemdCgroupManager({ units, cgroupfs: fs }), cgroupRoot: '/', allocatableMilliCPU: 2000 });
    const name = `/kubepods.slice/kubepods-burstable.slice/${leaf}`;
    assert.equal(pcm.getPodContainerName(burstable), name, 'the cgroup parent the runtime gets');
    await pcm.ensureExists(burstable);
    const started = units.calls.filter(([op]) => op === 'start').map(([, unit, p]) => [unit, p?.Wants]);
    assert.deepEqual(started, [
      ['kubepods.slice', '-.slice'], ['kubepods-burstable.slice', 'kubepods.slice'], ['kubepods-besteffort.slice', 'kubepods.slice'], [leaf, 'kubepods-burstable.slice'],
    ]);
    const podProps = units.calls.find(([op, unit]) => op === 'start' && unit === leaf)![2]!;
    assert.equal(podProps.CPUShares, 256n);
    assert.equal(podProps.MemoryLimit, BigInt(64 * MiB));
    assert.equal(units.calls.find(([op, unit]) => op === 'start' && unit === 'kubepods.slice')![2]!.CPUShares, 2048n, 'node allocatable');
    // The same values in the files, and the cpuset directory systemd does not make.
    assert.equal(await readFile(join(root, 'cpu', name, 'cpu.shares'), 'utf8'), '256');
    assert.equal(await readFile(join(root, 'memory', name, 'memory.limit_in_bytes'), 'utf8'), String(64 * MiB));
    assert.ok(existsSync(join(root, 'cpuset', name)));
    assert.equal(await pcm.exists(burstable), true);
    assert.ok(units.calls.some(([op, unit, p]) => op === 'set' && unit === 'kubepods-burstable.slice' && p?.CPUShares === 256n), 'burstable shares follow its pods');

    assert.deepEqual([...(await pcm.getAllPodsFromCgroups())], [[uid, name]]);
    await pcm.destroy(name);
    assert.ok(units.calls.some(([op, unit]) => op === 'stop' && unit === leaf));
    for (const h of ['cpu', 'memory', 'cpuset']) assert.equal(existsSync(join(root, h, name)), false, h);
    assert.equal(await pcm.exists(burstable), false);
  });

  it('an existing pod slice only gets its properties again', async () => {
    const pcm = new PodContainerManagerImpl({ cgroups: new SystemdCgroupManager({ units, cgroupfs: fs }), cgroupRoot: '/' });
    await pcm.ensureExists(burstable);
    units.calls.length = 0;
    await pcm.ensureExists(burstable);
    assert.deepEqual(units.calls.map(([op, unit]) => [op, unit]), [['set', leaf]]);
  });
});
