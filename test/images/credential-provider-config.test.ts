/**
 * The CredentialProviderConfig file: upstream pkg/credentialprovider/plugin/config_test.go
 * (Test_readCredentialProviderConfig: v1/v1beta1/v1alpha1, JSON and YAML, strict decoding, a
 * directory merged in lexical order with duplicate names refused; Test_validateCredentialProviderConfig:
 * its table), plus our refusal of tokenAttributes naming the field.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readCredentialProviderConfig } from '../../src/images/credentialprovider/config.js';
import { ConfigError } from '../../src/errors.js';
import { testTempDir } from '../support/temp-dir.js';

const dir = testTempDir('kts-credcfg-');
let n = 0;
function file(text: string, ext = 'yaml'): string {
  const p = join(dir, `c${n++}.${ext}`);
  writeFileSync(p, text);
  return p;
}
const PROVIDER = {
  name: 'test',
  matchImages: ['registry.io/foobar'],
  defaultCacheDuration: '10m',
  apiVersion: 'credentialprovider.kubelet.k8s.io/v1',
};
const config = (providers: object[], apiVersion = 'kubelet.config.k8s.io/v1') =>
  file(JSON.stringify({ apiVersion, kind: 'CredentialProviderConfig', providers }), 'json');

function problems(path: string): string {
  try {
    readCredentialProviderConfig(path);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.message;
  }
  return '';
}

test('upstream Test_readCredentialProviderConfig: every config version, JSON and YAML, args and env', () => {
  for (const v of ['kubelet.config.k8s.io/v1', 'kubelet.config.k8s.io/v1beta1', 'kubelet.config.k8s.io/v1alpha1']) {
    const [p] = readCredentialProviderConfig(config([PROVIDER], v));
    assert.deepEqual(p, {
      name: 'test',
      matchImages: ['registry.io/foobar'],
      defaultCacheDurationMs: 600_000,
      apiVersion: 'credentialprovider.kubelet.k8s.io/v1',
      args: [],
      env: [],
    });
  }
  const yaml = file(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: test1
    matchImages: ["registry.io/one", "*.registry.io"]
    defaultCacheDuration: 10m
    apiVersion: credentialprovider.kubelet.k8s.io/v1beta1
    args: [--v=5]
    env:
      - name: FOO
        value: BAR
`);
  const [p] = readCredentialProviderConfig(yaml);
  assert.deepEqual(p!.args, ['--v=5']);
  assert.deepEqual(p!.env, [{ name: 'FOO', value: 'BAR' }]);
});

test('upstream strict decoding and kind/apiVersion checks', () => {
  assert.match(problems(config([{ ...PROVIDER, matchImage: ['x'] }])), /unknown field "matchImage"/);
  assert.match(
    problems(file('{"apiVersion":"kubelet.config.k8s.io/v1","kind":"Other","providers":[]}', 'json')),
    /kind must be CredentialProviderConfig/,
  );
  assert.match(problems(config([PROVIDER], 'kubelet.config.k8s.io/v2')), /apiVersion must be one of/);
  assert.match(problems(file('{ nope', 'json')), /c\d+\.json/);
  assert.match(problems(join(dir, 'missing.yaml')), /unable to access path/);
});

test('a directory: *.json/*.yaml/*.yml in lexical order, merged; a duplicate name is an error', () => {
  const d = join(dir, 'd');
  mkdirSync(d);
  const write = (name: string, providers: object[]) =>
    writeFileSync(
      join(d, name),
      JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1', kind: 'CredentialProviderConfig', providers }),
    );
  write('b.yaml', [{ ...PROVIDER, name: 'second' }]);
  write('a.json', [{ ...PROVIDER, name: 'first' }]);
  write('c.txt', [{ ...PROVIDER, name: 'ignored' }]);
  assert.deepEqual(
    readCredentialProviderConfig(d).map((p) => p.name),
    ['first', 'second'],
  );
  write('c.yml', [{ ...PROVIDER, name: 'first' }]);
  assert.match(problems(d), /Duplicate value "first"/);
  const empty = join(dir, 'empty');
  mkdirSync(empty);
  assert.match(problems(empty), /no configuration files found/);
});

test('upstream Test_validateCredentialProviderConfig', () => {
  const cases: Array<[string, object[], RegExp]> = [
    ['no providers', [], /at least 1 item in plugins is required/],
    ['name contains /', [{ ...PROVIDER, name: 'foo/../bar' }], /provider name cannot contain '\/'/],
    ['name is .', [{ ...PROVIDER, name: '.' }], /provider name cannot be '\.'/],
    ['name is ..', [{ ...PROVIDER, name: '..' }], /provider name cannot be '\.\.'/],
    ['name contains spaces', [{ ...PROVIDER, name: 'foo bar' }], /cannot contain spaces/],
    ['duplicate names', [PROVIDER, PROVIDER], /Duplicate value "test"/],
    ['no apiVersion', [{ ...PROVIDER, apiVersion: undefined }], /apiVersion: Required value/],
    [
      'invalid apiVersion',
      [{ ...PROVIDER, apiVersion: 'credentialprovider.kubelet.k8s.io/v1alpha0' }],
      /Unsupported value/,
    ],
    ['no matchImages', [{ ...PROVIDER, matchImages: [] }], /at least 1 item in matchImages is required/],
    ['invalid match image', [{ ...PROVIDER, matchImages: ['%invalid%:port'] }], /match image is invalid/],
    ['negative default cache duration', [{ ...PROVIDER, defaultCacheDuration: '-1m' }], /greater than or equal to 0/],
    [
      'no default cache duration',
      [{ ...PROVIDER, defaultCacheDuration: undefined }],
      /defaultCacheDuration: Required value/,
    ],
    [
      'tokenAttributes (not implemented): refused naming the field',
      [
        {
          ...PROVIDER,
          tokenAttributes: { serviceAccountTokenAudience: 'aud', requireServiceAccount: true, cacheType: 'Token' },
        },
      ],
      /providers\[0\]\.tokenAttributes: not supported by kubelet-ts/,
    ],
  ];
  for (const [name, providers, want] of cases) {
    const msg = problems(config(providers));
    assert.match(msg, want, name);
    assert.match(msg, /^(\d+ problems:\n {2}- )?--image-credential-provider-config: /, name);
  }
  // All problems at once.
  assert.match(problems(config([{ name: 'a/b', matchImages: [] }])), /problems:/);
});
