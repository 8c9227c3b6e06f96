// The syncLoop's gate (upstream runtimeState.runtimeErrors): a runtime that is not ready, or a PLEG
// that is not healthy (upstream's health checks, "pleg has yet to be successful" until its first
// relist), stops pod syncs. NetworkReady is a separate gate (upstream networkErrors, set by
// updateRuntimeUp) that never stops the syncLoop; Kubelet.syncPod applies it to pod-network pods.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { RuntimeState } from '../../src/kubelet/runtime-state.js';
import type { RuntimeCondition } from '../../src/cri/types.js';
import type { PodLifecycleEventGenerator } from '../../src/pleg/types.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';

const OK_PLEG = { ok: true };
const RUNTIME_OK: RuntimeCondition = { type: 'RuntimeReady', status: true, reason: '', message: '' };
const NETWORK_OK: RuntimeCondition = { type: 'NetworkReady', status: true, reason: '', message: '' };
/** What containerd reports with an empty CNI conf dir. */
const NO_CNI: RuntimeCondition = {
  type: 'NetworkReady',
  status: false,
  reason: 'NetworkPluginNotReady',
  message: 'Network plugin returns error: cni plugin not initialized',
};

function state(pleg: { ok: boolean; message?: string }, conditions: RuntimeCondition[] | Error) {
  const rt = new FakeRuntime();
  rt.status = async () => {
    if (conditions instanceof Error) throw conditions;
    return { conditions, handlers: [] };
  };
  const fakePleg = { healthy: () => pleg } as unknown as PodLifecycleEventGenerator;
  return new RuntimeState(rt, fakePleg);
}

type Row = {
  name: string;
  pleg?: { ok: boolean; message?: string };
  conditions: RuntimeCondition[] | Error;
  runtime?: RegExp;
  network?: RegExp;
  node: string[];
};

const ROWS: Row[] = [
  { name: 'runtime and network ready, PLEG healthy: no error', conditions: [RUNTIME_OK, NETWORK_OK], node: [] },
  {
    name: 'PLEG before its first relist',
    pleg: { ok: false, message: 'pleg has yet to be successful' },
    conditions: [RUNTIME_OK, NETWORK_OK],
    runtime: /^PLEG is not healthy: pleg has yet to be successful$/,
    node: ['PLEG is not healthy: pleg has yet to be successful'],
  },
  {
    name: 'PLEG stale',
    pleg: { ok: false, message: 'pleg was last seen active 200s ago; threshold is 180s' },
    conditions: [RUNTIME_OK, NETWORK_OK],
    runtime: /^PLEG is not healthy: pleg was last seen active/,
    node: ['PLEG is not healthy: pleg was last seen active 200s ago; threshold is 180s'],
  },
  {
    name: 'runtime not ready comes first',
    pleg: { ok: false, message: 'x' },
    conditions: [{ ...RUNTIME_OK, status: false, reason: 'Boom', message: 'm' }, NETWORK_OK],
    runtime: /^container runtime not ready: RuntimeReady=false reason:Boom message:m$/,
    node: ['container runtime not ready: RuntimeReady=false reason:Boom message:m', 'PLEG is not healthy: x'],
  },
  {
    name: 'RuntimeReady missing: upstream prints <nil>',
    conditions: [NETWORK_OK],
    runtime: /^container runtime not ready: <nil>$/,
    node: ['container runtime not ready: <nil>'],
  },
  {
    // upstream updateRuntimeUp: NetworkReady=false sets networkErrors only; the syncLoop runs.
    name: 'no CNI config: network error only, the syncLoop is not gated',
    conditions: [RUNTIME_OK, NO_CNI],
    network:
      /^container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized$/,
    node: [
      'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
    ],
  },
  {
    name: 'NetworkReady missing',
    conditions: [RUNTIME_OK],
    network: /^container runtime network not ready: <nil>$/,
    node: ['container runtime network not ready: <nil>'],
  },
  {
    name: 'Status call fails: runtime down, network state unchanged (unknown before the first status)',
    conditions: new Error('connection refused'),
    runtime: /^container runtime is down: connection refused$/,
    network: /^network state unknown$/,
    node: ['container runtime is down: connection refused', 'network state unknown'],
  },
];

for (const row of ROWS) {
  it(row.name, async () => {
    const s = state(row.pleg ?? OK_PLEG, row.conditions);
    await s.update();
    for (const [err, want] of [
      [s.runtimeErrors(), row.runtime],
      [s.networkErrors(), row.network],
    ] as const) {
      if (!want) assert.equal(err, undefined);
      else {
        assert.match(err?.message ?? '', want);
        assert.equal(err?.code, 'KTS_ERR_RUNTIME_NOT_READY');
      }
    }
    assert.deepEqual(s.nodeReadyErrors(), row.node);
  });
}

it('network becomes ready at the next status: the error clears', async () => {
  const rt = new FakeRuntime();
  rt.conditions = [RUNTIME_OK, NO_CNI];
  const s = new RuntimeState(rt, { healthy: () => OK_PLEG } as unknown as PodLifecycleEventGenerator);
  await s.update();
  assert.ok(s.networkErrors());
  rt.conditions = [RUNTIME_OK, NETWORK_OK];
  await s.update();
  assert.equal(s.networkErrors(), undefined);
  assert.equal(s.runtimeErrors(), undefined);
});
