/**
 * Node allocatable, table-driven after upstream pkg/kubelet/cm/node_container_manager_linux_test.go:
 * TestNodeAllocatableReservationForScheduling, TestNodeAllocatableForEnforcement,
 * TestNodeAllocatableInputValidation and TestGetCgroupConfig, with the same cases (quantities in
 * base units: milli-CPU, bytes), plus huge page cases of our own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cgroupConfigOf, kubepodsCgroupConfig, reservedCgroups } from '../../src/cm/node-allocatable.js';
import {
  allocatableAbsolute,
  allocatableReservation,
  nodeAllocatableProblems,
  type NodeAllocatableConfig,
  type ResourceList,
} from '../../src/node/allocatable.js';

const Mi = 2 ** 20;
const Gi = 2 ** 30;
/** upstream getResourceList(cpu, memory): '' leaves the resource out. */
function rl(cpu: string, memory: string): ResourceList {
  const out: Record<string, number> = {};
  if (cpu !== '') out.cpu = cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000;
  if (memory !== '')
    out.memory = /Gi$/.test(memory) ? Number(memory.slice(0, -2)) * Gi : Number(memory.slice(0, -2)) * Mi;
  return out;
}
const storage = (bytes: number): ResourceList => ({ 'ephemeral-storage': bytes });

interface Case {
  kube: ResourceList;
  system: ResourceList;
  capacity: ResourceList;
  /** evictionHard memory.available (or nodefs.available for the storage cases). */
  threshold?: string;
  expected?: ResourceList;
  invalid?: boolean;
}

function config(c: Case, signal = 'memory.available'): NodeAllocatableConfig {
  return {
    capacity: c.capacity,
    kubeReserved: c.kube,
    systemReserved: c.system,
    ...(c.threshold ? { evictionHard: { [signal]: c.threshold } } : {}),
  };
}

describe('TestNodeAllocatableReservationForScheduling', () => {
  const cpuMem: Case[] = [
    { kube: rl('100m', '100Mi'), system: rl('50m', '50Mi'), capacity: rl('10', '10Gi'), expected: rl('150m', '150Mi') },
    {
      kube: rl('100m', '100Mi'),
      system: rl('50m', '50Mi'),
      threshold: '100Mi',
      capacity: rl('10', '10Gi'),
      expected: rl('150m', '250Mi'),
    },
    {
      kube: rl('100m', '100Mi'),
      system: rl('50m', '50Mi'),
      threshold: '5%',
      capacity: rl('10', '10Gi'),
      // upstream's float32 percentage: 150Mi + 536870920, not + 536870912.
      expected: { cpu: 150, memory: 694157320 },
    },
    { kube: {}, system: {}, capacity: rl('10', '10Gi'), expected: rl('', '') },
    { kube: rl('', '100Mi'), system: rl('50m', '50Mi'), capacity: rl('10', '10Gi'), expected: rl('50m', '150Mi') },
    { kube: rl('50m', '100Mi'), system: rl('', '50Mi'), capacity: rl('10', '10Gi'), expected: rl('50m', '150Mi') },
    { kube: rl('', '100Mi'), system: rl('', '50Mi'), capacity: rl('10', ''), expected: rl('', '150Mi') },
  ];
  cpuMem.forEach((c, i) =>
    it(`cpu/memory case ${i}`, () => assert.deepEqual(allocatableReservation(config(c)), c.expected)),
  );
  const storageCases: Case[] = [
    { kube: storage(100 * Mi), system: storage(50 * Mi), capacity: storage(10 * Gi), expected: storage(150 * Mi) },
    {
      kube: storage(100 * Mi),
      system: storage(50 * Mi),
      threshold: '100Mi',
      capacity: storage(10 * Gi),
      expected: storage(250 * Mi),
    },
    {
      kube: storage(100 * Mi),
      system: storage(50 * Mi),
      threshold: '5%',
      capacity: storage(10 * Gi),
      expected: storage(694157320),
    },
    { kube: {}, system: {}, capacity: storage(10 * Gi), expected: {} },
  ];
  storageCases.forEach((c, i) =>
    it(`ephemeral-storage case ${i}`, () =>
      assert.deepEqual(allocatableReservation(config(c, 'nodefs.available')), c.expected)),
  );
});

describe('TestNodeAllocatableForEnforcement', () => {
  const cases: Case[] = [
    {
      kube: rl('100m', '100Mi'),
      system: rl('50m', '50Mi'),
      capacity: rl('10', '10Gi'),
      expected: rl('9850m', '10090Mi'),
    },
    {
      kube: rl('100m', '100Mi'),
      system: rl('50m', '50Mi'),
      threshold: '100Mi',
      capacity: rl('10', '10Gi'),
      expected: rl('9850m', '10090Mi'),
    },
    {
      kube: rl('100m', '100Mi'),
      system: rl('50m', '50Mi'),
      threshold: '5%',
      capacity: rl('10', '10Gi'),
      expected: rl('9850m', '10090Mi'),
    },
    { kube: {}, system: {}, capacity: rl('10', '10Gi'), expected: rl('10', '10Gi') },
    { kube: rl('', '100Mi'), system: rl('50m', '50Mi'), capacity: rl('10', '10Gi'), expected: rl('9950m', '10090Mi') },
    { kube: rl('50m', '100Mi'), system: rl('', '50Mi'), capacity: rl('10', '10Gi'), expected: rl('9950m', '10090Mi') },
    { kube: rl('', '100Mi'), system: rl('', '50Mi'), capacity: rl('10', ''), expected: rl('10', '') },
  ];
  cases.forEach((c, i) =>
    it(`case ${i}: capacity − systemReserved − kubeReserved, no eviction threshold`, () => {
      assert.deepEqual(allocatableAbsolute(config(c)), c.expected);
      const kubepods = kubepodsCgroupConfig(config(c), ['pods']);
      assert.equal(kubepods.memory, c.expected!.memory);
    }),
  );
  it('without "pods" enforcement kubepods gets the capacity', () => {
    const c = config(cases[0]!);
    assert.equal(kubepodsCgroupConfig(c, []).memory, 10 * Gi);
    assert.equal(kubepodsCgroupConfig(c, []).cpuShares, 10240);
    assert.equal(kubepodsCgroupConfig(c, ['pods']).cpuShares, Math.floor((9850 * 1024) / 1000));
  });
});

