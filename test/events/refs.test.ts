/**
 * The one builder of event references for a pod and its containers (src/events/refs.ts): what
 * sync, probes, OOM kills, eviction and the active deadline all name.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { PodIdentityError } from '../../src/errors.js';
import { containerEventRef, podEventRef } from '../../src/events/refs.js';

const pod: Pod = {
  metadata: { name: 'web', namespace: 'ns', uid: 'u-1' },
  spec: {
    initContainers: [{ name: 'setup' }, { name: 'proxy', restartPolicy: 'Always' }],
    containers: [{ name: 'app' }],
    ephemeralContainers: [{ name: 'debug' }],
  },
};

describe('event references (upstream ref.GetReference, GenerateContainerRef)', () => {
  it('the pod: kind, apiVersion, namespace, name and UID', () => {
    assert.deepEqual(podEventRef(pod), { kind: 'Pod', apiVersion: 'v1', name: 'web', namespace: 'ns', uid: 'u-1' });
  });
  it('a container: the field path of the list it is in (init containers and sidecars, ephemeral, regular)', () => {
    assert.equal(containerEventRef(pod, 'app').fieldPath, 'spec.containers{app}');
    assert.equal(containerEventRef(pod, 'setup').fieldPath, 'spec.initContainers{setup}');
    assert.equal(containerEventRef(pod, 'proxy').fieldPath, 'spec.initContainers{proxy}');
    assert.equal(containerEventRef(pod, 'debug').fieldPath, 'spec.ephemeralContainers{debug}');
    assert.deepEqual(
      { ...containerEventRef(pod, 'app'), fieldPath: undefined },
      { ...podEventRef(pod), fieldPath: undefined },
    );
  });
  it('a pod without a UID is a bug, named', () => {
    const noUid: Pod = { metadata: { name: 'web', namespace: 'ns' } };
    assert.throws(
      () => podEventRef(noUid),
      (e: unknown) => e instanceof PodIdentityError && e.field === 'metadata.uid' && /ns\/web/.test(e.message),
    );
  });
});
