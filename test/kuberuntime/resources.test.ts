import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container } from '../../src/api/types.js';
import {
  containerHugepageLimits,
  containerOOMScoreAdjust,
  linuxContainerResources,
  milliCPUToQuota,
  milliCPUToShares,
} from '../../src/kuberuntime/resources.js';
import { podQOSClass, ResourceError } from '../../src/util/pod-resources.js';
import { container, makePod } from './helpers.js';

const GiB = 2 ** 30;
const withRes = (requests?: Record<string, string>, limits?: Record<string, string>): Container =>
  container('a', { resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });
const podOf = (...cs: Container[]) => makePod({ containers: cs });

describe('cpu conversions', () => {
  const shares: [number, number][] = [
    [0, 2],
    [1, 2],
    [2, 2],
    [100, 102],
    [250, 256],
    [1000, 1024],
    [1500, 1536],
    [1_000_000, 262144],
  ];
  for (const [m, want] of shares) it(`milliCPUToShares(${m}) = ${want}`, () => assert.equal(milliCPUToShares(m), want));
  const quotas: [number, number][] = [
    [0, 0],
    [1, 1000],
    [5, 1000],
    [10, 1000],
    [250, 25000],
    [1000, 100000],
    [2500, 250000],
  ];
  for (const [m, want] of quotas)
    it(`milliCPUToQuota(${m}, 100000) = ${want}`, () => assert.equal(milliCPUToQuota(m, 100000), want));
});

describe('linuxContainerResources', () => {
  it('BestEffort: minimal shares, no quota, no memory limit, oom 1000', () => {
    const c = container('a');
    assert.deepEqual(linuxContainerResources(podOf(c), c, 8 * GiB), {
      cpuShares: 2,
      cpuPeriod: 100000,
      cpuQuota: 0,
      oomScoreAdj: 1000,
      hugepageLimits: containerHugepageLimits(podOf(c), c),
    });
  });

  it('Guaranteed: shares from the request, quota from the limit, memory limit, oom -997', () => {
    const c = withRes({ cpu: '500m', memory: '128Mi' }, { cpu: '500m', memory: '128Mi' });
    assert.deepEqual(linuxContainerResources(podOf(c), c, 8 * GiB), {
      cpuShares: 512,
      cpuPeriod: 100000,
      cpuQuota: 50000,
      memoryLimitInBytes: 134217728,
      oomScoreAdj: -997,
      hugepageLimits: containerHugepageLimits(podOf(c), c),
    });
  });

  it('limit only: shares follow the limit (the request defaults to it)', () => {
    const c = withRes(undefined, { cpu: '2', memory: '1Gi' });
    const r = linuxContainerResources(podOf(c), c, 8 * GiB);
    assert.equal(r.cpuShares, 2048);
    assert.equal(r.cpuQuota, 200000);
    assert.equal(r.memoryLimitInBytes, GiB);
    assert.equal(r.oomScoreAdj, -997, 'limits only for cpu+memory is Guaranteed once defaulted');
  });

  it('Burstable: oom score from the memory request share of capacity', () => {
    const c = withRes({ cpu: '100m', memory: '1Gi' });
    const r = linuxContainerResources(podOf(c), c, 4 * GiB);
    assert.equal(r.cpuShares, 102);
    assert.equal(r.oomScoreAdj, 750);
  });

  it('a malformed quantity is a ResourceError naming the field', () => {
    const c = withRes({ cpu: 'lots' });
    assert.throws(
      () => linuxContainerResources(podOf(c), c, GiB),
      (e: unknown) => e instanceof ResourceError && /resources\.requests\.cpu/.test(e.message),
    );
  });
});

