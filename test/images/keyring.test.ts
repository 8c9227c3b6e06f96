import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DockerKeyring, parseImageRegistry, type PullSecret } from '../../src/images/keyring.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const cfgjson = (auths: object): PullSecret => ({
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
});

test('image references → registry host and path', () => {
  assert.deepEqual(parseImageRegistry('busybox'), { host: 'docker.io', path: 'library/busybox' });
  assert.deepEqual(parseImageRegistry('user/app:1'), { host: 'docker.io', path: 'user/app' });
  assert.deepEqual(parseImageRegistry('127.0.0.1:5000/kts/busybox:v1'), {
    host: '127.0.0.1:5000',
    path: 'kts/busybox',
  });
  assert.deepEqual(parseImageRegistry('localhost/x@sha256:abc'), { host: 'localhost', path: 'x' });
});

test('keyring lookup: host, scheme, path prefix, wildcard, docker.io aliases, auth decoding, most specific first', () => {
  const k = new DockerKeyring([
    cfgjson({ 'https://index.docker.io/v1/': { username: 'hub', password: 'p1' } }),
    cfgjson({
      'http://reg.example.com:5000': { auth: b64('u:p:with:colons') },
      'reg.example.com:5000/team': { username: 't', password: 'p2' },
    }),
    cfgjson({ '*.corp.io': { username: 'w', password: 'p3', identitytoken: 'tok' } }),
    {
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': b64(JSON.stringify({ 'quay.io': { username: 'q', password: 'p4' } })) },
    },
    { data: { '.dockerconfigjson': b64('{not json') } },
  ]);
  assert.deepEqual(
    k.lookup('busybox').map((a) => a.username),
    ['hub'],
  );
  assert.deepEqual(
    k.lookup('reg.example.com:5000/team/app:1').map((a) => a.username),
    ['t', 'u'],
  );
  assert.equal(k.lookup('reg.example.com:5000/other').length, 1);
  assert.equal(k.lookup('reg.example.com:5000/other')[0]!.password, 'p:with:colons');
  assert.deepEqual(
    k.lookup('a.corp.io/x').map((a) => [a.username, a.identityToken]),
    [['w', 'tok']],
  );
  assert.equal(k.lookup('a.b.corp.io/x').length, 0, 'a wildcard matches one label');
  assert.deepEqual(
    k.lookup('quay.io/x/y').map((a) => a.username),
    ['q'],
  );
  assert.equal(k.lookup('ghcr.io/x').length, 0);
});
