/**
 * A kubeadm node, its files as kubeadm writes them: the real CLI started with the drop-in's
 * command line (--bootstrap-kubeconfig with a bootstrap token, a --kubeconfig that does not
 * exist yet, --config=config.yaml as kubeadm writes it, kubeadm-flags.env's flags), plus
 * serverTLSBootstrap, against the test apiserver and containerd: it bootstraps its client
 * certificate, registers its Node as system:node:<name>, runs a pod created through the API,
 * rotates its client certificate, and serves the main port with an issued serving certificate.
 * Only what a test must change is changed: paths, ports, the runtime endpoint, and the cgroup
 * driver (see cgroupDriverForTest).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint } from '../support/containerd.js';
import { makeKubeletDirs, startKubelet, stopKubelet, unmountUnder, waitFor, type KubeletProcess } from '../support/kubelet-process.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { writeKubeconfig } from '../support/test-certs.js';
import { CsrSigner } from '../support/csr-signer.js';
import { KUBEADM_CONFIG, KUBEADM_FLAGS_ENV } from '../support/kubeadm-files.js';

const NS = `kubeadm-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const NODE = 'kubeadm-node';
const TOKEN = 'kubead.0123456789abcdef';

const endpoint = await runtimeEndpoint();
const { runtime } = connectRuntime(endpoint);
const { dir, manifests } = makeKubeletDirs();
const api = await startTestApiserver({ bootstrapTokens: [TOKEN] });
// Short lifetimes so a rotation is seen within the test; serving CSRs approved as a cluster's approver would.
const signer = new CsrSigner(api.store, api.certs, { lifetimeSeconds: 20, approveServing: true });
let kubelet: KubeletProcess | undefined;

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  signer.close();
  await api.stop();
  await removeTestPods(runtime, { namespace: NS });
  await unmountUnder(dir);
  runtime.close();
});

/** kubeadm's config.yaml with this test's paths and ports. */
function kubeadmConfig(ports: { port: number; readOnlyPort: number; healthzPort: number }): string {
  return KUBEADM_CONFIG
    .replace('clientCAFile: /etc/kubernetes/pki/ca.crt', `clientCAFile: ${api.certs.caFile}`)
    .replace('staticPodPath: /etc/kubernetes/manifests', `staticPodPath: ${manifests}`)
    .replace('healthzPort: 10248', `healthzPort: ${ports.healthzPort}`)
    .replace('cgroupDriver: systemd', 'cgroupDriver: cgroupfs') // cgroupDriverForTest: the systemd driver needs a running systemd (README)
    + [`port: ${ports.port}`, 'address: 127.0.0.1', `podLogsDir: ${join(dir, 'logs')}`, 'serverTLSBootstrap: true', ''].join('\n');
}

const served = (port: number) => new Promise<string>((resolve, reject) => {
  const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
    const serial = s.getPeerCertificate().serialNumber.toUpperCase();
    s.destroy();
    resolve(serial);
  });
  s.on('error', reject);
});

const pem = (name: string) => {
  try {
    return new X509Certificate(readFileSync(join(dir, 'root', 'pki', `${name}-current.pem`), 'utf8')).serialNumber.toUpperCase();
  } catch {
    return undefined;
  }
};

test('a node with kubeadm\'s files bootstraps, registers, runs an API pod, rotates its certificate and serves an issued one', async () => {
  const bootstrap = writeKubeconfig(join(dir, 'bootstrap-kubelet.conf'), api.url, api.certs.caFile, TOKEN);
  const flagsEnv = KUBEADM_FLAGS_ENV.map((f) => (f.startsWith('--container-runtime-endpoint=') ? `--container-runtime-endpoint=${endpoint}` : f));
  kubelet = startKubelet({
    dir, manifests, endpoint, logLevel: 'info', configText: kubeadmConfig,
    // The drop-in: $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS (--config is added by startKubelet) $KUBELET_KUBEADM_ARGS.
    extraArgs: [`--bootstrap-kubeconfig=${bootstrap}`, `--kubeconfig=${join(dir, 'kubelet.conf')}`, ...flagsEnv, `--hostname-override=${NODE}`, '--node-ip=127.0.0.1'],
  });
  await waitFor('the Node registered', 60_000, () => api.store.get('nodes', undefined, NODE), 250);
  assert.ok(api.users.some((u) => u.name === `system:node:${NODE}`), 'registered with the bootstrapped certificate');
  const firstClient = pem('kubelet-client');
  assert.ok(firstClient);

  const pod = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'hello', namespace: NS },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'localhost/kubelet-ts/busybox:latest', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"] }] },
  } as Pod;
  assert.equal((await api.call('POST', `/api/v1/namespaces/${NS}/pods`, pod)).status, 201);
  await waitFor('the API pod Running', 90_000, () => ((api.store.get('pods', NS, 'hello') as Pod | undefined)?.status?.phase === 'Running' ? true : undefined), 250);

  const serving = await waitFor('an issued serving certificate on the main port', 60_000, async () => {
    const s = pem('kubelet-server');
    return s && (await served(kubelet!.port)) === s ? s : undefined;
  }, 250);
  assert.ok(serving);
  // 70-90 % of 25 s (validFrom is 5 s before issue): renewed 12.5-17.5 s after the first one.
  await waitFor('the client certificate rotated', 60_000, () => (pem('kubelet-client') !== firstClient ? true : undefined), 500);
  const rotated = pem('kubelet-client')!;
  await waitFor('the agent talking with the rotated certificate', 20_000, () => (api.users.some((u) => u.certSerial?.toUpperCase() === rotated) ? true : undefined), 250);
  assert.equal(kubelet.child.exitCode, null, 'no restart');
});
