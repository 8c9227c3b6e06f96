// Attacks on the Service env vars from a hostile apiserver (src/kuberuntime/service-env.ts,
// src/apimode/service-cache.ts): names and ports that would add or rename a variable ('=', a
// newline), out-of-range ports, garbage objects in the LIST and the watch, thousands of Services.
// A malformed Service is dropped with a warning as upstream's ValidateService would have refused
// it; the env stays well-formed and the good Services keep their variables.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiClient, WatchEvent } from '../../src/apiclient/types.js';
import { ServiceCache } from '../../src/apimode/service-cache.js';
import { serviceEnvVarMap, serviceProblem, type Service } from '../../src/kuberuntime/index.js';
import { waitFor } from '../support/kubelet-process.js';

const svc = (name: unknown, ports: unknown[] = [{ port: 80 }], ip: unknown = '10.96.0.9'): Service =>
  ({ metadata: { name, namespace: 'ns' }, spec: { clusterIP: ip, ports } }) as Service;
const GOOD = svc('web', [{ name: 'http', port: 80 }]);

/** [name, hostile Service, the field the problem names]. */
const HOSTILE: Array<[string, unknown, RegExp]> = [
  ['name with =', svc('a=b'), /metadata\.name/],
  ['name with a newline', svc('a\nLD_PRELOAD'), /metadata\.name/],
  ['name with upper case', svc('Web'), /metadata\.name/],
  ['name starting with a digit', svc('1web'), /metadata\.name/],
  ['name not a string', svc(42), /metadata\.name/],
  ['namespace with a newline', { metadata: { name: 'x', namespace: 'ns\nx' }, spec: {} }, /metadata\.namespace/],
  ['port name with =', svc('x', [{ name: 'a=b', port: 80 }]), /spec\.ports\[0\]\.name/],
  ['port name with a newline', svc('x', [{ port: 1 }, { name: 'h\nX', port: 80 }]), /spec\.ports\[1\]\.name/],
  ['port 0', svc('x', [{ port: 0 }]), /spec\.ports\[0\]\.port/],
  ['port 70000', svc('x', [{ port: 70000 }]), /spec\.ports\[0\]\.port/],
  ['port a string with =', svc('x', [{ port: '80\nA=1' }]), /spec\.ports\[0\]\.port/],
  ['protocol with a newline', svc('x', [{ port: 80, protocol: 'TCP\nA=1' }]), /spec\.ports\[0\]\.protocol/],
  ['port not an object', svc('x', [null]), /spec\.ports\[0\]/],
  [
    'ports not a list',
    { metadata: { name: 'x', namespace: 'ns' }, spec: { clusterIP: '10.0.0.1', ports: 'x' } },
    /spec\.ports/,
  ],
  ['clusterIP with a newline', svc('x', [{ port: 80 }], '10.0.0.1\nA=1'), /spec\.clusterIP/],
  ['clusterIP not an IP', svc('x', [{ port: 80 }], 'example.com'), /spec\.clusterIP/],
  ['null', null, /not an object/],
  ['a string', 'garbage', /not an object/],
];

/** The env is well-formed: every name a C identifier-ish word, no value with a newline or NUL. */
function assertWellFormed(env: Map<string, string>): void {
  for (const [k, v] of env) {
    assert.match(k, /^[A-Z_][A-Z0-9_.]*$/, `variable name ${JSON.stringify(k)}`);
    assert.doesNotMatch(v, /[\n\0]/, `value of ${k}`);
  }
}

describe('service env attack: a malformed Service never makes a variable', () => {
  for (const [name, s, field] of HOSTILE) {
    it(name, () => {
      assert.match(serviceProblem(s) ?? '', field);
      const env = serviceEnvVarMap([s as Service, GOOD], 'ns', true);
      assertWellFormed(env);
      assert.equal(env.get('WEB_SERVICE_PORT_HTTP'), '80', 'the good Service keeps its variables');
      assert.equal([...env.keys()].filter((k) => !k.startsWith('WEB_')).length, 0);
    });
  }

  it('valid Services (IPv6, headless, named ports, UDP) have no problem', () => {
    for (const s of [GOOD, svc('dns', [{ port: 53, protocol: 'UDP' }], 'fd00::a'), svc('h', [], 'None')])
      assert.equal(serviceProblem(s), undefined);
  });

  it('a Service with 10 000 ports: 5 variables a port, all well-formed (the apiserver allows it)', () => {
    const ports = Array.from({ length: 10_000 }, (_, i) => ({ port: i + 1 }));
    const env = serviceEnvVarMap([svc('big', ports)], 'ns', true);
    assertWellFormed(env);
    assert.equal(env.size, 2 + 1 + 4 * 10_000);
  });
});

/** An ApiClient that answers one LIST with `items` and one watch with `events`, then stays quiet. */
function fakeClient(items: unknown[], events: Array<WatchEvent<unknown>>): ApiClient {
  return {
    request: async () => ({ items, metadata: { resourceVersion: '1' } }),
    watch: async (_p: string, _q: unknown, onEvent: (e: WatchEvent<unknown>) => void, signal: AbortSignal) => {
      for (const e of events) onEvent(e);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    },
  } as unknown as ApiClient;
}

describe('service cache attack: garbage in the LIST and the watch', () => {
  it('drops malformed Services with a warning, keeps the good ones, keeps watching', async () => {
    const hostile = HOSTILE.map(([, s]) => s);
    const later = svc('later');
    const events = [
      ...hostile.map((object) => ({ type: 'ADDED', object })),
      ...hostile.map((object) => ({ type: 'DELETED', object })),
      { type: 'ADDED', object: later },
    ] as Array<WatchEvent<unknown>>;
    const cache = new ServiceCache(fakeClient([...hostile, GOOD], events));
    cache.start();
    try {
      await waitFor('the later Service', 5000, () => (cache.list().length === 2 ? true : undefined), 10);
      assert.equal(cache.hasSynced(), true);
      assert.deepEqual(
        cache
          .list()
          .map((s) => s.metadata?.name)
          .sort(),
        ['later', 'web'],
      );
    } finally {
      cache.stop();
    }
  });

  it('5 000 Services: all held (bounded by the API client LIST limits), env of one namespace only', async () => {
    const items = Array.from({ length: 5000 }, (_, i) => ({
      ...svc(`s${i}`),
      metadata: { name: `s${i}`, namespace: `n${i % 50}` },
    }));
    const cache = new ServiceCache(fakeClient(items, []));
    cache.start();
    try {
      await waitFor('listed', 5000, () => (cache.hasSynced() ? true : undefined), 10);
      assert.equal(cache.list().length, 5000);
      const env = serviceEnvVarMap(cache.list(), 'n7', true);
      assertWellFormed(env);
      assert.equal(env.size, 100 * 7);
    } finally {
      cache.stop();
    }
  });
});
