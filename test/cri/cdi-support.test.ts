/**
 * The runtime's CDI support from Status(verbose) (src/cri/cdi.ts). Ours: upstream has no such
 * check (it passes CDI names on and a runtime without CDI drops them; docs/differences.md). The
 * `config` JSON shapes are containerd's: 1.6 has no CDI keys, 1.7 `enableCDI` false by default,
 * 2.x true by default, both with `cdiSpecDirs`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cdiRefusal,
  cdiSupportFromStatusInfo,
  CdiSupportCache,
  RemoteRuntimeService,
  type CdiSupport,
} from '../../src/cri/index.js';
import { startFakeCriServer } from './fake-cri-server.js';

const config = (c: object) => ({ config: JSON.stringify(c), golang: 'go1.22' });

test('CDI support from the verbose Status info: containerd 1.6, 1.7, 2.x and what no runtime should send', () => {
  const cases: Array<[string, Record<string, string> | undefined, CdiSupport]> = [
    ['no info (not verbose, or another runtime)', undefined, { enabled: false, specDirs: [] }],
    [
      '1.6: a config without the CDI keys',
      config({ containerd: { snapshotter: 'overlayfs' } }),
      { enabled: false, specDirs: [] },
    ],
    [
      '1.7 default: enableCDI false',
      config({ enableCDI: false, cdiSpecDirs: ['/etc/cdi', '/var/run/cdi'] }),
      { enabled: false, specDirs: [] },
    ],
    [
      '1.7 with enable_cdi = true, our spec dir',
      config({ enableCDI: true, cdiSpecDirs: ['/state/cdi'] }),
      { enabled: true, specDirs: ['/state/cdi'] },
    ],
    [
      '2.x default',
      config({ enableCDI: true, cdiSpecDirs: ['/etc/cdi', '/var/run/cdi'] }),
      {
        enabled: true,
        specDirs: ['/etc/cdi', '/var/run/cdi'],
      },
    ],
    ['enableCDI a string, not true', config({ enableCDI: 'true' }), { enabled: false, specDirs: [] }],
    [
      'spec dirs not strings are dropped',
      config({ enableCDI: true, cdiSpecDirs: ['/a', 7, null] }),
      {
        enabled: true,
        specDirs: ['/a'],
      },
    ],
    ['config not JSON', { config: '{enableCDI: true' }, { enabled: false, specDirs: [] }],
    ['config JSON null', { config: 'null' }, { enabled: false, specDirs: [] }],
  ];
  for (const [name, info, want] of cases) assert.deepEqual(cdiSupportFromStatusInfo(info), want, name);
});

test('the client asks Status with verbose set, once, and keeps the answer', async (t) => {
  const srv = await startFakeCriServer();
  t.after(() => srv.close());
  srv.handlers.Status = (req) => ({
    status: { conditions: [] },
    info: req.verbose ? config({ enableCDI: true, cdiSpecDirs: ['/x'] }) : {},
  });
  const runtime = new RemoteRuntimeService(srv.endpoint);
  t.after(() => runtime.close());
  assert.equal(await runtime.cdiSupported(), true);
  assert.deepEqual(await runtime.cdiSupport(), { enabled: true, specDirs: ['/x'] });
  assert.equal(await runtime.withSignal(new AbortController().signal).cdiSupported(), true, 'views share it');
  const asked = srv.requests.filter((r) => r.method === 'Status');
  assert.equal(asked.length, 1);
  assert.equal(asked[0]!.request.verbose, true);
});

test('the cache: kept for its TTL, asked again after it, a failure not kept', async () => {
  let now = 0;
  let calls = 0;
  let fail = true;
  const cache = new CdiSupportCache(
    async () => {
      calls++;
      if (fail) throw new Error('runtime down');
      return config({ enableCDI: calls > 2 });
    },
    1000,
    () => now,
  );
  await assert.rejects(cache.get(), /runtime down/);
  fail = false;
  assert.equal((await cache.get()).enabled, false, 'the failure was not kept: asked again');
  now = 999;
  assert.equal((await cache.get()).enabled, false);
  assert.equal(calls, 2);
  now = 2000;
  assert.equal((await cache.get()).enabled, true, 'asked again after the TTL (the runtime was reconfigured)');
  assert.equal(calls, 3);
});

test('cdiRefusal: nothing to refuse without CDI names or with CDI; the refusal names the devices', async () => {
  const yes = { cdiSupported: async () => true };
  const no = { cdiSupported: async () => false };
  assert.equal(await cdiRefusal(no, []), undefined);
  assert.equal(await cdiRefusal(yes, ['kubelet-ts.test/dev=d0']), undefined);
  const msg = await cdiRefusal(no, ['kubelet-ts.test/dev=d0', 'vendor.com/gpu=1']);
  assert.match(msg ?? '', /CDI devices kubelet-ts\.test\/dev=d0, vendor\.com\/gpu=1/);
  assert.match(msg ?? '', /does not apply CDI devices/);
  assert.match(msg ?? '', /enable_cdi = true/);
  assert.ok(await cdiRefusal({}, ['a.b/c=d']), 'a runtime that cannot say counts as one without CDI');
});
