/**
 * Rotating credentials: a token file re-read after 60 s and after a 401, an exec plugin re-run
 * once its token expires or after a 401, the kubeconfig user's fields, and the real client
 * picking up a rotated token file on the 401 it gets with the old one.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { userCredentials } from '../../src/apiclient/credentials.js';
import { createApiClients } from '../../src/apiclient/index.js';
import { ApiError } from '../../src/errors.js';
import type { Clock } from '../../src/util/clock.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { testTempDir } from '../support/temp-dir.js';

const V1 = 'client.authentication.k8s.io/v1';
const dir = testTempDir('kts-creds-');
let t = 1_000_000;
const clock: Clock = { now: () => t, setTimeout: () => ({ cancel: () => undefined }) };

test('token file: cached for 60 s, re-read after, and at once after a 401', async () => {
  const file = join(dir, 'token');
  writeFileSync(file, 'one\n');
  const c = userCredentials({ tokenFile: file }, clock)!;
  assert.equal(await c.authorization(), 'Bearer one');
  writeFileSync(file, 'two');
  t += 59_000;
  assert.equal(await c.authorization(), 'Bearer one', 'within the minute');
  t += 2_000;
  assert.equal(await c.authorization(), 'Bearer two', 're-read after 60 s');
  writeFileSync(file, 'three');
  c.invalidate();
  assert.equal(await c.authorization(), 'Bearer three', 're-read after a 401');
});

/** A plugin that counts its runs in a file and prints a token expiring in `ttl` seconds. */
function plugin(ttl: number): { command: string; runs: () => number } {
  const count = join(dir, `runs-${ttl}`);
  writeFileSync(count, '');
  const command = join(dir, `plugin-${ttl}.sh`);
  writeFileSync(
    command,
    `#!/bin/sh
echo x >> ${count}
n=$(wc -l < ${count})
exp=$(date -u -d "@$(( $(date +%s) + ${ttl} ))" +%Y-%m-%dT%H:%M:%SZ)
case "$KUBERNETES_EXEC_INFO" in *ExecCredential*) ;; *) exit 3 ;; esac
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s-%s","expirationTimestamp":"%s"}}' "$PREFIX" "$n" "$exp"
`,
  );
  chmodSync(command, 0o755);
  return { command, runs: () => readFileSync(count, 'utf8').split('\n').filter(Boolean).length };
}

test('exec plugin: run once, re-run when expirationTimestamp passes and after a 401; env passed', async () => {
  const p = plugin(600);
  const c = userCredentials(
    { exec: { command: p.command, env: [{ name: 'PREFIX', value: 'tok' }], apiVersion: V1 } },
    clock,
  )!;
  const [a, b] = await Promise.all([c.authorization(), c.authorization()]);
  assert.equal(a, 'Bearer tok-1');
  assert.equal(b, 'Bearer tok-1', 'concurrent callers share one run');
  assert.equal(p.runs(), 1);
  t += 599_000 - 5_000;
  assert.equal(await c.authorization(), 'Bearer tok-1', 'not expired yet');
  t += 10_000;
  assert.equal(await c.authorization(), 'Bearer tok-2', 're-run after expiry');
  c.invalidate();
  assert.equal(await c.authorization(), 'Bearer tok-3', 're-run after a 401');
  assert.equal(p.runs(), 3);
});

test('exec plugin failures are clear API errors', async () => {
  const bad = join(dir, 'bad.sh');
  writeFileSync(bad, '#!/bin/sh\necho not-json\n');
  chmodSync(bad, 0o755);
  await assert.rejects(
    userCredentials({ exec: { command: bad, apiVersion: V1 } }, clock)!.authorization(),
    (e: unknown) => e instanceof ApiError && /printed no ExecCredential JSON/.test(e.message),
  );
});

test('exec plugin answering in another apiVersion than configured is refused (as client-go)', async () => {
  const p = plugin(600);
  const c = userCredentials(
    { exec: { command: p.command, apiVersion: 'client.authentication.k8s.io/v1beta1' } },
    clock,
  )!;
  await assert.rejects(
    c.authorization(),
    (e: unknown) =>
      e instanceof ApiError &&
      /answered apiVersion "client.authentication.k8s.io\/v1", configured client.authentication.k8s.io\/v1beta1/.test(
        e.message,
      ),
  );
});

test('static token, basic auth, and none', async () => {
  assert.equal(await userCredentials({ token: ' abc \n' })!.authorization(), 'Bearer abc');
  assert.equal(
    await userCredentials({ username: 'admin', password: 'p:w' })!.authorization(),
    `Basic ${Buffer.from('admin:p:w').toString('base64')}`,
  );
  assert.equal(userCredentials({}), undefined, 'no credentials: TLS client certificate only');
});

const api = await startTestApiserver();
after(() => api.stop());

test('the client re-reads a rotated token file on the 401 its old token gets', async () => {
  const tokenFile = join(dir, 'rotating');
  writeFileSync(tokenFile, 'stale');
  const kc = JSON.parse(readFileSync(api.kubeconfig(dir), 'utf8')) as { users: { user: Record<string, string> }[] };
  kc.users[0]!.user = { tokenFile };
  const kcPath = join(dir, 'kc-rotating.json');
  writeFileSync(kcPath, JSON.stringify(kc));
  const clients = await createApiClients(kcPath);
  try {
    await assert.rejects(
      clients.main.request({ method: 'GET', path: '/api/v1/nodes' }),
      (e: unknown) => e instanceof ApiError && e.statusCode === 401,
    );
    writeFileSync(tokenFile, api.token);
    const list = await clients.main.request<{ items: unknown[] }>({ method: 'GET', path: '/api/v1/nodes' });
    assert.ok(Array.isArray(list.items), 'the rotated token was used without waiting a minute');
  } finally {
    clients.close();
  }
});
