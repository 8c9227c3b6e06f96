/**
 * The node's docker config keyring: upstream ReadDockerConfigFile's search order
 * (pkg/credentialprovider/config.go: config.json in the preferred path = root dir, working dir,
 * $HOME/.docker, /.docker; then .dockercfg in root dir, working dir, $HOME, /) and the 5-minute
 * cache of the default provider; cases after upstream config_test.go (TestReadDockerConfigFile,
 * TestDockerConfigJsonJSONDecode, TestDockerConfigEntryJSONDecode).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DOCKER_CONFIG_CACHE_MS,
  NodeDockerConfigKeyring,
  dockerConfigSearchPaths,
  readDockerConfigFile,
} from '../../src/images/docker-config.js';
import { testTempDir } from '../support/temp-dir.js';
import { ManualClock } from '../fakes/manual-clock.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

test('search paths: config.json then .dockercfg, the root dir first (upstream DefaultDockerConfigJSONPaths/DefaultDockercfgPaths)', () => {
  const p = dockerConfigSearchPaths('/var/lib/kubelet', '/home/k');
  assert.deepEqual(p.json, [
    '/var/lib/kubelet/config.json',
    join(process.cwd(), 'config.json'),
    '/home/k/.docker/config.json',
    '/.docker/config.json',
  ]);
  assert.deepEqual(p.cfg, [
    '/var/lib/kubelet/.dockercfg',
    join(process.cwd(), '.dockercfg'),
    '/home/k/.dockercfg',
    '/.dockercfg',
  ]);
});

test('readDockerConfigFile: first valid config.json wins; invalid ones are skipped; .dockercfg only without one', () => {
  const dir = testTempDir('kts-dockercfg-');
  const [a, b, c] = ['a', 'b', 'c'].map((d) => join(dir, d));
  for (const d of [a!, b!, c!]) mkdirSync(d);
  writeFileSync(join(a!, 'config.json'), '{not json');
  writeFileSync(join(b!, 'config.json'), JSON.stringify({ auths: { 'reg.example': { auth: b64('u:p') } } }));
  writeFileSync(join(c!, '.dockercfg'), JSON.stringify({ 'old.example': { username: 'o', password: 'q' } }));
  const paths = { json: [a!, b!].map((d) => join(d, 'config.json')), cfg: [join(c!, '.dockercfg')] };
  assert.deepEqual(Object.keys(readDockerConfigFile(paths)), ['reg.example']);
  assert.deepEqual(Object.keys(readDockerConfigFile({ json: [join(a!, 'config.json')], cfg: paths.cfg })), [
    'old.example',
  ]);
  assert.deepEqual(readDockerConfigFile({ json: [join(dir, 'none.json')], cfg: [join(dir, 'none')] }), {});
});

test('NodeDockerConfigKeyring: reads the root dir config.json, sees an edit after the 5-minute cache', async () => {
  const root = testTempDir('kts-dockercfg-root-');
  const file = join(root, 'config.json');
  writeFileSync(file, JSON.stringify({ auths: { 'reg.example:5000': { username: 'one', password: 'p' } } }));
  const clock = new ManualClock();
  const k = new NodeDockerConfigKeyring({ json: [file], cfg: [] }, clock);
  assert.equal((await k.lookup('reg.example:5000/a/b'))[0]?.username, 'one');
  writeFileSync(file, JSON.stringify({ auths: { 'reg.example:5000': { username: 'two', password: 'p' } } }));
  clock.t += DOCKER_CONFIG_CACHE_MS - 1;
  assert.equal((await k.lookup('reg.example:5000/a/b'))[0]?.username, 'one', 'still cached');
  clock.t += 1;
  assert.equal((await k.lookup('reg.example:5000/a/b'))[0]?.username, 'two');
  assert.deepEqual(await k.lookup('other.example/a'), []);
});
