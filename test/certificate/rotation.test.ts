/**
 * Client certificate rotation (rotateCertificates): at 70–90 % of the lifetime a new key and CSR
 * through the node's own credentials, the API clients switched to the new certificate without a
 * restart, and an apiserver outage during renewal survived by retrying while the old
 * certificate still works.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiClients } from '../../src/apiclient/index.js';
import { CertFileStore, loadClientCert } from '../../src/certificate/index.js';
import { clientUsages, CLIENT_SIGNER } from '../../src/certificate/bootstrap.js';
import { CertificateRotation, rotationDeadline } from '../../src/certificate/rotation.js';
import { startTestApiserver, type TestApiserver } from '../support/test-apiserver.js';
import { writeKubeconfig } from '../support/test-certs.js';
import { CsrSigner } from '../support/csr-signer.js';
import { testTempDir } from '../support/temp-dir.js';

const TOKEN = 'rotate.0123456789abcdef';
let api: TestApiserver = await startTestApiserver({ bootstrapTokens: [TOKEN] });
after(() => api.stop());

test('upstream nextRotationDeadline: 70 % to 90 % of the lifetime after notBefore', () => {
  const from = new Date('2026-01-01T00:00:00Z');
  const to = new Date('2026-01-11T00:00:00Z'); // 10 days
  const day = 86_400_000;
  for (const [r, days] of [
    [0, 7],
    [0.5, 8],
    [1, 9],
  ] as const)
    assert.equal(
      rotationDeadline(from, to, () => r),
      from.getTime() + days * day,
    );
});

async function bootstrappedNode(node: string, onRenewError?: () => void) {
  const dir = testTempDir(`kts-rotate-${node}-`);
  const bootstrap = writeKubeconfig(join(dir, 'bootstrap.conf'), api.url, api.certs.caFile, TOKEN);
  const kubeconfig = join(dir, 'kubelet.conf');
  const certDir = join(dir, 'pki');
  await loadClientCert({
    kubeconfigPath: kubeconfig,
    bootstrapKubeconfigPath: bootstrap,
    certDir,
    nodeName: node,
    connect: (p) => createApiClients(p),
  });
  const clients = await createApiClients(kubeconfig);
  const store = new CertFileStore(certDir, 'kubelet-client');
  const rotation = new CertificateRotation({
    store,
    client: () => clients.main,
    signerName: CLIENT_SIGNER,
    kind: 'client',
    subject: { commonName: `system:node:${node}`, organizations: ['system:nodes'] },
    usages: clientUsages,
    onRotated: () => clients.reloadTls(),
    backoffMs: [500, 1000],
    random: () => 0.5,
    onRenewError,
  });
  return { clients, store, rotation, certDir, bootstrap };
}

const serialOf = (store: CertFileStore) => store.current()!.leaf.serialNumber;

test('the client certificate is renewed before it expires and the clients switch to it', async () => {
  const signer = new CsrSigner(api.store, api.certs, { lifetimeSeconds: 6 });
  const { clients, store, rotation } = await bootstrappedNode('r1');
  try {
    const first = serialOf(store);
    rotation.start();
    // validFrom is 5 s before issue (the signer's clock skew allowance): 80 % of 11 s = issue + 3.8 s.
    const end = Date.now() + 15_000;
    while (serialOf(store) === first && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    const second = serialOf(store);
    assert.notEqual(second, first, 'rotated');
    await new Promise((r) => setTimeout(r, 100));
    await clients.main.request({ method: 'GET', path: '/api/v1/nodes' });
    const u = api.users.at(-1)!;
    assert.equal(u.name, 'system:node:r1');
    assert.equal(u.certSerial?.toUpperCase(), second.toUpperCase(), 'the request used the new certificate');
    const csr = api.store
      .list('certificatesigningrequests')
      .find((c) => (c.spec as { username?: string }).username === 'system:node:r1');
    assert.ok(csr, 'the renewal CSR was filed by the node itself');
    assert.notEqual(store.current()!.keyPem, undefined);
  } finally {
    rotation.stop();
    clients.close();
    signer.close();
  }
});

test('an apiserver outage during renewal is retried until it succeeds', async () => {
  const signer = new CsrSigner(api.store, api.certs, { lifetimeSeconds: 20 });
  let renewErrors = 0;
  const { clients, store, rotation } = await bootstrappedNode('r2', () => renewErrors++);
  try {
    const first = serialOf(store);
    rotation.start(); // 80 % of 25 s after validFrom = issue + 15 s; it expires at issue + 20 s
    await new Promise((r) => setTimeout(r, 12_000));
    const { port, store: objects, certs, token } = api;
    await api.stop();
    await new Promise((r) => setTimeout(r, 5000)); // away across the rotation deadline
    assert.equal(serialOf(store), first, 'no new certificate while the apiserver is away');
    signer.close();
    api = await startTestApiserver({ port, store: objects, certs, token, bootstrapTokens: [TOKEN] });
    const signer2 = new CsrSigner(api.store, api.certs, { lifetimeSeconds: 20 });
    try {
      const end = Date.now() + 20_000;
      while (serialOf(store) === first && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
      assert.notEqual(serialOf(store), first, 'renewed after the outage');
      // Wall-clock expiry is not asserted: on a loaded machine timers slip. The retries are.
      assert.ok(renewErrors >= 1, `failed attempts while away: ${renewErrors}`);
      await clients.main.request({ method: 'GET', path: '/api/v1/nodes' });
      assert.equal(api.users.at(-1)?.certSerial?.toUpperCase(), serialOf(store).toUpperCase());
    } finally {
      signer2.close();
    }
  } finally {
    rotation.stop();
    clients.close();
    signer.close();
  }
});

test('the stored pair is cert then key, 0600, and the link moves atomically', () => {
  const dir = testTempDir('kts-store-');
  const store = new CertFileStore(dir, 'kubelet-client');
  assert.equal(store.current(), undefined);
  assert.throws(() => store.update('not a pem', 'key'), /holds no PEM CERTIFICATE block/);
  const pem = readFileSync(api.certs.certFile, 'utf8');
  const key = readFileSync(api.certs.keyFile, 'utf8');
  store.update(pem, key, new Date('2026-11-25T20:00:00Z'));
  store.update(pem, key, new Date('2026-11-25T20:00:00Z')); // same second: a second file, not an overwrite
  assert.equal(new X509Certificate(store.current()!.certPem).serialNumber, new X509Certificate(pem).serialNumber);
});

// upstream's kubelet clientset function: with no current certificate (expired), CSRs go through
// the bootstrap credentials; the node's own expired certificate could not authenticate them.
test('an expired client certificate is renewed through the bootstrap credentials', async () => {
  const signer = new CsrSigner(api.store, api.certs, { lifetimeSeconds: 1 });
  const { clients, store, bootstrap } = await bootstrappedNode('r4');
  try {
    const expiry = new Date(store.current()!.leaf.validTo).getTime();
    await new Promise((r) => setTimeout(r, Math.max(0, expiry - Date.now()) + 200));
    const first = serialOf(store);
    let leased = 0;
    const rotation = new CertificateRotation({
      store,
      client: () => clients.main,
      expiredClient: async () => {
        leased++;
        const c = await createApiClients(bootstrap);
        return { client: c.main, close: () => c.close() };
      },
      signerName: CLIENT_SIGNER,
      kind: 'client',
      subject: { commonName: 'system:node:r4', organizations: ['system:nodes'] },
      usages: clientUsages,
      onRotated: () => clients.reloadTls(),
    });
    await rotation.rotateNow();
    assert.equal(leased, 1, 'the bootstrap client was used');
    assert.notEqual(serialOf(store), first, 'a new certificate is stored');
  } finally {
    signer.close();
    clients.close();
  }
});
