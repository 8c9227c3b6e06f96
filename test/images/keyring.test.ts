import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BasicDockerKeyring,
  isDefaultRegistryMatch,
  makeDockerKeyring,
  repoToPull,
  urlsMatchStr,
  type PullSecret,
} from '../../src/images/keyring.js';
import { ContainerStartError } from '../../src/errors.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const cfgjson = (auths: object, name = 's'): PullSecret => ({
  metadata: { name },
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
});

test('upstream TestUrlsMatch (pkg/credentialprovider/keyring_test.go)', () => {
  const cases: Array<[string, string, boolean]> = [
    ['*.kubernetes.io', 'prefix.kubernetes.io', true],
    ['prefix.*.io', 'prefix.kubernetes.io', true],
    ['prefix.kubernetes.*', 'prefix.kubernetes.io', true],
    ['*-good.kubernetes.io', 'prefix-good.kubernetes.io', true],
    ['*.kubernetes.io/blah', 'prefix.kubernetes.io/blah', true],
    ['prefix.*.io/foo', 'prefix.kubernetes.io/foo/bar', true],
    ['*.kubernetes.io:1111/blah', 'prefix.kubernetes.io:1111/blah', true],
    ['prefix.*.io:1111/foo', 'prefix.kubernetes.io:1111/foo/bar', true],
    ['*.kubernetes.io', 'kubernetes.io', false],
    ['*.*.kubernetes.io', 'prefix.kubernetes.io', false],
    ['*.*.kubernetes.io', 'kubernetes.io', false],
    ['kubernetes.io', 'kubernetes.com', false],
    ['k*.io', 'quay.io', false],
    ['*.kubernetes.io:1234/blah', 'prefix.kubernetes.io:1111/blah', false],
    ['prefix.*.io/foo', 'prefix.kubernetes.io:1111/foo/bar', false],
  ];
  for (const [glob, target, want] of cases) assert.equal(urlsMatchStr(glob, target), want, `${glob} vs ${target}`);
});

test('upstream TestDockerKeyringForGlob: a key matches the image <target>/foo/bar', async () => {
  const cases: Array<[string, string]> = [
    ['https://hello.kubernetes.io', 'hello.kubernetes.io'],
    ['https://*.docker.io', 'prefix.docker.io'],
    ['https://prefix.*.io', 'prefix.docker.io'],
    ['https://prefix.docker.*', 'prefix.docker.io'],
    ['https://*.docker.io/path', 'prefix.docker.io/path'],
    ['https://prefix.*.io/path', 'prefix.docker.io/path/subpath'],
    ['https://prefix.docker.*/path', 'prefix.docker.io/path'],
    ['https://*.docker.io:8888', 'prefix.docker.io:8888'],
    ['https://prefix.*.io:8888', 'prefix.docker.io:8888'],
    ['https://prefix.docker.*:8888', 'prefix.docker.io:8888'],
    ['https://*.docker.io/path:1111', 'prefix.docker.io/path:1111'],
    ['https://*.docker.io/v1/', 'prefix.docker.io/path:1111'],
    ['https://*.docker.io/v2/', 'prefix.docker.io/path:1111'],
    ['https://prefix.docker.*/path:1111', 'prefix.docker.io/path:1111'],
    ['prefix.docker.io:1111', 'prefix.docker.io:1111/path'],
    ['*.docker.io:1111', 'prefix.docker.io:1111/path'],
  ];
  for (const [key, target] of cases) {
    const k = new BasicDockerKeyring().add({ [key]: { email: 'foo@bar.baz', auth: b64('foo:bar') } });
    const creds = await k.lookup(`${target}/foo/bar`);
    assert.equal(creds[0]?.username, 'foo', key);
    assert.equal(creds[0]?.password, 'bar', key);
  }
});

test('upstream TestKeyringMiss and TestKeyringMissWithDockerHubCredentials', () => {
  const cases: Array<[string, string]> = [
    ['https://hello.kubernetes.io', 'world.mesos.org/foo/bar'],
    ['https://*.docker.com', 'prefix.docker.io'],
    ['https://suffix.*.io', 'prefix.docker.io'],
    ['https://prefix.docker.c*', 'prefix.docker.io'],
    ['https://prefix.*.io/path:1111', 'prefix.docker.io/path/subpath:1111'],
    ['suffix.*.io', 'prefix.docker.io'],
    ['https://index.docker.io/v1/', 'world.mesos.org'],
  ];
  for (const [key, lookup] of cases) {
    const k = new BasicDockerKeyring().add({ [key]: { auth: b64('foo:bar') } });
    assert.deepEqual(k.lookupSync(`${lookup}/foo/bar`), [], key);
  }
});

