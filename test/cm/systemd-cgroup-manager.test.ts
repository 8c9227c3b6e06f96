/**
 * The systemd driver over a recording stand-in for systemd's slice operations (the real systemd
 * is driven in test/e2e/systemd-cgroup-driver.test.ts) and plain directories standing in for the
 * cgroup hierarchies: which slices it starts with which properties, the files it writes too, and
 * the resource → property conversion of runc's systemd managers (libcontainer/cgroups/systemd).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import {
  Cgroupfs,
  PodContainerManagerImpl,
  SYSTEMD_INFINITY,
  SystemdCgroupManager,
  SystemdUnavailableError,
  connectSystemdSlices,
  sliceResourceProperties,
  sliceUnits,
  type SliceProperties,
  type SliceUnits,
} from '../../src/cm/index.js';
import type { SystemdUnitManager, UnitProperty } from '../../src/cm/systemd/index.js';
import { testTempDir } from '../support/temp-dir.js';

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
    assert.deepEqual(
      sliceResourceProperties(
        { cpuShares: 1024, cpuQuota: 50_000, cpuPeriod: 100_000, memory: 64 * MiB, pidsLimit: 100 },
        false,
      ),
      {
        CPUShares: 1024n,
        CPUQuotaPeriodUSec: 100_000n,
        CPUQuotaPerSecUSec: 500_000n,
        MemoryLimit: BigInt(64 * MiB),
        TasksMax: 100n,
      },
    );
    assert.equal(
      sliceResourceProperties({ cpuQuota: 1_234, cpuPeriod: 100_000 }, false).CPUQuotaPerSecUSec,
      20_000n,
      '12.34 ms per s → 20 ms',
    );
    assert.deepEqual(sliceResourceProperties({ cpuQuota: 0, memory: 0, pidsLimit: 0 }, false), {
      CPUQuotaPerSecUSec: SYSTEMD_INFINITY,
      MemoryLimit: SYSTEMD_INFINITY,
      TasksMax: SYSTEMD_INFINITY,
    });
  });
  it('cgroup v2: CPUWeight from shares, MemoryMax', () => {
    assert.deepEqual(sliceResourceProperties({ cpuShares: 1024, memory: MiB }, true), {
      CPUWeight: 39n,
      MemoryMax: BigInt(MiB),
    });
    assert.deepEqual(sliceResourceProperties({}, true), {});
  });
});

describe('the systemd driver', () => {
  let root: string;
  let fs: Cgroupfs;
  let units: RecordingUnits;
  beforeEach(async () => {
    root = testTempDir('kts-systemd-cm-');
    for (const h of ['cpu', 'memory', 'cpuset']) await mkdir(join(root, h), { recursive: true });
    fs = new Cgroupfs(
      {
        v1: new Map([
          [join(root, 'cpu'), ['cpu']],
          [join(root, 'memory'), ['memory']],
          [join(root, 'cpuset'), ['cpuset']],
        ]),
      },
      { rmdir: (p) => rm(p, { recursive: true }) },
    );
    units = new RecordingUnits(root);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const uid = '6c1a4e95-6bb6-11e6-bc26-28d2444e470d';
  const burstable = {
    metadata: { name: 'p', namespace: 'd', uid },
    spec: {
      containers: [{ name: 'a', image: 'i', resources: { requests: { cpu: '250m' }, limits: { memory: '64Mi' } } }],
    },
  } as Pod;
  const leaf = `kubepods-burstable-pod${uid.replace(/-/g, '_')}.slice`;

  it('pods get slices named as upstream, started with their parents wanted and their limits, then the files', async () => {
    const pcm = new PodContainerManagerImpl({
      cgroups: new SystemdCgroupManager({ units, cgroupfs: fs }),
      cgroupRoot: '/',
      allocatableMilliCPU: 2000,
    });
    const name = `/kubepods.slice/kubepods-burstable.slice/${leaf}`;
    assert.equal(pcm.getPodContainerName(burstable), name, 'the cgroup parent the runtime gets');
    await pcm.ensureExists(burstable);
    const started = units.calls.filter(([op]) => op === 'start').map(([, unit, p]) => [unit, p?.Wants]);
    assert.deepEqual(started, [
      ['kubepods.slice', '-.slice'],
      ['kubepods-burstable.slice', 'kubepods.slice'],
      ['kubepods-besteffort.slice', 'kubepods.slice'],
      [leaf, 'kubepods-burstable.slice'],
    ]);
    const podProps = units.calls.find(([op, unit]) => op === 'start' && unit === leaf)![2]!;
    assert.equal(podProps.CPUShares, 256n);
    assert.equal(podProps.MemoryLimit, BigInt(64 * MiB));
    assert.equal(
      units.calls.find(([op, unit]) => op === 'start' && unit === 'kubepods.slice')![2]!.CPUShares,
      2048n,
      'node allocatable',
    );
    // The same values in the files, and the cpuset directory systemd does not make.
    assert.equal(await readFile(join(root, 'cpu', name, 'cpu.shares'), 'utf8'), '256');
    assert.equal(await readFile(join(root, 'memory', name, 'memory.limit_in_bytes'), 'utf8'), String(64 * MiB));
    assert.ok(existsSync(join(root, 'cpuset', name)));
    assert.equal(await pcm.exists(burstable), true);
    assert.ok(
      units.calls.some(([op, unit, p]) => op === 'set' && unit === 'kubepods-burstable.slice' && p?.CPUShares === 256n),
      'burstable shares follow its pods',
    );

    assert.deepEqual([...(await pcm.getAllPodsFromCgroups())], [[uid, name]]);
    await pcm.destroy(name);
    assert.ok(units.calls.some(([op, unit]) => op === 'stop' && unit === leaf));
    for (const h of ['cpu', 'memory', 'cpuset']) assert.equal(existsSync(join(root, h, name)), false, h);
    assert.equal(await pcm.exists(burstable), false);
  });

  it('an existing pod slice only gets its properties again', async () => {
    const pcm = new PodContainerManagerImpl({
      cgroups: new SystemdCgroupManager({ units, cgroupfs: fs }),
      cgroupRoot: '/',
    });
    await pcm.ensureExists(burstable);
    units.calls.length = 0;
    await pcm.ensureExists(burstable);
    assert.deepEqual(
      units.calls.map(([op, unit]) => [op, unit]),
      [['set', leaf]],
    );
  });
});

describe("the slice operations over systemd's unit manager", () => {
  it('a slice is started as runc starts one: no default dependencies, accounting, its parent wanted, the limits', async () => {
    const calls: Array<[string, string, UnitProperty[]]> = [];
    const manager = {
      startTransientUnit: async (name: string, props: UnitProperty[]) => void calls.push(['start', name, props]),
      setUnitProperties: async (name: string, _runtime: boolean, props: UnitProperty[]) =>
        void calls.push(['set', name, props]),
      stopUnit: async (name: string) => void calls.push(['stop', name, []]),
      resetFailedUnit: async () => undefined,
      getUnitProperty: async () => ({ sig: 's', value: '' }),
      close: () => undefined,
    } satisfies SystemdUnitManager;
    const units = sliceUnits(manager);
    await units.startSlice('kubepods-burstable.slice', { Description: 'd', Wants: 'kubepods.slice', CPUShares: 256n });
    const props = Object.fromEntries(calls[0]![2].map((p) => [p.name, p.value]));
    assert.deepEqual(props, {
      Description: { sig: 's', value: 'd' },
      Wants: { sig: 'as', value: ['kubepods.slice'] },
      DefaultDependencies: { sig: 'b', value: false },
      MemoryAccounting: { sig: 'b', value: true },
      CPUAccounting: { sig: 'b', value: true },
      TasksAccounting: { sig: 'b', value: true },
      CPUShares: { sig: 't', value: 256n },
    });
    await units.setSliceProperties('kubepods-burstable.slice', {});
    assert.equal(calls.length, 1, 'nothing to set: no call');
    await units.setSliceProperties('kubepods-burstable.slice', { MemoryLimit: SYSTEMD_INFINITY });
    assert.deepEqual(calls[1], [
      'set',
      'kubepods-burstable.slice',
      [{ name: 'MemoryLimit', value: { sig: 't', value: SYSTEMD_INFINITY } }],
    ]);
    await units.stopSlice('kubepods-burstable.slice');
    assert.deepEqual(calls[2], ['stop', 'kubepods-burstable.slice', []]);
  });

  it('no systemd to talk to: a start-up error naming the driver and both ways out', async () => {
    await assert.rejects(
      connectSystemdSlices({ socketPaths: ['/nonexistent/kts/private'], timeoutMs: 1000 }),
      (e: unknown) =>
        e instanceof SystemdUnavailableError &&
        e.code === 'KTS_ERR_SYSTEMD_UNAVAILABLE' &&
        /cgroupDriver is "systemd"/.test(e.message) &&
        /cgroupDriver: cgroupfs/.test(e.message) &&
        e.message.includes('/nonexistent/kts/private'),
    );
  });
});
