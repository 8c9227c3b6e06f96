import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, renderConfigz, formatDuration } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { cipherList } from '../../src/server/tls.js';
import { testTempDir } from '../support/temp-dir.js';

const HEAD = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

function load(argv: string[], file?: string) {
  const args = ['--hostname-override=n1', ...argv];
  if (file !== undefined) {
    const p = join(testTempDir('kts-auth-'), 'c.yaml');
    writeFileSync(p, HEAD + file);
    args.push(`--config=${p}`);
  }
  const r = loadConfig(args, {});
  assert.equal(r.kind, 'run');
  return (r as Extract<typeof r, { kind: 'run' }>).config.kubelet;
}

function problems(argv: string[], file: string): string {
  try {
    load(argv, file);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems.join('\n');
  }
  assert.fail('expected a ConfigError');
}

test('main port defaults: 10250, closed (anonymous off, Webhook), upstream cache TTLs', () => {
  const k = load([]);
  assert.equal(k.port, 10250);
  assert.deepEqual(k.authentication, {
    x509: { clientCAFile: '' },
    webhook: { enabled: true, cacheTTLMs: 120_000 },
    anonymous: { enabled: false },
  });
  assert.deepEqual(k.authorization, {
    mode: 'Webhook',
    webhook: { cacheAuthorizedTTLMs: 300_000, cacheUnauthorizedTTLMs: 30_000 },
  });
  assert.equal(k.streamingConnectionIdleTimeoutMs, 4 * 3600_000);
});

test('file objects merge over defaults; flags override single members', () => {
  const k = load(
    [
      '--anonymous-auth=true',
      '--authorization-mode=AlwaysAllow',
      '--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
    ],
    'authentication:\n  x509:\n    clientCAFile: /etc/ca.crt\n  webhook:\n    cacheTTL: 30s\nauthorization:\n  mode: Webhook\n  webhook:\n    cacheAuthorizedTTL: 1m\ntlsMinVersion: VersionTLS13\n',
  );
  assert.deepEqual(k.authentication, {
    x509: { clientCAFile: '/etc/ca.crt' },
    webhook: { enabled: true, cacheTTLMs: 30_000 },
    anonymous: { enabled: true },
  });
  assert.deepEqual(k.authorization, {
    mode: 'AlwaysAllow',
    webhook: { cacheAuthorizedTTLMs: 60_000, cacheUnauthorizedTTLMs: 30_000 },
  });
  assert.equal(k.tlsMinVersion, 'VersionTLS13');
  assert.deepEqual(k.tlsCipherSuites, ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256']);
  assert.equal(load(['--client-ca-file=/x.pem']).authentication.x509.clientCAFile, '/x.pem');
});

test('bad auth and TLS settings are named', () => {
  const all = problems(
    ['--authorization-mode=RBAC', '--anonymous-auth=maybe'],
    'authentication:\n  x509: {clientCAFile: 3}\n  bogus: 1\nauthorization:\n  webhook: {cacheAuthorizedTTL: soon}\ntlsMinVersion: TLS1.2\ntlsCipherSuites: [TLS_FOO]\n',
  );
  assert.match(all, /authentication\.x509\.clientCAFile: must be a string/);
  assert.match(all, /authentication: unknown field "bogus"/);
  assert.match(all, /authorization\.webhook\.cacheAuthorizedTTL: must be a duration/);
  assert.match(all, /tlsMinVersion: must be one of VersionTLS10/);
  assert.match(all, /unsupported cipher suite\(s\) TLS_FOO/);
  assert.match(all, /--authorization-mode: must be one of AlwaysAllow, Webhook/);
  assert.match(all, /--anonymous-auth: must be true or false/);
});

test('configz redacts credentials: staticPodURLHeader values and staticPodURL user information', () => {
  const kc = load([
    '--manifest-url=https://bob:s3cret@pods.example:8443/pods?x=1',
    '--manifest-url-header=Authorization:Bearer tok-123,X-Token:a,X-Token:b',
  ]);
  assert.deepEqual(
    kc.staticPodURLHeader,
    { Authorization: ['Bearer tok-123'], 'X-Token': ['a', 'b'] },
    'the agent itself still sends them',
  );
  const z = renderConfigz(kc);
  assert.deepEqual(z.staticPodURLHeader, { Authorization: ['<redacted>'], 'X-Token': ['<redacted>', '<redacted>'] });
  assert.equal(z.staticPodURL, 'https://<redacted>@pods.example:8443/pods?x=1');
  const text = JSON.stringify(z);
  for (const secret of ['tok-123', 's3cret', 'bob']) assert.ok(!text.includes(secret), `${secret} leaked`);
  assert.equal(renderConfigz(load(['--manifest-url=http://10.0.0.1/pods'])).staticPodURL, 'http://10.0.0.1/pods');
});

test('configz renders upstream names and Go durations; cipher names map to OpenSSL', () => {
  const z = renderConfigz(load([]));
  assert.equal(z.syncFrequency, '1m0s'); // metav1.Duration marshals with Go's Duration.String()
  assert.deepEqual((z.authentication as { webhook: unknown }).webhook, { enabled: true, cacheTTL: '2m0s' });
  assert.equal(formatDuration(90_500), '1m30.5s'); // Go's time.Duration.String()
  assert.equal(
    cipherList(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_128_CBC_SHA']),
    'ECDHE-RSA-AES128-GCM-SHA256:AES128-SHA:TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256',
  );
});