test('upstream TestKeyringHitWith{Unqualified,UnqualifiedLibrary,Qualified}DockerHub', () => {
  const k = new BasicDockerKeyring().add({ 'https://index.docker.io/v1/': { auth: b64('foo:bar') } });
  for (const image of ['google/docker-registry', 'jenkins', 'index.docker.io/v1//google/docker-registry']) {
    const creds = k.lookupSync(image);
    assert.ok(creds.length >= 1 && creds.length <= 2, image);
    assert.equal(creds[0]!.username, 'foo');
  }
  // What the image manager asks with: the normalized repository.
  assert.equal(k.lookupSync(repoToPull('busybox:1.36'))[0]?.username, 'foo');
});

test('upstream TestIsDefaultRegistryMatch', () => {
  const cases: Array<[string, boolean]> = [
    ['foo/bar', true],
    ['docker.io/foo/bar', true],
    ['index.docker.io/foo/bar', true],
    ['foo', true],
    ['', false],
    ['registry.tld/foo/bar', false],
    ['registry:5000/foo/bar', false],
    ['myhostdocker.io/foo/bar', false],
  ];
  for (const [image, want] of cases) assert.equal(isDefaultRegistryMatch(image), want, image);
});

test('upstream TestDockerKeyringLookup and TestIssue3797: most specific key first, path prefix as a string', () => {
  const k = new BasicDockerKeyring().add({
    'bar.example.com/pong': { username: 'grace', password: 'squash' },
    'bar.example.com': { username: 'ada', password: 'smash' },
  });
  const names = (image: string) => k.lookupSync(image).map((a) => a.username);
  assert.deepEqual(names('bar.example.com'), ['ada']);
  assert.deepEqual(names('bar.example.com/pong'), ['grace', 'ada']);
  assert.deepEqual(names('bar.example.com/ping'), ['ada']);
  assert.deepEqual(names('bar.example.com/pongz'), ['grace', 'ada']);
  assert.deepEqual(names('bar.example.com/pong/pang'), ['grace', 'ada']);
  assert.deepEqual(names('example.com'), []);
  assert.deepEqual(names('foo.example.com'), []);
  const rex = new BasicDockerKeyring().add({ 'https://quay.io/v1/': { username: 'rex', password: 'tiny arms' } });
  for (const image of ['quay.io', 'quay.io/foo', 'quay.io/foo/bar'])
    assert.equal(rex.lookupSync(image)[0]?.username, 'rex');
});

test('repoToPull: upstream ParseImageName normalization, tag and digest dropped', () => {
  assert.equal(repoToPull('busybox'), 'docker.io/library/busybox');
  assert.equal(repoToPull('user/app:1'), 'docker.io/user/app');
  assert.equal(repoToPull('127.0.0.1:5000/kts/busybox:v1'), '127.0.0.1:5000/kts/busybox');
  assert.equal(repoToPull('localhost/x@sha256:abc'), 'localhost/x');
  assert.equal(repoToPull('reg.example:5000/a/b'), 'reg.example:5000/a/b');
});

test('upstream MakeDockerKeyring (secrets_test.go): typed docker config secrets, pod secrets before the node keyring', async () => {
  const node = new BasicDockerKeyring().add({ 'reg.example': { username: 'node', password: 'n' } });
  const secrets: PullSecret[] = [
    cfgjson({ 'reg.example/team': { username: 'pod', password: 'p', identitytoken: 'tok' } }),
    {
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': b64(JSON.stringify({ 'reg.example': { auth: b64('legacy:l:with:colons') } })) },
    },
    // Wrong type for its key, or not a docker config at all: ignored, as upstream.
    { type: 'Opaque', data: { '.dockerconfigjson': b64('{"auths":{"reg.example":{"username":"opaque"}}}') } },
    { type: 'kubernetes.io/dockerconfigjson', data: {} },
  ];
  const creds = await makeDockerKeyring(secrets, node).lookup('reg.example/team/app');
  assert.deepEqual(
    creds.map((a) => [a.username, a.password]),
    [
      ['pod', 'p'],
      ['legacy', 'l:with:colons'],
      ['node', 'n'],
    ],
  );
  assert.equal(creds[0]!.identityToken, 'tok');
  assert.equal(makeDockerKeyring([secrets[2]!], node), node, 'no docker config secret: the node keyring alone');
  assert.deepEqual(await makeDockerKeyring([]).lookup('reg.example/x'), []);
  const bad: PullSecret = {
    metadata: { name: 'broken' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64('{no') },
  };
  assert.throws(
    () => makeDockerKeyring([bad]),
    (e: unknown) => e instanceof ContainerStartError && /"broken"/.test(e.message),
  );
});
