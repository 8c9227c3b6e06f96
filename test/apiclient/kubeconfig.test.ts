/**
 * Our kubeconfig loader: what real kubeconfigs hold (files and inline data, relative paths,
 * token, tokenFile, basic auth, exec plugins in v1 and v1beta1, insecure-skip-tls-verify,
 * tls-server-name, proxy-url), malformed ones refused with a KubeconfigError naming the field,
 * and the loaded transport talking to the test apiserver (server name, CONNECT proxy, exec).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createApiClients, loadKubeconfig, parseKubeconfig, KubeconfigError } from '../../src/apiclient/index.js';
import { ApiError } from '../../src/errors.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { testTempDir } from '../support/temp-dir.js';

const dir = testTempDir('kts-kubeconfig-');
mkdirSync(join(dir, 'pki'));
writeFileSync(join(dir, 'pki', 'ca.crt'), 'CA-FILE');
writeFileSync(join(dir, 'pki', 'client.crt'), 'CERT-FILE');
writeFileSync(join(dir, 'pki', 'client.key'), 'KEY-FILE');
const KC = join(dir, 'kubeconfig');
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A YAML kubeconfig with one context `c` → cluster `k`, user `u`, each body given as YAML flow text. */
const kubeconfig = (cluster: string, user = '{}', extra = '') => `apiVersion: v1
kind: Config
current-context: c
contexts:
- name: c
  context: {cluster: k, user: u}
clusters:
- name: k
  cluster: ${cluster}
users:
- name: u
  user: ${user}
${extra}`;

const SERVER = '{server: "https://10.0.0.1:6443"}';

test('valid kubeconfigs: what each field turns into', () => {
  const cases: { name: string; text: string; check: (kc: ReturnType<typeof parseKubeconfig>) => void }[] = [
    {
      name: 'files relative to the kubeconfig directory',
      text: kubeconfig(
        '{server: "https://10.0.0.1:6443", certificate-authority: pki/ca.crt}',
        '{client-certificate: pki/client.crt, client-key: pki/client.key}',
      ),
      check: (kc) => {
        assert.equal(kc.cluster.ca?.toString(), 'CA-FILE');
        assert.equal(kc.user.cert?.toString(), 'CERT-FILE');
        assert.equal(kc.user.key?.toString(), 'KEY-FILE');
        assert.equal(kc.cluster.insecureSkipTlsVerify, false);
      },
    },
    {
      name: 'inline data wins over files (clientcmd)',
      text: kubeconfig(
        `{server: "https://h:6443", certificate-authority: nope, certificate-authority-data: ${b64('CA-DATA')}}`,
        `{client-certificate-data: ${b64('C')}, client-key-data: ${b64('K')}}`,
      ),
      check: (kc) => {
        assert.equal(kc.cluster.ca?.toString(), 'CA-DATA');
        assert.equal(kc.user.cert?.toString(), 'C');
        assert.equal(kc.user.key?.toString(), 'K');
      },
    },
    {
      name: 'insecure, server name, proxy',
      text: kubeconfig(
        '{server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true, tls-server-name: api.example, proxy-url: "http://u:p@proxy:3128"}',
      ),
      check: (kc) => {
        assert.equal(kc.cluster.insecureSkipTlsVerify, true);
        assert.equal(kc.cluster.tlsServerName, 'api.example');
        assert.equal(kc.cluster.proxyUrl?.host, 'proxy:3128');
      },
    },
    {
      name: 'token and tokenFile (made absolute)',
      text: kubeconfig(SERVER, '{token: abc, tokenFile: secrets/token}'),
      check: (kc) => assert.deepEqual([kc.user.token, kc.user.tokenFile], ['abc', join(dir, 'secrets/token')]),
    },
    {
      name: 'basic auth',
      text: kubeconfig(SERVER, '{username: admin, password: secret}'),
      check: (kc) => assert.deepEqual([kc.user.username, kc.user.password], ['admin', 'secret']),
    },
    {
      name: 'exec v1beta1 with args and env; a path with a slash is relative, a bare name stays for PATH',
      text: kubeconfig(
        SERVER,
        '{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: ./bin/plugin, args: [get-token, --x], env: [{name: A, value: "1"}], interactiveMode: Never}}',
      ),
      check: (kc) =>
        assert.deepEqual(kc.user.exec, {
          command: join(dir, 'bin/plugin'),
          args: ['get-token', '--x'],
          env: [{ name: 'A', value: '1' }],
          apiVersion: 'client.authentication.k8s.io/v1beta1',
        }),
    },
    {
      name: 'exec v1, bare command',
      text: kubeconfig(SERVER, '{exec: {apiVersion: client.authentication.k8s.io/v1, command: aws-iam-authenticator}}'),
      check: (kc) => assert.equal(kc.user.exec?.command, 'aws-iam-authenticator'),
    },
    {
      name: 'JSON kubeconfig, context without a user (anonymous)',
      text: JSON.stringify({
        'current-context': 'c',
        contexts: [{ name: 'c', context: { cluster: 'k' } }],
        clusters: [{ name: 'k', cluster: { server: 'http://127.0.0.1:8080' } }],
      }),
      check: (kc) => {
        assert.equal(kc.cluster.server.href, 'http://127.0.0.1:8080/');
        assert.deepEqual(kc.user, {});
      },
    },
  ];
  for (const c of cases) {
    const kc = parseKubeconfig(c.text, KC);
    assert.equal(kc.context, 'c', c.name);
    c.check(kc);
  }
});

