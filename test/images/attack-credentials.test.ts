// Attacks on the image credential inputs: credential provider plugins (hang, a descendant holding
// stdout, flood, garbage answers, exit codes, odd auth keys), pod pull secrets (bad base64, not
// JSON, huge, malformed entries) and the node's docker config file (a link to a FIFO, /dev/zero
// or a directory, a huge file, garbage). Each fails the pull with a clear message or proceeds
// without those credentials with a log line; none crashes or hangs the daemon.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContainerStartError } from '../../src/errors.js';
import type { CredentialProvider } from '../../src/images/credentialprovider/config.js';
import { PluginProvider, execPlugin } from '../../src/images/credentialprovider/plugin.js';
import { readDockerConfigFile } from '../../src/images/docker-config.js';
import { BasicDockerKeyring, makeDockerKeyring, type PullSecret } from '../../src/images/keyring.js';
import { testTempDir } from '../support/temp-dir.js';

const V1 = 'credentialprovider.kubelet.k8s.io/v1';
const PROVIDER: CredentialProvider = {
  name: 'p',
  matchImages: ['r.io'],
  defaultCacheDurationMs: 0,
  apiVersion: V1,
  args: [],
  env: [],
};
const ok = (auth: string) =>
  `printf '%s' '{"apiVersion":"${V1}","kind":"CredentialProviderResponse","cacheKeyType":"Image","auth":${auth}}'`;

describe('credential provider plugin attacks: the lookup fails with a clear error, never hangs', () => {
  const dir = testTempDir('kts-cred-attack-');
  const rows: Array<[name: string, script: string, error: RegExp]> = [
    ['hangs', 'exec sleep 30', /timed out after 300ms/],
    ['a descendant keeps stdout open after the timeout', 'sleep 30 & sleep 30', /timed out after 300ms/],
    ['exits but a descendant keeps stdout open', '(sleep 30) & exit 0', /timed out after 300ms/],
    ['floods stdout', 'exec yes', /output exceeded 1048576 bytes/],
    ['a descendant floods stdout', 'yes & wait', /output exceeded 1048576 bytes/],
    ['writes invalid JSON', "printf '{not json'", /error decoding credential provider plugin response/],
    ['writes JSON null', "printf 'null'", /did not match expected apiVersion/],
    ['answers the wrong apiVersion', ok('{}').replace(V1, 'credentialprovider.kubelet.k8s.io/v1alpha1'), /apiVersion/],
    ['answers the wrong kind', ok('{}').replace('CredentialProviderResponse', 'Pod'), /unexpected Kind: "Pod"/],
    ['exits non-zero', 'echo denied >&2; exit 7', /exit status 7: denied/],
    ['is killed by a signal', 'kill -9 $$', /killed by SIGKILL/],
    ['auth is a list', ok('[1]'), /auth must be a map/],
    ['an auth entry is a string', ok('{"r.io":"x"}'), /entry "r.io" is not an object/],
    ['an auth password is a number', ok('{"r.io":{"username":"u","password":5}}'), /password must be a string/],
    ['an auth field without a colon', ok(`{"r.io":{"auth":"${btoa('nocolon')}"}}`), /base64\(username:password\)/],
  ];
  for (const [name, script, error] of rows) {
    it(name, async () => {
      const bin = `p${rows.findIndex((r) => r[0] === name)}`;
      writeFileSync(join(dir, bin), `#!/bin/sh\ncat >/dev/null\n${script}\n`);
      chmodSync(join(dir, bin), 0o755);
      const started = Date.now();
      await assert.rejects(execPlugin(dir, { ...PROVIDER, name: bin }, 300)('r.io/app'), error);
      assert.ok(Date.now() - started < 5000, 'failed within the bound, not when a descendant let go');
      // The provider turns the failure into no credentials (and a log line), never a throw.
      const provider = new PluginProvider({ ...PROVIDER, name: bin }, execPlugin(dir, { ...PROVIDER, name: bin }, 300));
      assert.deepEqual(await provider.provide('r.io/app'), {});
    });
  }

  it('auth keys that are not registry hosts: kept, but match no image', async () => {
    const keys = '{"":{"username":"a"},"*":{"username":"b"},"[z-a]":{"username":"c"},"a\\nb":{"username":"d"}}';
    writeFileSync(join(dir, 'odd'), `#!/bin/sh\ncat >/dev/null\n${ok(keys)}\n`);
    chmodSync(join(dir, 'odd'), 0o755);
    const auth = await execPlugin(dir, { ...PROVIDER, name: 'odd' })('r.io/app');
    const keyring = new BasicDockerKeyring().add(auth.auth);
    assert.deepEqual(keyring.lookupSync('r.io/app'), []);
    // The bad pattern "[z-a]" matches nothing (Go's ErrBadPattern), no throw; "*" is any one-label host.
    assert.deepEqual(keyring.lookupSync('[z-a]/app'), [{ username: 'b' }]);
  });

  it('50 concurrent lookups of one image exec the plugin once (upstream singleflight)', async () => {
    let execs = 0;
    const provider = new PluginProvider(PROVIDER, async () => {
      execs++;
      await new Promise((r) => setTimeout(r, 50));
      return { cacheKeyType: 'Image', auth: { 'r.io': { username: 'u', password: 'p' } } };
    });
    const all = await Promise.all(Array.from({ length: 50 }, () => provider.provide('r.io/app')));
    assert.equal(execs, 1);
    assert.equal(all.length, 50);
  });
});