describe('QoS and OOM score', () => {
  it('classifies pods as upstream', () => {
    assert.equal(podQOSClass(podOf(container('a'))), 'BestEffort');
    assert.equal(podQOSClass(podOf(withRes({ cpu: '1' }))), 'Burstable');
    assert.equal(podQOSClass(podOf(withRes({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }))), 'Guaranteed');
    assert.equal(podQOSClass(podOf(withRes({ cpu: '500m', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }))), 'Burstable');
    assert.equal(
      podQOSClass(podOf(withRes({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }), container('b'))),
      'Burstable',
    );
    assert.equal(
      podQOSClass(podOf(withRes({ cpu: '1000m', memory: '1024Mi' }, { cpu: '1', memory: '1Gi' }))),
      'Guaranteed',
      'equal quantities in other units',
    );
  });

  it('Burstable score stays between Guaranteed and BestEffort', () => {
    const big = withRes({ memory: '8Gi' });
    assert.equal(containerOOMScoreAdjust(podOf(big), big, 4 * GiB), 3, 'request above capacity clamps to 1000-997');
    const tiny = withRes({ cpu: '100m' });
    assert.equal(
      containerOOMScoreAdjust(podOf(tiny), tiny, 4 * GiB),
      999,
      'no memory request is 999, not BestEffort 1000',
    );
  });
});

describe('OOM score: node-critical pods and sidecars (upstream GetContainerOOMScoreAdjust)', () => {
  it('a static pod of class system-node-critical scores like Guaranteed', () => {
    const c = withRes({ memory: '1Gi' });
    const pod = podOf(c);
    pod.metadata!.annotations = { 'kubernetes.io/config.source': 'file' };
    pod.spec!.priorityClassName = 'system-node-critical';
    assert.equal(containerOOMScoreAdjust(pod, c, 4 * GiB), -997);
    pod.metadata!.annotations = { 'kubernetes.io/config.source': 'api' };
    assert.equal(containerOOMScoreAdjust(pod, c, 4 * GiB), 750, 'an API pod needs the system priority too');
  });

  it('a sidecar scores from min(its request, the smallest regular request) and +1 when it is not the smaller', () => {
    const app = withRes({ memory: '1Gi' });
    const bigSidecar = container('side', { restartPolicy: 'Always', resources: { requests: { memory: '2Gi' } } });
    const pod = makePod({ containers: [app], initContainers: [bigSidecar] });
    // min(2Gi, 1Gi) = 1Gi → 750; the sidecar's own request is larger → +1.
    assert.equal(containerOOMScoreAdjust(pod, bigSidecar, 4 * GiB), 751);
    const smallSidecar = container('side', { restartPolicy: 'Always', resources: { requests: { memory: '512Mi' } } });
    const pod2 = makePod({ containers: [app], initContainers: [smallSidecar] });
    assert.equal(
      containerOOMScoreAdjust(pod2, smallSidecar, 4 * GiB),
      876,
      'its own 512Mi request is the smaller: 1000-125+1',
    );
    const noRequest = container('side', { restartPolicy: 'Always' });
    const pod3 = makePod({ containers: [app], initContainers: [noRequest] });
    assert.equal(
      containerOOMScoreAdjust(pod3, noRequest, 4 * GiB),
      952,
      'a missing request counts as 200 MiB: 1000-48',
    );
  });
});

describe('containerHugepageLimits (upstream GetHugepageLimitsFromResources)', () => {
  const MiB = 2 ** 20;
  const sizes = [2 * MiB, GiB];
  it('every page size of the host, 0 unless asked for', () => {
    const c = withRes({ 'hugepages-2Mi': '4Mi' }, { 'hugepages-2Mi': '4Mi' });
    assert.deepEqual(containerHugepageLimits(podOf(c), c, sizes), [
      { pageSize: '2MB', limit: 4 * MiB },
      { pageSize: '1GB', limit: 0 },
    ]);
    assert.deepEqual(containerHugepageLimits(podOf(container('b')), container('b'), []), [], 'no hugetlb support');
  });
  it("the pod level's limit when the container names none of that size; the container's wins", () => {
    const c = withRes(undefined, { 'hugepages-1Gi': '1Gi' });
    const pod = podOf(c);
    pod.spec!.resources = { limits: { 'hugepages-2Mi': '8Mi', 'hugepages-1Gi': '2Gi' } };
    assert.deepEqual(containerHugepageLimits(pod, c, sizes), [
      { pageSize: '2MB', limit: 8 * MiB },
      { pageSize: '1GB', limit: GiB },
    ]);
  });
});
