// maxOptFor (src/cmd/optimizing-tiers.ts): the agent drops V8's optimizing tiers only when every
// hot path is native, and never over an operator's own --max-opt.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { maxOptFor } from '../../src/cmd/optimizing-tiers.js';

test('maxOptFor: baseline tier only when every hot path is native and the operator set none', () => {
  const cases: Array<[string, Array<'native' | 'ts'>, string[], string, number | undefined]> = [
    ['all native', ['native', 'native', 'native'], [], '', 1],
    ['one TypeScript twin keeps every tier', ['native', 'ts', 'native'], [], '', undefined],
    ['all twins (KUBELET_TS_NATIVE=0)', ['ts', 'ts'], [], '', undefined],
    ['no hot paths known', [], [], '', undefined],
    ['--max-opt on the command line wins', ['native'], ['--max-opt=3'], '', undefined],
    ['--max_opt spelled with an underscore', ['native'], ['--max_opt=2'], '', undefined],
    ['--max-opt in NODE_OPTIONS wins', ['native'], [], '--enable-source-maps --max-opt=0', undefined],
    ['other flags do not count', ['native'], ['--max-old-space-size=100'], '--max-optx', 1],
  ];
  for (const [name, impls, execArgv, nodeOptions, want] of cases)
    assert.equal(maxOptFor(impls, execArgv, nodeOptions), want, name);
});
