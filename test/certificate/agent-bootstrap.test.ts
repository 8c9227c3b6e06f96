/**
 * The real CLI on a kubeadm-style node that has only a bootstrap kubeconfig: it requests its
 * client certificate, writes --kubeconfig, and registers its Node as system:node:<name>. No
 * container runtime is needed for that (the endpoint is absent; the node reports NotReady).
 * A denied CSR stops the agent with a KTS_ERR_CERTIFICATE message.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { writeKubeconfig } from '../support/test-certs.js';
import { CsrSigner } from '../support/csr-signer.js';
import { currentCertSerial, servedCertificate } from '../support/pki.js';

const TOKEN = 'k8sts1.0123456789abcdef';
const api = await startTestApiserver({ bootstrapTokens: [TOKEN] });
const agents: KubeletProcess[] = [];
after(async () => {
  for (const a of agents) await stopKubelet(a, true);
  await api.stop();
});

function agent(nodeName: string, extraArgs: string[] = [], extraConfig: string[] = []) {
  const { dir, manifests } = makeKubeletDirs();
  const bootstrap = writeKubeconfig(join(dir, 'bootstrap-kubelet.conf'), api.url, api.certs.caFile, TOKEN);
  const kubeconfig = join(dir, 'kubelet.conf');
  const k = startKubelet({
    dir,
    manifests,
    endpoint: `unix://${join(dir, 'no-runtime.sock')}`,
    logLevel: 'info',
    extraConfig,
    extraArgs: [
      `--bootstrap-kubeconfig=${bootstrap}`,
      `--kubeconfig=${kubeconfig}`,
      `--cert-dir=${join(dir, 'pki')}`,
      `--hostname-override=${nodeName}`,
      ...extraArgs,
    ],
  });
  agents.push(k);
  return { k, dir, kubeconfig };
}

test('an agent with only a bootstrap kubeconfig joins as system:node:<name>', async () => {
  const signer = new CsrSigner(api.store, api.certs);
  try {
    const { k, dir, kubeconfig } = agent('boot-a');
    await waitFor('the Node registered', 60_000, () => api.store.get('nodes', undefined, 'boot-a'), 200);
    assert.ok(existsSync(kubeconfig));
    assert.ok(existsSync(join(dir, 'pki', 'kubelet-client-current.pem')));
    assert.ok(
      api.users.some((u) => u.name === 'system:node:boot-a'),
      'requests made with the issued certificate',
    );
    assert.match(readFileSync(k.logFile, 'utf8'), /Client certificate issued; kubeconfig written/);
  } finally {
    signer.close();
  }
});

test('a denied CSR stops the agent with a clear error', async () => {
  const signer = new CsrSigner(api.store, api.certs, { approveClient: false });
  try {
    const { k } = agent('boot-b');
    const name = await waitFor(
      'a pending CSR',
      30_000,
      () =>
        api.store
          .list('certificatesigningrequests')
          .find(
            (c) =>
              !(c.status as { conditions?: unknown[] } | undefined)?.conditions &&
              !api.store.get('nodes', undefined, 'boot-b'),
          )?.metadata?.name as string | undefined,
      100,
    );
    signer.deny(name);
    const code = await new Promise<number | null>((resolve) => k.child.once('exit', (c) => resolve(c)));
    assert.equal(code, 1);
    assert.match(
      readFileSync(k.logFile, 'utf8'),
      /certificate signing request node-csr-\S+ is denied, reason: KubectlDeny/,
    );
  } finally {
    signer.close();
  }
});

test('with --rotate-certificates the agent renews its client certificate and goes on with the new one, no restart', async () => {
  const signer = new CsrSigner(api.store, api.certs, { lifetimeSeconds: 8 });
  try {
    const { k, dir } = agent('boot-c', ['--rotate-certificates', '--node-status-update-frequency=1s']);
    await waitFor('the Node registered', 60_000, () => api.store.get('nodes', undefined, 'boot-c'), 200);
    const current = () =>
      new X509Certificate(
        readFileSync(join(dir, 'pki', 'kubelet-client-current.pem'), 'utf8'),
      ).serialNumber.toUpperCase();
    const first = current();
    // 70-90 % of 13 s (validFrom is 5 s before issue): renewed 4-7 s after the first certificate.
    await waitFor('a renewed certificate', 30_000, () => (current() !== first ? true : undefined), 250);
    const second = current();
    await waitFor(
      'requests with the renewed certificate',
      15_000,
      () =>
        api.users.some((u) => u.name === 'system:node:boot-c' && u.certSerial?.toUpperCase() === second)
          ? true
          : undefined,
      250,
    );
    assert.equal(k.child.exitCode, null, 'the agent kept running');
    assert.match(readFileSync(k.logFile, 'utf8'), /Certificate rotated/);
  } finally {
    signer.close();
  }
});

test('with serverTLSBootstrap the main port serves a kubelet-serving certificate from the CSR API, and its renewals', async () => {
  const signer = new CsrSigner(api.store, api.certs, { lifetimeSeconds: 8, approveServing: true });
  try {
    const { k, dir } = agent('boot-d', [], ['serverTLSBootstrap: true']);
    const stored = () => currentCertSerial(join(dir, 'pki'), 'kubelet-server');
    const first = await waitFor('a serving certificate issued', 60_000, stored, 200);
    const csr = api.store
      .list('certificatesigningrequests')
      .find(
        (c) => (c.spec as { signerName?: string; username?: string }).signerName === 'kubernetes.io/kubelet-serving',
      );
    assert.equal(
      (csr?.spec as { username?: string }).username,
      'system:node:boot-d',
      "requested with the node's own credentials",
    );
    assert.deepEqual((csr?.spec as { usages?: string[] }).usages, ['digital signature', 'server auth']);
    const served = await waitFor(
      'the port serves it',
      15_000,
      async () => ((await servedCertificate(k.port)).serial === first ? servedCertificate(k.port) : undefined),
      200,
    );
    assert.match(served.san, /DNS:boot-d/);
    await waitFor(
      'a renewed serving certificate on the port',
      30_000,
      async () => {
        const now = stored();
        return now && now !== first && (await servedCertificate(k.port)).serial === now ? true : undefined;
      },
      250,
    );
  } finally {
    signer.close();
  }
});
