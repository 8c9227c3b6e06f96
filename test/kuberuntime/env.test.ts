import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EnvError, expand, expandCommandAndArgs, makeEnvironmentVariables, mappingFor } from '../../src/kuberuntime/env.js';
import { container, makePod } from './helpers.js';

const ctx = { nodeName: 'node-1', hostIP: '192.168.1.10', podIP: '10.0.0.7', podIPs: ['10.0.0.7'] };

describe('expand (upstream expansion semantics)', () => {
  const m = mappingFor(new Map([['VAR_A', 'A'], ['VAR_B', 'B'], ['EMPTY', '']]));
  const table: [string, string][] = [
    ['$(VAR_A)', 'A'],
    ['___$(VAR_B)___', '___B___'],
    ['$(VAR_A)-$(VAR_B)', 'A-B'],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['$$(VAR_A)', '$(VAR_A)'],
    ['$$$(VAR_A)', '$A'],
    ['$(EMPTY)x', 'x'],
    ['$(VAR_A', '$(VAR_A'],
    ['$VAR_A', '$VAR_A'],
    ['foo$', 'foo$'],
    ['$', '$'],
    ['$()', '$()'],
    ['no vars', 'no vars'],
    ['$(VAR_A)$(VAR_A)', 'AA'],
  ];
  for (const [input, want] of table) it(`${JSON.stringify(input)} → ${JSON.stringify(want)}`, () => assert.equal(expand(input, m), want));
});

describe('makeEnvironmentVariables', () => {
  it('expands in order, each value seeing only earlier ones; later duplicates override', () => {
    const c = container('a', {
      env: [
        { name: 'A', value: 'a' },
        { name: 'B', value: '$(A)-$(C)' },
        { name: 'C', value: 'c' },
        { name: 'A', value: 'again-$(A)' },
      ],
    });
    assert.deepEqual(makeEnvironmentVariables(makePod(), c, ctx), [
      { key: 'A', value: 'again-a' },
      { key: 'B', value: 'a-$(C)' },
      { key: 'C', value: 'c' },
    ]);
  });

  it('resolves the downward API field refs', () => {
    const pod = makePod();
    const ref = (fieldPath: string) => ({ name: fieldPath, valueFrom: { fieldRef: { fieldPath } } });
    const c = container('a', {
      env: ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'status.podIP', 'status.hostIP', "metadata.labels['app']"].map(ref),
    });
    const got = Object.fromEntries(makeEnvironmentVariables(pod, c, ctx).map((e) => [e.key, e.value]));
    assert.deepEqual(got, {
      'metadata.name': 'web',
      'metadata.namespace': 'default',
      'metadata.uid': 'uid-1234',
      'spec.nodeName': 'node-1',
      'status.podIP': '10.0.0.7',
      'status.hostIP': '192.168.1.10',
      "metadata.labels['app']": 'web',
    });
  });

  it('rejects what it cannot resolve with a clear EnvError', () => {
    const pod = makePod();
    assert.throws(() => makeEnvironmentVariables(pod, container('a', { env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }), ctx), (e: unknown) => e instanceof EnvError && /env X: secretKeyRef is not supported/.test(e.message));
    assert.throws(() => makeEnvironmentVariables(pod, container('a', { env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }] }), ctx), /fieldRef spec\.bogus: unsupported field path/);
    assert.throws(() => makeEnvironmentVariables(pod, container('a', { envFrom: [{ configMapRef: { name: 'x' } }] }), ctx), /envFrom/);
  });
});

describe('expandCommandAndArgs', () => {
  it('expands against the final environment', () => {
    const c = container('a', { command: ['sh', '-c', 'echo $(MSG)'], args: ['$(MSG)', '$$(MSG)', '$(NOPE)'] });
    assert.deepEqual(expandCommandAndArgs(c, [{ key: 'MSG', value: 'hi' }]), { command: ['sh', '-c', 'echo hi'], args: ['hi', '$(MSG)', '$(NOPE)'] });
  });
});
