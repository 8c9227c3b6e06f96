import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EnvError } from '../../src/fieldpath/index.js';
import { expandCommandAndArgs, makeEnvironmentVariables } from '../../src/kuberuntime/env.js';
import { container, makePod } from './helpers.js';
import { configMapPayload, projectedPayload, secretPayload } from '../../src/volume/api-volumes.js';
import type { PodObjectSource } from '../../src/volume/types.js';

const ctx = { nodeName: 'node-1', hostIP: '192.168.1.10', podIP: '10.0.0.7', podIPs: ['10.0.0.7'] };

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
      env: [
        'metadata.name',
        'metadata.namespace',
        'metadata.uid',
        'spec.nodeName',
        'status.podIP',
        'status.hostIP',
        "metadata.labels['app']",
      ].map(ref),
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

  it('status.hostIPs and status.podIPs join both families (upstream podFieldSelectorRuntimeValue)', () => {
    const ref = (fieldPath: string) => ({ name: fieldPath, valueFrom: { fieldRef: { fieldPath } } });
    const c = container('a', { env: ['status.hostIP', 'status.hostIPs', 'status.podIPs'].map(ref) });
    const dual = { ...ctx, hostIPs: ['192.168.1.10', 'fd00::10'], podIPs: ['10.0.0.7', 'fd10::7'] };
    const got = Object.fromEntries(makeEnvironmentVariables(makePod(), c, dual).map((e) => [e.key, e.value]));
    assert.deepEqual(got, {
      'status.hostIP': '192.168.1.10',
      'status.hostIPs': '192.168.1.10,fd00::10',
      'status.podIPs': '10.0.0.7,fd10::7',
    });
  });

  it('rejects what it cannot resolve with a clear EnvError', () => {
    const pod = makePod();
    assert.throws(
      () =>
        makeEnvironmentVariables(
          pod,
          container('a', { env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }),
          ctx,
        ),
      (e: unknown) => e instanceof EnvError && /env X: secret references need API server mode/.test(e.message),
    );
    assert.throws(
      () =>
        makeEnvironmentVariables(
          pod,
          container('a', { env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }] }),
          ctx,
        ),
      /fieldRef spec\.bogus: unsupported field path/,
    );
    assert.throws(
      () => makeEnvironmentVariables(pod, container('a', { envFrom: [{ configMapRef: { name: 'x' } }] }), ctx),
      /envFrom/,
    );
  });
});

describe('expandCommandAndArgs', () => {
  it('expands against the final environment', () => {
    const c = container('a', { command: ['sh', '-c', 'echo $(MSG)'], args: ['$(MSG)', '$$(MSG)', '$(NOPE)'] });
    assert.deepEqual(expandCommandAndArgs(c, [{ key: 'MSG', value: 'hi' }]), {
      command: ['sh', '-c', 'echo hi'],
      args: ['hi', '$(MSG)', '$(NOPE)'],
    });
  });
});

describe('configMap/secret env and volumes (API server mode objects)', () => {
  const objects: PodObjectSource = {
    configMap: (_ns, name) =>
      name === 'cfg' ? { data: { greeting: 'hi', 'bad name': 'x' } } : name === 'pending' ? undefined : null,
    secret: (_ns, name) => (name === 'sec' ? { data: { password: Buffer.from('pw').toString('base64') } } : null),
    serviceAccountToken: () => 'tok',
  };
  const octx = { ...ctx, objects };
  const pod = makePod();

  it('valueFrom keyRefs, envFrom with prefix (invalid names skipped), env overriding envFrom', () => {
    const c = container('a', {
      envFrom: [{ configMapRef: { name: 'cfg' }, prefix: 'CM_' }, { secretRef: { name: 'sec' } }],
      env: [
        { name: 'G', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'greeting' } } },
        { name: 'password', value: 'override' },
        { name: 'OPT', valueFrom: { secretKeyRef: { name: 'none', key: 'k', optional: true } } },
      ],
    });
    assert.deepEqual(makeEnvironmentVariables(pod, c, octx), [
      { key: 'CM_greeting', value: 'hi' },
      { key: 'password', value: 'override' },
      { key: 'G', value: 'hi' },
    ]);
  });

  it('missing objects and keys are errors unless optional; unsynced ones say so', () => {
    assert.throws(
      () =>
        makeEnvironmentVariables(
          pod,
          container('a', { env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'nope' } } }] }),
          octx,
        ),
      /key "nope" not found in configMap "cfg"/,
    );
    assert.throws(
      () => makeEnvironmentVariables(pod, container('a', { envFrom: [{ configMapRef: { name: 'gone' } }] }), octx),
      /configMap "gone" not found/,
    );
    assert.throws(
      () => makeEnvironmentVariables(pod, container('a', { envFrom: [{ configMapRef: { name: 'pending' } }] }), octx),
      /not synced yet/,
    );
    assert.deepEqual(
      makeEnvironmentVariables(
        pod,
        container('a', { envFrom: [{ configMapRef: { name: 'gone', optional: true } }] }),
        octx,
      ),
      [],
    );
  });

  it('volume payloads: items with modes, defaultMode, optional, projected sources', () => {
    const pc = { ...octx, pod, allocatable: { cpu: 1000, memory: 1 << 30, ephemeralStorage: 0 } };
    const cm = configMapPayload(pc, {
      name: 'cfg',
      items: [{ key: 'greeting', path: 'dir/g', mode: 0o600 }],
      defaultMode: 0o640,
    });
    assert.deepEqual([...cm], [['dir/g', { data: 'hi', mode: 0o600 }]]);
    assert.deepEqual([...configMapPayload(pc, { name: 'cfg', defaultMode: 0o640 }).keys()], ['greeting', 'bad name']);
    assert.throws(() => configMapPayload(pc, { name: 'cfg', items: [{ key: 'zz', path: 'z' }] }), /key "zz" not found/);
    assert.throws(
      () => configMapPayload(pc, { name: 'cfg', items: [{ key: 'greeting', path: '../x' }] }),
      /items\[0\]\.path: "\.\.\/x" must not contain '\.\.'/,
    );
    assert.equal(configMapPayload(pc, { name: 'gone', optional: true }).size, 0);
    assert.deepEqual(
      [...secretPayload(pc, { secretName: 'sec' })],
      [['password', { data: Buffer.from('pw'), mode: 0o644 }]],
    );
    const proj = projectedPayload(pc, {
      defaultMode: 0o600,
      sources: [{ secret: { name: 'sec' } }, { serviceAccountToken: { path: 'token' } }],
    });
    assert.deepEqual(
      [...proj],
      [
        ['password', { data: Buffer.from('pw'), mode: 0o600 }],
        ['token', { data: 'tok', mode: 0o600 }],
      ],
    );
  });

  it('secret values and configMap binaryData are bytes, written as they are', () => {
    const raw = Buffer.from([0xff, 0x00, 0x80, 0xc3, 0x28]);
    const bin: PodObjectSource = {
      ...objects,
      configMap: () => ({ data: { text: 'é' }, binaryData: { blob: raw.toString('base64') } }),
      secret: () => ({ data: { der: raw.toString('base64') } }),
    };
    const bpc = { ...ctx, objects: bin, pod };
    assert.deepEqual(secretPayload(bpc, { secretName: 'x' }).get('der')!.data, raw);
    const cm = configMapPayload(bpc, { name: 'x' });
    assert.deepEqual(cm.get('blob')!.data, raw);
    assert.equal(cm.get('text')!.data, 'é');
  });
});
