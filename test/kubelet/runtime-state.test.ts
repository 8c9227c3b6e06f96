// The syncLoop's gate (upstream runtimeState.runtimeErrors): a runtime that is not ready, or a PLEG
// that is not healthy (upstream's health checks, "pleg has yet to be successful" until its first
// relist), stops pod syncs.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { RuntimeState } from '../../src/kubelet/runtime-state.js';
import type { PodLifecycleEventGenerator } from '../../src/pleg/types.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';

function state(pleg: { ok: boolean; message?: string }, ready = true) {
  const rt = new FakeRuntime();
  rt.ready = async () => ({ ready, ...(ready ? {} : { reason: 'NetworkReady=false' }) });
  const fakePleg = { healthy: () => pleg } as unknown as PodLifecycleEventGenerator;
  return new RuntimeState(rt, fakePleg);
}

const ROWS: Array<[name: string, pleg: { ok: boolean; message?: string }, ready: boolean, error: RegExp | undefined]> =
  [
    ['runtime ready, PLEG healthy: no error', { ok: true }, true, undefined],
    [
      'PLEG before its first relist',
      { ok: false, message: 'pleg has yet to be successful' },
      true,
      /^PLEG is not healthy: pleg has yet to be successful$/,
    ],
    [
      'PLEG stale',
      { ok: false, message: 'pleg was last seen active 200s ago; threshold is 180s' },
      true,
      /^PLEG is not healthy: pleg was last seen active/,
    ],
    [
      'runtime not ready comes first',
      { ok: false, message: 'x' },
      false,
      /container runtime is not ready: NetworkReady=false/,
    ],
  ];

for (const [name, pleg, ready, error] of ROWS) {
  it(name, async () => {
    const s = state(pleg, ready);
    await s.update();
    const err = s.runtimeErrors();
    if (!error) assert.equal(err, undefined);
    else {
      assert.match(err?.message ?? '', error);
      assert.equal(err?.code, 'KTS_ERR_RUNTIME_NOT_READY');
    }
  });
}
