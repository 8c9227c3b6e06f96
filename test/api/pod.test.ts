/**
 * The pod facts of src/api/pod.ts that several subsystems ask: identity accessors that name a
 * missing field, the full name (upstream GetPodFullName, format.Pod) and the default grace period.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import {
  buildPodFullName,
  DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
  formatPod,
  klogRef,
  podFullName,
  podName,
  podNames,
  podNamespace,
  podTerminationGracePeriodSeconds,
  podUID,
} from '../../src/api/pod.js';
import { PodIdentityError } from '../../src/errors.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'ns', uid: 'u-1' } };

describe('pod identity', () => {
  it('reads UID, name and namespace', () => {
    assert.equal(podUID(pod), 'u-1');
    assert.equal(podName(pod), 'web');
    assert.equal(podNamespace(pod), 'ns');
    assert.deepEqual(podNames(pod), { namespace: 'ns', name: 'web', uid: 'u-1' });
  });
  for (const field of ['uid', 'name', 'namespace'] as const) {
    for (const missing of [undefined, '']) {
      it(`a ${JSON.stringify(missing)} metadata.${field} is a PodIdentityError naming the field`, () => {
        const broken: Pod = { metadata: { ...pod.metadata, [field]: missing } };
        assert.throws(
          () => podNames(broken),
          (e: unknown) =>
            e instanceof PodIdentityError && e.code === 'KTS_ERR_POD_IDENTITY' && e.field === `metadata.${field}`,
        );
      });
    }
  }
  it('a pod without metadata at all', () => {
    assert.throws(
      () => podUID({}),
      (e: unknown) => e instanceof PodIdentityError && /pod \?\/\?: metadata\.uid/.test(e.message),
    );
  });
});

describe('full name (upstream GetPodFullName, format.Pod)', () => {
  it('<name>_<namespace>', () => {
    assert.equal(podFullName(pod), 'web_ns');
    assert.equal(buildPodFullName('web', 'ns'), 'web_ns');
    assert.throws(() => podFullName({ metadata: { name: 'web' } }), PodIdentityError);
  });
  it('format.Pod adds the UID and never throws (it is for log lines)', () => {
    assert.equal(formatPod(pod), 'web_ns(u-1)');
    assert.equal(formatPod({}), '_()');
  });
  it('klog.KObj: namespace/name, the name alone without a namespace, never throws', () => {
    assert.equal(klogRef(pod.metadata), 'ns/web');
    assert.equal(klogRef({ name: 'static' }), 'static');
    assert.equal(klogRef({ namespace: 'kube-system', name: 'etcd' }), 'kube-system/etcd');
    assert.equal(klogRef(undefined), '');
  });
});

describe('termination grace period', () => {
  it('upstream DefaultTerminationGracePeriodSeconds when unset, the spec value (0 included) otherwise', () => {
    assert.equal(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, 30);
    assert.equal(podTerminationGracePeriodSeconds(undefined), 30);
    assert.equal(podTerminationGracePeriodSeconds({ spec: { containers: [] } }), 30);
    assert.equal(podTerminationGracePeriodSeconds({ spec: { containers: [], terminationGracePeriodSeconds: 0 } }), 0);
    assert.equal(podTerminationGracePeriodSeconds({ spec: { containers: [], terminationGracePeriodSeconds: 5 } }), 5);
  });
});
