/**
 * The pod's QoS class, requests and limits (src/util/pod-resources.ts), the one definition that
 * status, the pod cgroups, OOM scores, eviction and admission share. The QoS table is upstream's
 * pkg/apis/core/v1/helper/qos/qos_test.go TestComputePodQOS (formerly TestGetPodQOS), case for
 * case, plus our own cases: the "1" vs "1000m" regression (status compared quantity strings and
 * called Guaranteed pods Burstable) and the request defaulting static pods need.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, ResourceRequirements } from '../../src/api/types.js';
import {
  computePodQOSClass,
  podLimits,
  podQOSClass,
  podRequests,
  ResourceError,
  type QOSClass,
} from '../../src/util/pod-resources.js';

const Mi = 2 ** 20;
const Gi = 2 ** 30;

/** upstream getResourceList: '' leaves the resource out. */
function rl(cpu: string, memory: string): Record<string, string> {
  return { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) };
}

function ctr(
  name: string,
  requests: Record<string, string>,
  limits: Record<string, string>,
  extra: Partial<Container> = {},
): Container {
  return { name, image: 'x', resources: { requests, limits }, ...extra };
}

function pod(name: string, containers: Container[], spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return { metadata: { name, namespace: 'ns', uid: name }, spec: { containers, ...spec } };
}

const podLevel = (
  requests: Record<string, string>,
  limits: Record<string, string>,
): { resources: ResourceRequirements } => ({ resources: { requests, limits } });

describe('computePodQOSClass: upstream TestComputePodQOS', () => {
  const cases: [Pod, QOSClass][] = [
    [pod('guaranteed', [ctr('guaranteed', rl('100m', '100Mi'), rl('100m', '100Mi'))]), 'Guaranteed'],
    [
      pod('guaranteed-guaranteed', [
        ctr('guaranteed', rl('100m', '100Mi'), rl('100m', '100Mi')),
        ctr('guaranteed', rl('100m', '100Mi'), rl('100m', '100Mi')),
      ]),
      'Guaranteed',
    ],
    [
      pod('best-effort-best-effort', [
        ctr('best-effort', rl('', ''), rl('', '')),
        ctr('best-effort', rl('', ''), rl('', '')),
      ]),
      'BestEffort',
    ],
    [pod('best-effort', [ctr('best-effort', rl('', ''), rl('', ''))]), 'BestEffort'],
    [
      pod('best-effort-burstable', [
        ctr('best-effort', rl('', ''), rl('', '')),
        ctr('burstable', rl('1', ''), rl('2', '')),
      ]),
      'Burstable',
    ],
    [
      pod('best-effort-guaranteed', [
        ctr('best-effort', rl('', ''), rl('', '')),
        ctr('guaranteed', rl('10m', '100Mi'), rl('10m', '100Mi')),
      ]),
      'Burstable',
    ],
    [pod('burstable-cpu-guaranteed-memory', [ctr('burstable', rl('', '100Mi'), rl('', '100Mi'))]), 'Burstable'],
    [pod('burstable-no-limits', [ctr('burstable', rl('100m', '100Mi'), rl('', ''))]), 'Burstable'],
    [
      pod('burstable-guaranteed', [
        ctr('burstable', rl('1', '100Mi'), rl('2', '100Mi')),
        ctr('guaranteed', rl('100m', '100Mi'), rl('100m', '100Mi')),
      ]),
      'Burstable',
    ],
    [
      pod('burstable-unbounded-but-requests-match-limits', [
        ctr('burstable', rl('100m', '100Mi'), rl('200m', '200Mi')),
        ctr('burstable-unbounded', rl('100m', '100Mi'), rl('', '')),
      ]),
      'Burstable',
    ],
    [pod('burstable-1', [ctr('burstable', rl('10m', '100Mi'), rl('100m', '200Mi'))]), 'Burstable'],
    [pod('burstable-2', [ctr('burstable', rl('0', '0'), rl('100m', '200Mi'))]), 'Burstable'],
    [
      pod('best-effort-hugepages', [
        ctr('best-effort', { ...rl('0', '0'), 'hugepages-2Mi': '1Gi' }, { ...rl('0', '0'), 'hugepages-2Mi': '1Gi' }),
      ]),
      'BestEffort',
    ],
    [
      pod('init-container', [ctr('best-effort', rl('', ''), rl('', ''))], {
        initContainers: [ctr('burstable', rl('10m', '100Mi'), rl('100m', '200Mi'))],
      }),
      'Burstable',
    ],
    [
      pod(
        'guaranteed-with-pod-level-resources',
        [ctr('best-effort', rl('', ''), rl('', ''))],
        podLevel(rl('10m', '100Mi'), rl('10m', '100Mi')),
      ),
      'Guaranteed',
    ],
    [
      pod(
        'guaranteed-with-pod-and-container-level-resources',
        [ctr('burstable', rl('3m', '10Mi'), rl('5m', '20Mi'))],
        podLevel(rl('10m', '100Mi'), rl('10m', '100Mi')),
      ),
      'Guaranteed',
    ],
    [
      pod(
        'burstable-with-pod-level-resources',
        [ctr('best-effort', rl('', ''), rl('', ''))],
        podLevel(rl('10m', '10Mi'), rl('20m', '50Mi')),
      ),
      'Burstable',
    ],
    [
      pod(
        'burstable-with-pod-and-container-level-resources',
        [ctr('burstable', rl('5m', '10Mi'), rl('5m', '10Mi'))],
        podLevel(rl('10m', '10Mi'), rl('20m', '50Mi')),
      ),
      'Burstable',
    ],
    [
      pod(
        'burstable-with-pod-and-container-level-requests',
        [ctr('burstable', rl('5m', '10Mi'), rl('', ''))],
        podLevel(rl('10m', '10Mi'), rl('', '')),
      ),
      'Burstable',
    ],
    [
      pod(
        'burstable-with-pod-and-container-level-resources-2',
        [ctr('burstable', rl('5m', '10Mi'), rl('', '')), ctr('guaranteed', rl('5m', '10Mi'), rl('5m', '10Mi'))],
        podLevel(rl('10m', '10Mi'), rl('5m', '')),
      ),
      'Burstable',
    ],
  ];
  for (const [p, want] of cases) {
    it(`${p.metadata!.name}: ${want}`, () => assert.equal(computePodQOSClass(p), want));
  }
});

