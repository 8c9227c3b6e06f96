/**
 * Credential provider plugins: upstream pkg/credentialprovider/plugin/plugin_test.go cases
 * (Test_Provide, Test_ProvideParallel, Test_getCachedCredentials, Test_decodeResponse,
 * Test_RegistryCacheKeyType / Test_ImageCacheKeyType / Test_GlobalCacheKeyType,
 * Test_NoCacheResponse, Test_ExecPluginEnvVars) on a fake exec, and the real exec of a script.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { metrics } from '../../src/metrics/index.js';
import {
  ExternalCredentialProviderKeyring,
  PluginProvider,
  decodeResponse,
  execPlugin,
  registerCredentialProviderPlugins,
  type CredentialProviderResponse,
} from '../../src/images/credentialprovider/plugin.js';
import type { CredentialProvider } from '../../src/images/credentialprovider/config.js';
import { ConfigError } from '../../src/errors.js';
import { ManualClock } from '../fakes/manual-clock.js';
import { testTempDir } from '../support/temp-dir.js';

const V1 = 'credentialprovider.kubelet.k8s.io/v1';
const provider = (matchImages: string[], defaultCacheDurationMs = 0): CredentialProvider => ({
  name: 'p',
  matchImages,
  defaultCacheDurationMs,
  apiVersion: V1,
  args: [],
  env: [],
});
const user = { username: 'user', password: 'password' };

function fake(resp: Omit<CredentialProviderResponse, 'auth'> & { auth?: CredentialProviderResponse['auth'] }) {
  const calls: string[] = [];
  const exec = async (image: string) => {
    calls.push(image);
    return { auth: {}, ...resp };
  };
  return { calls, exec };
}

test('upstream Test_Provide: matchImages globs, and the plugin auth returned as is', async () => {
  const cases: Array<[string, string[], 'Image' | 'Registry' | 'Global', string, string]> = [
    [
      'exact image match, Registry key',
      ['test.registry.io'],
      'Registry',
      'test.registry.io/foo/bar',
      'test.registry.io',
    ],
    [
      'exact image match, Image key',
      ['test.registry.io/foo/bar'],
      'Image',
      'test.registry.io/foo/bar',
      'test.registry.io/foo/bar',
    ],
    ['exact image match, Global key', ['test.registry.io'], 'Global', 'test.registry.io', 'test.registry.io'],
    ['wild card, Registry key', ['*.registry.io:8080'], 'Registry', 'test.registry.io:8080/foo', '*.registry.io:8080'],
    ['wild card, Image key', ['*.*.registry.io'], 'Image', 'foo.bar.registry.io/foo/bar', '*.*.registry.io'],
    ['wild card, Global key', ['*.registry.io'], 'Global', 'test.registry.io', '*.registry.io'],
  ];
  for (const [name, matchImages, cacheKeyType, image, key] of cases) {
    const { exec } = fake({ cacheKeyType, auth: { [key]: user } });
    const p = new PluginProvider(provider(matchImages), exec, new ManualClock());
    assert.deepEqual(await p.provide(image), { [key]: user }, name);
  }
  const { calls, exec } = fake({ cacheKeyType: 'Image', auth: { x: user } });
  const p = new PluginProvider(provider(['test.registry.io']), exec);
  assert.deepEqual(await p.provide('other.registry.io/foo'), {}, 'no matchImages match: no exec');
  assert.deepEqual(calls, []);
});

test('upstream Test_{Image,Registry,Global}CacheKeyType and Test_NoCacheResponse: what a second lookup execs', async () => {
  const cases: Array<[string, 'Image' | 'Registry' | 'Global', number | undefined, string, number]> = [
    ['Image key: same image cached', 'Image', 60_000, 'r.io/a', 1],
    ['Image key: another image execs', 'Image', 60_000, 'r.io/b', 2],
    ['Registry key: another image of the registry cached', 'Registry', 60_000, 'r.io/b', 1],
    ['Registry key: another registry execs', 'Registry', 60_000, 's.io/b', 2],
    ['Global key: anything cached', 'Global', 60_000, 's.io/b', 1],
    ['cacheDuration 0: never cached', 'Global', 0, 'r.io/a', 2],
    ['no cacheDuration, defaultCacheDuration 0: not cached', 'Global', undefined, 'r.io/a', 2],
  ];
  for (const [name, cacheKeyType, cacheDurationMs, second, want] of cases) {
    const { calls, exec } = fake({ cacheKeyType, cacheDurationMs, auth: { '*.io': user } });
    const p = new PluginProvider(provider(['*.io']), exec, new ManualClock());
    await p.provide('r.io/a');
    await p.provide(second);
    assert.equal(calls.length, want, name);
  }
  // Absent cacheDuration: the provider's defaultCacheDuration.
  const clock = new ManualClock();
  const { calls, exec } = fake({ cacheKeyType: 'Image', auth: {} });
  const p = new PluginProvider(provider(['r.io'], 30_000), exec, clock);
  await p.provide('r.io/a');
  clock.t += 30_000;
  await p.provide('r.io/a');
  assert.equal(calls.length, 1, 'cached until defaultCacheDuration has passed');
  clock.t += 1;
  await p.provide('r.io/a');
  assert.equal(calls.length, 2, 'expired');
});

test('upstream Test_ProvideParallel: concurrent lookups of one image share one exec', async () => {
  let release!: () => void;
  let execs = 0;
  const exec = async (): Promise<CredentialProviderResponse> => {
    execs++;
    await new Promise<void>((r) => (release = r));
    return { cacheKeyType: 'Registry', cacheDurationMs: 60_000, auth: { 'test.registry.io': user } };
  };
  const p = new PluginProvider(provider(['test.registry.io']), exec);
  const all = Promise.all([1, 2, 3, 4, 5].map(() => p.provide('test.registry.io/x')));
  await new Promise((r) => setImmediate(r));
  release();
  for (const r of await all) assert.deepEqual(r, { 'test.registry.io': user });
  assert.equal(execs, 1);
});

test('upstream Test_getCachedCredentials: expired entries are not returned; the 15-minute purge drops them', async () => {
  const clock = new ManualClock();
  const { calls, exec } = fake({ cacheKeyType: 'Image', cacheDurationMs: 60_000, auth: { 'r.io': user } });
  const p = new PluginProvider(provider(['r.io']), exec, clock);
  await p.provide('r.io/image1');
  clock.t += 1000;
  await p.provide('r.io/image1');
  assert.equal(calls.length, 1, 'not expired: from the cache');
  clock.t += 2 * 60_000;
  await p.provide('r.io/image1');
  assert.equal(calls.length, 2, 'expired: exec again');
  const failing = new PluginProvider(provider(['r.io']), () => Promise.reject(new Error('boom')), clock);
  assert.deepEqual(await failing.provide('r.io/a'), {}, 'a failing plugin gives no credentials');
});

test('upstream Test_decodeResponse: versions, kind, cacheKeyType, durations', () => {
  const r = (o: object) => JSON.stringify({ kind: 'CredentialProviderResponse', apiVersion: V1, ...o });
  assert.deepEqual(
    decodeResponse(r({ cacheKeyType: 'Registry', cacheDuration: '1m', auth: { '*.registry.io': user } }), V1),
    {
      cacheKeyType: 'Registry',
      cacheDurationMs: 60_000,
      auth: { '*.registry.io': user },
    },
  );
  const beta = 'credentialprovider.kubelet.k8s.io/v1beta1';
  assert.equal(decodeResponse(r({ apiVersion: beta, cacheKeyType: 'Image' }), beta).cacheKeyType, 'Image');
  assert.throws(() => decodeResponse(r({ cacheKeyType: 'Image' }), beta), /did not match expected apiVersion/);
  assert.throws(() => decodeResponse(r({ kind: 'Other', cacheKeyType: 'Image' }), V1), /Kind/);
  assert.throws(() => decodeResponse(r({ cacheKeyType: 'Bogus' }), V1), /valid cacheKeyType/);
  assert.throws(() => decodeResponse(r({ cacheKeyType: 'Image', cacheDuration: 'soon' }), V1), /cacheDuration/);
  assert.throws(
    () => decodeResponse('password: hunter2', V1),
    (e: Error) => !e.message.includes('hunter2'),
  );
});

test('ExternalCredentialProviderKeyring: every provider, then upstream keyring matching of the returned keys', async () => {
  const a = new PluginProvider(
    provider(['*.io']),
    fake({ cacheKeyType: 'Image', auth: { 'r.io/team': { username: 'a' } } }).exec,
  );
  const b = new PluginProvider(
    provider(['*.io']),
    fake({ cacheKeyType: 'Image', auth: { 'r.io': { username: 'b' } } }).exec,
  );
  const k = new ExternalCredentialProviderKeyring([a, b]);
  assert.deepEqual(
    (await k.lookup('r.io/team/app')).map((c) => c.username),
    ['a', 'b'],
  );
  assert.deepEqual(
    (await k.lookup('r.io/other')).map((c) => c.username),
    ['b'],
  );
});

function writePlugin(dir: string, name: string, body: string): void {
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
}

test('upstream Test_ExecPluginEnvVars and the v1 request on stdin: the real exec of a script', async () => {
  const dir = testTempDir('kts-credplugin-');
  const reqFile = join(dir, 'request.json');
  writePlugin(
    dir,
    'echo-creds',
    `cat > ${reqFile}\nprintf '{"apiVersion":"${V1}","kind":"CredentialProviderResponse","cacheKeyType":"Image","auth":{"r.io":{"username":"%s","password":"%s"}}}' "$USER_FROM_CONFIG" "$1"`,
  );
  const p: CredentialProvider = {
    ...provider(['r.io']),
    name: 'echo-creds',
    args: ['argpass'],
    env: [{ name: 'USER_FROM_CONFIG', value: 'envuser' }],
  };
  const resp = await execPlugin(dir, p)('r.io/app');
  assert.deepEqual(resp.auth, { 'r.io': { username: 'envuser', password: 'argpass' } });
  assert.deepEqual(JSON.parse(readFileSync(reqFile, 'utf8')), {
    apiVersion: V1,
    kind: 'CredentialProviderRequest',
    image: 'r.io/app',
  });
  writePlugin(dir, 'fails', 'echo oops >&2; exit 3');
  await assert.rejects(execPlugin(dir, { ...p, name: 'fails' })('r.io/app'), /exit status 3: oops/);
  writePlugin(dir, 'hangs', 'exec sleep 30');
  await assert.rejects(execPlugin(dir, { ...p, name: 'hangs' }, 200)('r.io/app'), /timed out after 200ms/);
});

test('upstream RegisterCredentialProviderPlugins: bin dir and executables are checked at start-up', () => {
  const dir = testTempDir('kts-credplugin-reg-');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const cfg = join(dir, 'config.yaml');
  writeFileSync(
    cfg,
    `apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: mine\n  matchImages: ["r.io"]\n  defaultCacheDuration: 1m\n  apiVersion: ${V1}\n`,
  );
  assert.throws(
    () => registerCredentialProviderPlugins(cfg, undefined),
    /--image-credential-provider-bin-dir is required/,
  );
  assert.throws(() => registerCredentialProviderPlugins(cfg, join(dir, 'nope')), /did not exist/);
  assert.throws(
    () => registerCredentialProviderPlugins(cfg, bin),
    (e: unknown) => e instanceof ConfigError && /plugin binary executable .*mine did not exist/.test(e.message),
  );
  writePlugin(bin, 'mine', 'exit 0');
  assert.equal(registerCredentialProviderPlugins(cfg, bin).length, 1);
});

// upstream pkg/credentialprovider/plugin/metrics_test.go (TestKubeletCredentialProviderPluginErrors,
// TestKubeletCredentialProviderPluginDuration, TestKubeletCredentialProviderConfigInfo) and the
// config hash of readCredentialProviderConfig: length-prefixed file bytes, `sha256:<hex>`.
test('credential provider metrics: config hash, per-plugin duration and errors', async () => {
  const dir = testTempDir('kts-credplugin-metrics-');
  const cfg = join(dir, 'config.yaml');
  const text = `apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: m1\n  matchImages: ["r.io"]\n  defaultCacheDuration: 1m\n  apiVersion: ${V1}\n`;
  writeFileSync(cfg, text);
  writePlugin(dir, 'm1', 'exit 0');
  registerCredentialProviderPlugins(cfg, dir);
  const len = Buffer.alloc(8);
  len.writeBigUInt64BE(BigInt(Buffer.byteLength(text)));
  const want = `sha256:${createHash('sha256').update(len).update(text).digest('hex')}`;
  const info = await metrics.credentialProviderConfigInfo.get();
  assert.deepEqual(
    info.values.map((v) => [v.labels.hash, v.value]),
    [[want, 1]],
  );
  writePlugin(dir, 'm2', 'exit 4');
  const p = { ...provider(['r.io']), name: 'm2' };
  await assert.rejects(execPlugin(dir, p)('r.io/app'), /exit status 4/);
  const errors = await metrics.credentialProviderPluginErrors.get();
  assert.equal(errors.values.find((v) => v.labels.plugin_name === 'm2')?.value, 1);
  const duration = await metrics.credentialProviderPluginDuration.get();
  const count = duration.values.find((v) => v.metricName?.endsWith('_count') && v.labels.plugin_name === 'm2');
  assert.equal(count?.value, 1);
});