const b64 = (s: string) => Buffer.from(s).toString('base64');
const secret = (type: string, key: string, value: unknown): PullSecret =>
  ({ metadata: { name: 'bad', namespace: 'ns', uid: 'u' }, type, data: { [key]: value } }) as PullSecret;
const CFGJSON = 'kubernetes.io/dockerconfigjson';

describe('pull secret attacks: the pull fails naming the secret, nothing crashes', () => {
  const rows: Array<[string, PullSecret, RegExp]> = [
    [
      'not base64',
      secret(CFGJSON, '.dockerconfigjson', '%%%not base64%%%'),
      /"bad": .dockerconfigjson is not valid JSON/,
    ],
    ['base64 of not JSON', secret(CFGJSON, '.dockerconfigjson', b64('{"auths":')), /is not valid JSON/],
    ['a number instead of a string', secret(CFGJSON, '.dockerconfigjson', 42), /is not valid JSON/],
    ['auths a list', secret(CFGJSON, '.dockerconfigjson', b64('{"auths":[1]}')), /is not a map/],
    [
      'auth without a colon',
      secret(CFGJSON, '.dockerconfigjson', b64(JSON.stringify({ auths: { 'r.io': { auth: b64('user') } } }))),
      /base64\(username:password\)/,
    ],
    [
      'auth a number',
      secret(CFGJSON, '.dockerconfigjson', b64('{"auths":{"r.io":{"auth":5}}}')),
      /auth must be a string/,
    ],
    [
      '.dockercfg entry null',
      secret('kubernetes.io/dockercfg', '.dockercfg', b64('{"r.io":null}')),
      /entry "r.io" is not an object/,
    ],
  ];
  for (const [name, s, error] of rows) {
    it(name, () => {
      assert.throws(
        () => makeDockerKeyring([s]),
        (e: unknown) => e instanceof ContainerStartError && e.reason === 'ErrImagePull' && error.test(e.message),
      );
    });
  }

  it('a 20 MB .dockerconfigjson with 100 000 registries: read, the right one found', async () => {
    const auths: Record<string, object> = {};
    for (let i = 0; i < 100_000; i++) auths[`r${i}.io`] = { auth: b64(`u${i}:${'p'.repeat(100)}`) };
    const keyring = makeDockerKeyring([secret(CFGJSON, '.dockerconfigjson', b64(JSON.stringify({ auths })))]);
    assert.deepEqual(
      (await keyring.lookup('r7.io/app')).map((a) => a.username),
      ['u7'],
    );
  });
});

describe('node docker config attacks: an odd file is skipped with a warning, the next path read', () => {
  const dir = testTempDir('kts-dockercfg-attack-');
  const good = join(dir, 'good.json');
  writeFileSync(good, JSON.stringify({ auths: { 'r.io': { username: 'u', password: 'p' } } }));
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const huge = join(dir, 'huge.json');
  writeFileSync(huge, '{');
  truncateSync(huge, 64 << 20); // sparse: 64 MiB without the disk
  const rows: Array<[string, string]> = [
    ['a link to a FIFO (would block the event loop)', fifo],
    ['a link to /dev/zero (would fill memory)', '/dev/zero'],
    ['a link to a directory', dir],
    ['a huge file', huge],
    ['a dangling link', join(dir, 'missing')],
  ];
  for (const [name, target] of rows) {
    it(name, () => {
      const d = join(dir, name.replace(/\W+/g, '-'));
      mkdirSync(d);
      symlinkSync(target, join(d, 'config.json'));
      const started = Date.now();
      assert.deepEqual(readDockerConfigFile({ json: [join(d, 'config.json'), good], cfg: [] }), {
        'r.io': { username: 'u', password: 'p' },
      });
      assert.ok(Date.now() - started < 2000);
    });
  }

  const garbage: Array<[string, string]> = [
    ['not JSON', '{"auths":'],
    ['auths a string', '{"auths":"x"}'],
    ['an entry with a numeric auth', '{"auths":{"r.io":{"auth":1}}}'],
    ['auth without a colon', JSON.stringify({ auths: { 'r.io': { auth: b64('nocolon') } } })],
  ];
  for (const [name, text] of garbage) {
    it(name, () => {
      const f = join(dir, `${name.replace(/\W+/g, '-')}.json`);
      writeFileSync(f, text);
      assert.deepEqual(readDockerConfigFile({ json: [f, good], cfg: [] }), {
        'r.io': { username: 'u', password: 'p' },
      });
    });
  }
});
