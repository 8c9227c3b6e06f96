/**
 * TLS bootstrap against the test apiserver (CSR API, bootstrap tokens, client-certificate
 * authentication) and its csrapprover/csrsigning stand-in: the node files a CSR with its
 * bootstrap token, gets a certificate, stores it as upstream does and then talks to the
 * apiserver as system:node:<name>; a valid kubeconfig is kept; an expired one is bootstrapped
 * again; denied and failed requests are clear errors.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createApiClients } from '../../src/apiclient/index.js';
import { loadClientCert, isClientConfigStillValid, CLIENT_SIGNER } from '../../src/certificate/index.js';
import { CertificateError } from '../../src/errors.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { writeKubeconfig } from '../support/test-certs.js';
import { CsrSigner } from '../support/csr-signer.js';
import { testTempDir } from '../support/temp-dir.js';

const BOOTSTRAP_TOKEN = 'abcdef.0123456789abcdef';
const api = await startTestApiserver({ bootstrapTokens: [BOOTSTRAP_TOKEN] });
after(() => api.stop());

function nodeDirs(node: string) {
  const dir = testTempDir(`kts-bootstrap-${node}-`);
  const bootstrap = writeKubeconfig(join(dir, 'bootstrap-kubelet.conf'), api.url, api.certs.caFile, BOOTSTRAP_TOKEN);
  return { dir, bootstrap, kubeconfig: join(dir, 'kubelet.conf'), certDir: join(dir, 'pki') };
}

const bootstrapOf = (d: ReturnType<typeof nodeDirs>, nodeName: string, extra: { waitMs?: number } = {}) =>
  loadClientCert({
    kubeconfigPath: d.kubeconfig,
    bootstrapKubeconfigPath: d.bootstrap,
    certDir: d.certDir,
    nodeName,
    connect: (p) => createApiClients(p),
    ...extra,
  });

test('a node bootstraps its client certificate and then talks as system:node:<name>', async () => {
  const signer = new CsrSigner(api.store, api.certs);
  try {
    const d = nodeDirs('n1');
    assert.equal(await bootstrapOf(d, 'n1'), 'bootstrapped');

    const csr = api.store
      .list('certificatesigningrequests')
      .find((c) => (c.spec as { username?: string }).username === 'system:bootstrap:abcdef');
    assert.ok(csr, 'the CSR was filed with the bootstrap token');
    const spec = csr.spec as { signerName: string; usages: string[] };
    assert.equal(spec.signerName, CLIENT_SIGNER);
    assert.deepEqual(spec.usages, ['digital signature', 'client auth'], 'ECDSA key: no key encipherment, as upstream');
    assert.match(String(csr.metadata?.name), /^node-csr-[A-Za-z0-9_-]+$/);

    const current = join(d.certDir, 'kubelet-client-current.pem');
    assert.ok(lstatSync(current).isSymbolicLink());
    assert.match(readlinkSync(current), /^kubelet-client-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.pem$/);
    assert.equal(statSync(current).mode & 0o777, 0o600);
    assert.equal(existsSync(join(d.certDir, 'kubelet-client.key.tmp')), false, 'the temporary key is gone');
    const pem = readFileSync(current, 'utf8');
    assert.match(pem, /BEGIN CERTIFICATE[\s\S]+BEGIN EC PRIVATE KEY/);
    const cert = new X509Certificate(pem);
    assert.match(cert.subject, /CN=system:node:n1/);
    assert.match(cert.subject, /O=system:nodes/);

    const kc = JSON.parse(readFileSync(d.kubeconfig, 'utf8'));
    assert.equal(kc.users[0].user['client-certificate'], current);
    assert.equal(kc.users[0].user['client-key'], current);
    assert.equal(kc.clusters[0].cluster.server, api.url);

    const clients = await createApiClients(d.kubeconfig);
    try {
      await clients.main.request({ method: 'GET', path: '/api/v1/nodes' });
      assert.equal(api.users.at(-1)?.name, 'system:node:n1', 'authenticated by the issued certificate');
    } finally {
      clients.close();
    }
    const csrs = api.store.list('certificatesigningrequests').length;
    assert.equal(await bootstrapOf(d, 'n1'), 'valid', 'a valid kubeconfig is used as it is');
    assert.equal(api.store.list('certificatesigningrequests').length, csrs, 'no new CSR');
  } finally {
    signer.close();
  }
});

test('the bootstrap token may file CSRs and nothing else', async () => {
  const d = nodeDirs('n0');
  const clients = await createApiClients(d.bootstrap);
  try {
    await assert.rejects(clients.main.request({ method: 'GET', path: '/api/v1/pods' }), /403|Forbidden|cannot get/);
  } finally {
    clients.close();
  }
});

test('an expired client certificate is bootstrapped again with the same key', async () => {
  const signer = new CsrSigner(api.store, api.certs, { lifetimeSeconds: 2 });
  try {
    const d = nodeDirs('n2');
    assert.equal(await bootstrapOf(d, 'n2'), 'bootstrapped');
    const first = readFileSync(join(d.certDir, 'kubelet-client-current.pem'), 'utf8');
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(isClientConfigStillValid(d.kubeconfig), false);
    assert.equal(await bootstrapOf(d, 'n2'), 'bootstrapped');
    const second = readFileSync(join(d.certDir, 'kubelet-client-current.pem'), 'utf8');
    assert.notEqual(new X509Certificate(second).serialNumber, new X509Certificate(first).serialNumber);
    assert.equal(
      second.slice(second.indexOf('-----BEGIN EC')),
      first.slice(first.indexOf('-----BEGIN EC')),
      'same key',
    );
  } finally {
    signer.close();
  }
});

test('a denied CSR is a clear error, and the key is kept for the next try', async () => {
  const signer = new CsrSigner(api.store, api.certs, { approveClient: false });
  try {
    const d = nodeDirs('n3');
    const run = bootstrapOf(d, 'n3', { waitMs: 20_000 });
    let name: string | undefined;
    for (let i = 0; i < 100 && !name; i++) {
      await new Promise((r) => setTimeout(r, 50));
      name = api.store
        .list('certificatesigningrequests')
        .find(
          (c) =>
            (c.spec as { username?: string }).username === 'system:bootstrap:abcdef' &&
            !(c.status as { conditions?: unknown[] } | undefined)?.conditions,
        )?.metadata?.name as string | undefined;
    }
    assert.ok(name, 'a pending CSR');
    signer.deny(name);
    await assert.rejects(
      run,
      (err: unknown) =>
        err instanceof CertificateError &&
        err.code === 'KTS_ERR_CERTIFICATE' &&
        /is denied, reason: KubectlDeny/.test(err.message),
    );
    assert.ok(existsSync(join(d.certDir, 'kubelet-client.key.tmp')), 'the key is kept');
    assert.equal(existsSync(d.kubeconfig), false, 'no kubeconfig without a certificate');
  } finally {
    signer.close();
  }
});

test('a failed CSR and an unanswered one are clear errors', async () => {
  const signer = new CsrSigner(api.store, api.certs, { approveClient: false });
  try {
    const d = nodeDirs('n4');
    await assert.rejects(
      bootstrapOf(d, 'n4', { waitMs: 300 }),
      /timed out waiting 0 s for certificate signing request node-csr-/,
    );
    const name = String(
      api.store
        .list('certificatesigningrequests')
        .find((c) => !(c.status as { conditions?: unknown[] } | undefined)?.conditions)?.metadata?.name,
    );
    const run = bootstrapOf(d, 'n4', { waitMs: 20_000 }); // the same key and name: finds its own CSR
    await new Promise((r) => setTimeout(r, 300));
    signer.fail(name);
    await assert.rejects(run, /certificate signing request node-csr-\S+ failed, reason: SignerValidationFailure/);
  } finally {
    signer.close();
  }
});

test('a missing or malformed bootstrap kubeconfig is a clear error', async () => {
  const d = nodeDirs('n5');
  await assert.rejects(
    loadClientCert({
      kubeconfigPath: d.kubeconfig,
      bootstrapKubeconfigPath: join(d.dir, 'nope.conf'),
      certDir: d.certDir,
      nodeName: 'n5',
      connect: (p) => createApiClients(p),
    }),
    /unable to load bootstrap kubeconfig .*nope\.conf/,
  );
});