describe('podQOSClass: our cases', () => {
  it('regression: cpu request "1" with limit "1000m" is Guaranteed (the same cpu, parsed)', () => {
    const p = pod('static', [ctr('c', { cpu: '1', memory: '1Gi' }, { cpu: '1000m', memory: '1024Mi' })]);
    assert.equal(podQOSClass(p), 'Guaranteed');
  });
  it('a request left out next to a limit counts as the limit (static pods are not defaulted by an apiserver)', () => {
    assert.equal(podQOSClass(pod('limits-only', [ctr('c', {}, { cpu: '1', memory: '64Mi' })])), 'Guaranteed');
    assert.equal(podQOSClass(pod('limits-only-cpu', [ctr('c', {}, { cpu: '1' })])), 'Burstable');
  });
  it('pod-level limits without requests: the requests default to the limits', () => {
    assert.equal(podQOSClass(pod('pod-limits', [ctr('c', {}, {})], podLevel({}, rl('100m', '64Mi')))), 'Guaranteed');
    // ... or to the containers' requests when they have some (upstream defaultPodRequests).
    assert.equal(
      podQOSClass(pod('pod-limits-ctr-req', [ctr('c', rl('50m', '32Mi'), {})], podLevel({}, rl('100m', '64Mi')))),
      'Burstable',
    );
  });
  it('upstream GetPodQOS: the class the apiserver recorded in status wins', () => {
    const p = pod('recorded', [ctr('c', rl('100m', '64Mi'), rl('100m', '64Mi'))]);
    p.status = { qosClass: 'Burstable' };
    assert.equal(podQOSClass(p), 'Burstable');
    assert.equal(computePodQOSClass(p), 'Guaranteed');
  });
  it('a malformed quantity is a ResourceError naming the container and field', () => {
    assert.throws(
      () => podQOSClass(pod('bad', [ctr('c', { cpu: 'lots' }, {})])),
      (e: unknown) => e instanceof ResourceError && /container c: resources\.requests\.cpu/.test(e.message),
    );
  });
});

describe('podRequests / podLimits (upstream resource.PodRequests / PodLimits)', () => {
  const req = (name: string, cpu?: string, memory?: string, extra: Partial<Container> = {}) =>
    ctr(name, rl(cpu ?? '', memory ?? ''), {}, extra);
  it('containers summed, init containers as the max step, sidecars counted as upstream, overhead added', () => {
    assert.deepEqual(podRequests(pod('a', [req('a', '100m', '64Mi'), req('b', '0.2', '1Gi')])), {
      cpu: 300,
      memory: 64 * Mi + Gi,
    });
    // A big init container dominates; a small one does not.
    assert.deepEqual(podRequests(pod('b', [req('a', '100m', '64Mi')], { initContainers: [req('i', '2', '32Mi')] })), {
      cpu: 2000,
      memory: 64 * Mi,
    });
    // Sidecars run beside the regular containers and beside later init containers.
    const withSidecar = pod('c', [req('app', '100m', '100Mi')], {
      initContainers: [req('side', '200m', '50Mi', { restartPolicy: 'Always' }), req('init', '250m', '10Mi')],
    });
    assert.deepEqual(podRequests(withSidecar), { cpu: 450, memory: 150 * Mi });
    assert.deepEqual(podRequests(pod('d', [req('a')], { overhead: { cpu: '10m', memory: '1Mi' } })), {
      cpu: 10,
      memory: Mi,
    });
    assert.deepEqual(
      podRequests(pod('d', [req('a')], { overhead: { cpu: '10m', memory: '1Mi' } }), { excludeOverhead: true }),
      { cpu: 0, memory: 0 },
    );
  });
  it('requests default to limits; overhead is added only to a limited resource', () => {
    const p = pod('e', [ctr('a', {}, rl('1', '64Mi')), ctr('b', {}, rl('500m', ''))], {
      overhead: { cpu: '10m', memory: '1Mi' },
    });
    assert.deepEqual(podRequests(p), { cpu: 1510, memory: 65 * Mi });
    assert.deepEqual(podLimits(p), { cpu: 1510, memory: 65 * Mi });
    assert.deepEqual(
      podLimits(pod('f', [req('a', '1')], { overhead: { cpu: '10m' } })),
      { cpu: 0, memory: 0 },
      'an unlimited pod stays unlimited',
    );
  });
  it("pod-level resources replace the containers' sums for the resources they name", () => {
    const p = pod('g', [ctr('a', rl('100m', '64Mi'), rl('200m', '128Mi'))], podLevel(rl('', '256Mi'), rl('1', '')));
    assert.deepEqual(podRequests(p), { cpu: 100, memory: 256 * Mi });
    assert.deepEqual(podLimits(p), { cpu: 1000, memory: 128 * Mi });
  });
});