test('malformed kubeconfigs: a KubeconfigError naming the field', () => {
  const cases: [string, string, RegExp][] = [
    ['not YAML', 'a: [b', /not YAML/],
    ['a scalar', 'just a string', /not a kubeconfig/],
    ['no current-context', 'clusters: []', /current-context is not set/],
    ['context missing', 'current-context: x\ncontexts: []', /contexts has no entry named "x"/],
    ['contexts not a list', 'current-context: x\ncontexts: {x: 1}', /contexts is not a list/],
    [
      'context without cluster',
      'current-context: c\ncontexts: [{name: c, context: {user: u}}]',
      /context "c" names no cluster/,
    ],
    ['cluster missing', kubeconfig(SERVER).replace('name: k', 'name: other'), /clusters has no entry named "k"/],
    ['user missing', kubeconfig(SERVER).replace('name: u', 'name: other'), /users has no entry named "u"/],
    ['no server', kubeconfig('{insecure-skip-tls-verify: true}'), /clusters\[k\]\.cluster\.server is not set/],
    [
      'server not a URL',
      kubeconfig('{server: "10.0.0.1:6443"}'),
      /server "10.0.0.1:6443": scheme must be https or http|server "10.0.0.1:6443" is not a URL/,
    ],
    ['server not a string', kubeconfig('{server: 6443}'), /server is not a string/],
    [
      'insecure not a bool',
      kubeconfig('{server: "https://h", insecure-skip-tls-verify: "yes"}'),
      /insecure-skip-tls-verify is not true or false/,
    ],
    [
      'CA file missing',
      kubeconfig('{server: "https://h", certificate-authority: missing.crt}'),
      /certificate-authority .*missing\.crt: ENOENT/,
    ],
    [
      'CA data not base64',
      kubeconfig('{server: "https://h", certificate-authority-data: "-----BEGIN"}'),
      /certificate-authority-data is not base64/,
    ],
    [
      'socks proxy',
      kubeconfig('{server: "https://h", proxy-url: "socks5://p:1080"}'),
      /proxy-url "socks5:\/\/p:1080": scheme must be http or https/,
    ],
    [
      'cert without key',
      kubeconfig(SERVER, '{client-certificate: pki/client.crt}'),
      /client-certificate and client-key must be given together/,
    ],
    ['password without username', kubeconfig(SERVER, '{password: x}'), /password without username/],
    [
      'exec without command',
      kubeconfig(SERVER, '{exec: {apiVersion: client.authentication.k8s.io/v1}}'),
      /exec\.command is not set/,
    ],
    [
      'exec v1alpha1',
      kubeconfig(SERVER, '{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: p}}'),
      /exec\.apiVersion "client.authentication.k8s.io\/v1alpha1" is not one of/,
    ],
    ['exec without apiVersion', kubeconfig(SERVER, '{exec: {command: p}}'), /exec\.apiVersion "" is not one of/],
    [
      'exec interactive',
      kubeconfig(SERVER, '{exec: {apiVersion: client.authentication.k8s.io/v1, command: p, interactiveMode: Always}}'),
      /interactiveMode Always needs a terminal/,
    ],
    [
      'exec args not strings',
      kubeconfig(SERVER, '{exec: {apiVersion: client.authentication.k8s.io/v1, command: p, args: [1]}}'),
      /exec\.args is not a list of strings/,
    ],
    [
      'exec env malformed',
      kubeconfig(SERVER, '{exec: {apiVersion: client.authentication.k8s.io/v1, command: p, env: [{name: A}]}}'),
      /exec\.env is not a list of \{name, value\} strings/,
    ],
  ];
  for (const [name, text, want] of cases) {
    assert.throws(
      () => parseKubeconfig(text, KC),
      (e: unknown) => {
        assert.ok(e instanceof KubeconfigError, `${name}: ${String(e)}`);
        assert.equal(e.code, 'KTS_ERR_KUBECONFIG', name);
        assert.match(e.message, /^--kubeconfig \S+kubeconfig: /, name);
        assert.match(e.message, want, name);
        return true;
      },
      name,
    );
  }
  assert.throws(
    () => loadKubeconfig(join(dir, 'absent')),
    (e: unknown) => e instanceof KubeconfigError && /absent: ENOENT/.test(e.message),
  );
});