describe('TestNodeAllocatableInputValidation', () => {
  const cases: Case[] = [
    { kube: rl('100m', '100Mi'), system: rl('50m', '50Mi'), capacity: rl('10', '10Gi') },
    { kube: rl('100m', '100Mi'), system: rl('50m', '50Mi'), threshold: '100Mi', capacity: rl('10', '10Gi') },
    { kube: rl('100m', '100Mi'), system: rl('50m', '50Mi'), threshold: '5%', capacity: rl('10', '10Gi') },
    { kube: rl('', '100Mi'), system: rl('50m', '50Mi'), capacity: rl('10', '10Gi') },
    { kube: rl('50m', '100Mi'), system: rl('', '50Mi'), capacity: rl('10', '10Gi') },
    { kube: rl('', '100Mi'), system: rl('', '50Mi'), capacity: rl('10', ''), invalid: true },
    { kube: rl('5', '10Gi'), system: rl('5', '10Gi'), threshold: '2Gi', capacity: rl('10', '11Gi'), invalid: true },
  ];
  cases.forEach((c, i) =>
    it(`cpu/memory case ${i}: ${c.invalid ? 'invalid' : 'valid'}`, () =>
      assert.equal(nodeAllocatableProblems(config(c)).length > 0, c.invalid === true)),
  );
  const storageCases: Case[] = [
    { kube: storage(100 * Mi), system: {}, capacity: storage(10 * Gi) },
    { kube: storage(10 * Gi), system: {}, threshold: '100Mi', capacity: storage(10 * Gi), invalid: true },
  ];
  storageCases.forEach((c, i) =>
    it(`ephemeral-storage case ${i}: ${c.invalid ? 'invalid' : 'valid'}`, () =>
      assert.equal(nodeAllocatableProblems(config(c, 'nodefs.available')).length > 0, c.invalid === true)),
  );
  it('the problem names the resource, the reservation and the capacity', () => {
    assert.deepEqual(nodeAllocatableProblems(config(cases[5]!)), [
      `resource "memory" has a reservation of ${150 * Mi} but a capacity of 0: expected capacity >= reservation`,
    ]);
  });
  // Ours: huge pages follow the same rule (upstream's config cannot reserve them; the arithmetic can).
  it('hugepages: reservation against the host pool', () => {
    const capacity = { 'hugepages-2Mi': 10 * Gi };
    assert.equal(nodeAllocatableProblems({ capacity, kubeReserved: { 'hugepages-2Mi': 5 * Gi } }).length, 0);
    assert.equal(nodeAllocatableProblems({ capacity, kubeReserved: { 'hugepages-2Mi': 11 * Gi } }).length, 1);
    assert.deepEqual(allocatableAbsolute({ capacity, systemReserved: { 'hugepages-2Mi': 4 * Gi } }), {
      'hugepages-2Mi': 6 * Gi,
    });
  });
});

describe('TestGetCgroupConfig', () => {
  it('compressible resources only: cpu shares', () => {
    assert.deepEqual(cgroupConfigOf({ cpu: 2000, memory: 2 * Gi }, true), { cpuShares: 2048 });
  });
  it('memory only', () => {
    assert.deepEqual(cgroupConfigOf({ memory: 2 * Gi }), { memory: 2 * Gi, hugePageLimit: new Map() });
  });
  it('memory and cpu without pid and hugepages', () => {
    assert.deepEqual(cgroupConfigOf({ cpu: 2000, memory: 2 * Gi }), {
      cpuShares: 2048,
      memory: 2 * Gi,
      hugePageLimit: new Map(),
    });
  });
  it('memory and cpu with pid and hugepages', () => {
    assert.deepEqual(cgroupConfigOf({ cpu: 2000, memory: 2 * Gi, pid: 2000, 'hugepages-2Mi': 2 * Gi }), {
      cpuShares: 2048,
      memory: 2 * Gi,
      pidsLimit: 2000,
      hugePageLimit: new Map([[2 * Mi, 2 * Gi]]),
    });
  });
});

describe('enforceNodeAllocatable: the reserved cgroups', () => {
  const cgroups = { systemReservedCgroup: '/system.slice', kubeReservedCgroup: '/kube.slice' };
  const reserved = { systemReserved: rl('500m', '1Gi'), kubeReserved: rl('250m', '512Mi') };
  it('system-reserved: every limit; kube-reserved-compressible: cpu shares only; pods alone: none', () => {
    assert.deepEqual(reservedCgroups(['pods', 'system-reserved', 'kube-reserved-compressible'], cgroups, reserved), [
      { name: '/system.slice', config: { cpuShares: 512, memory: Gi, hugePageLimit: new Map() } },
      { name: '/kube.slice', config: { cpuShares: 256 } },
    ]);
    assert.deepEqual(reservedCgroups(['pods'], cgroups, reserved), []);
  });
});
