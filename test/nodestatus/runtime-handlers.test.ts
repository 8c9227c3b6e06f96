/**
 * status.runtimeHandlers and status.features from the CRI Status reply, as upstream's
 * toKubeRuntimeStatus (pkg/kubelet/kuberuntime/helpers.go) and its RuntimeHandlers and
 * NodeFeatures setters (pkg/kubelet/nodestatus/setters.go): a handler without features supports
 * none; no handlers, no field; no features in the reply (containerd 1.x), no status.features.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runtimeStatusFromWire } from '../../src/cri/convert.js';
import { featuresStatus, runtimeHandlersStatus } from '../../src/nodestatus/node-object.js';

const READY = { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }] };

describe('CRI Status → runtime handlers and features (upstream toKubeRuntimeStatus)', () => {
  it('containerd 1.6/1.7: no handlers, no features', () => {
    const s = runtimeStatusFromWire(READY, { status: READY, runtimeHandlers: [], features: null });
    assert.deepEqual([s.handlers, s.features], [[], undefined]);
  });
  it('containerd 2.x: each handler with its features, and the runtime features', () => {
    const s = runtimeStatusFromWire(READY, {
      runtimeHandlers: [
        { name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: false } },
        { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
        { name: 'bare', features: null },
      ],
      features: { supplementalGroupsPolicy: true },
    });
    assert.deepEqual(s.handlers, [
      { name: '', supportsRecursiveReadOnlyMounts: true, supportsUserNamespaces: false },
      { name: 'runc', supportsRecursiveReadOnlyMounts: true, supportsUserNamespaces: true },
      { name: 'bare', supportsRecursiveReadOnlyMounts: false, supportsUserNamespaces: false },
    ]);
    assert.deepEqual(s.features, { supplementalGroupsPolicy: true });
  });
  it('features present but false stay present (the runtime said no)', () => {
    const s = runtimeStatusFromWire(READY, { features: { supplementalGroupsPolicy: false } });
    assert.deepEqual(s.features, { supplementalGroupsPolicy: false });
  });
});

describe('upstream RuntimeHandlers and NodeFeatures setters', () => {
  it('sets runtime handlers, both features always written', () => {
    assert.deepEqual(
      runtimeHandlersStatus([{ name: 'runc', supportsRecursiveReadOnlyMounts: true, supportsUserNamespaces: false }]),
      { runtimeHandlers: [{ name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: false } }] },
    );
  });
  it('no handlers: no field (Go omits the empty list)', () => assert.deepEqual(runtimeHandlersStatus([]), {}));
  it('sets runtime node features', () =>
    assert.deepEqual(featuresStatus({ supplementalGroupsPolicy: true }), {
      features: { supplementalGroupsPolicy: true },
    }));
  it('leaves features unset when runtime features are not known', () =>
    assert.deepEqual(featuresStatus(undefined), {}));
});