const api = await startTestApiserver();
after(() => api.stop());

/** A kubeconfig for the test apiserver with `cluster` fields added and `user` as the user. */
function liveKubeconfig(
  name: string,
  cluster: Record<string, unknown>,
  user: Record<string, unknown> = { token: api.token },
): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      'current-context': 'c',
      contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
      clusters: [{ name: 'k', cluster: { server: api.url, 'certificate-authority': api.certs.caFile, ...cluster } }],
      users: [{ name: 'u', user }],
    }),
  );
  return path;
}

async function listNodes(kcPath: string): Promise<unknown> {
  const clients = await createApiClients(kcPath, { timeoutMs: 5000 });
  try {
    return await clients.main.request<{ items: unknown[] }>({ method: 'GET', path: '/api/v1/nodes' });
  } finally {
    clients.close();
  }
}

test('tls-server-name: the certificate is checked against it, not the URL host', async () => {
  // The serving certificate names 127.0.0.1 and localhost.
  await listNodes(liveKubeconfig('sni-ok', { 'tls-server-name': 'localhost' }));
  await assert.rejects(
    listNodes(liveKubeconfig('sni-bad', { 'tls-server-name': 'api.example' })),
    (e: unknown) => e instanceof ApiError && /api\.example/.test(e.message),
  );
  await listNodes(
    liveKubeconfig('insecure', {
      'certificate-authority': undefined,
      'insecure-skip-tls-verify': true,
      'tls-server-name': 'api.example',
    }),
  );
});

test('proxy-url: requests tunnel through the proxy with CONNECT', async () => {
  const connects: string[] = [];
  const proxy = createServer();
  proxy.on('connect', (req, client) => {
    connects.push(`${req.url} ${req.headers['proxy-authorization'] ?? ''}`);
    const [host, port] = (req.url ?? '').split(':');
    const upstream = netConnect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  try {
    const port = (proxy.address() as AddressInfo).port;
    await listNodes(liveKubeconfig('proxied', { 'proxy-url': `http://me:pw@127.0.0.1:${port}` }));
    assert.deepEqual(connects, [`127.0.0.1:${api.port} Basic ${b64('me:pw')}`]);
  } finally {
    proxy.close();
  }
  // A proxy that refuses: a connection error naming the proxy.
  const refusing = createServer();
  refusing.on('connect', (_req, client) => client.end('HTTP/1.1 403 Forbidden\r\n\r\n'));
  await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r));
  try {
    const port = (refusing.address() as AddressInfo).port;
    await assert.rejects(
      listNodes(liveKubeconfig('refused', { 'proxy-url': `http://127.0.0.1:${port}` })),
      (e: unknown) => e instanceof ApiError && /proxy 127\.0\.0\.1:\d+: CONNECT .* answered 403/.test(e.message),
    );
  } finally {
    refusing.close();
  }
});

test('exec plugin (v1beta1) from a YAML kubeconfig authenticates the client', async () => {
  const plugin = join(dir, 'plugin.sh');
  writeFileSync(
    plugin,
    `#!/bin/sh
case "$KUBERNETES_EXEC_INFO" in *v1beta1*) ;; *) exit 3 ;; esac
printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"%s"}}' "$TOKEN"
`,
  );
  chmodSync(plugin, 0o755);
  const path = join(dir, 'exec.yaml');
  writeFileSync(
    path,
    `current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "${api.url}", certificate-authority: ${api.certs.caFile}}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./plugin.sh
      env: [{name: TOKEN, value: "${api.token}"}]
`,
  );
  const list = (await listNodes(path)) as { items: unknown[] };
  assert.ok(Array.isArray(list.items));
});
