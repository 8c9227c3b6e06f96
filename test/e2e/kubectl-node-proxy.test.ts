/**
 * The machine's real kubectl against the test apiserver, which proxies pods/log, pods/exec,
 * pods/attach and pods/portforward to the agent's main port as kube-apiserver does (its kubelet
 * client certificate, the node's InternalIP and kubelet port): `kubectl logs`, `kubectl exec`
 * with stdin and exit codes, and `kubectl port-forward` all work through the agent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { get as httpGet } from 'node:http';
import type { Pod } from '../../src/api/types.js';
import { randomPort, startKubelet, waitFor } from '../support/kubelet-process.js';
import { apiModeE2e } from '../support/api-mode-e2e.js';
import { KUBECTL } from '../support/kubectl.js';

const fx = await apiModeE2e('kubectl');
const { ns: NS, node: NODE, endpoint, dir, manifests, api, kubeconfig, skip } = fx;

const kubectl = fx.kubectl;

test('kubectl logs, exec and port-forward reach the agent through the apiserver', { skip }, async () => {
  fx.kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    extraArgs: [`--kubeconfig=${kubeconfig}`, `--hostname-override=${NODE}`, '--node-ip=127.0.0.1'],
    // The apiserver authenticates to the kubelet with its client certificate (kubeadm's layout).
    extraConfig: [
      `authentication:\n  x509:\n    clientCAFile: ${api.certs.caFile}\n  webhook:\n    enabled: false`,
      'authorization:\n  mode: AlwaysAllow',
    ],
  });
  await waitFor('node registered', 60_000, () => api.store.get('nodes', undefined, NODE), 250);
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: NS },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: 'localhost/kubelet-ts/busybox:latest',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            'echo hello-from-the-log; mkdir -p /www; echo served-by-httpd > /www/index.html; exec httpd -f -p 8080 -h /www',
          ],
        },
      ],
    },
  } as Pod;
  assert.equal((await api.call('POST', `/api/v1/namespaces/${NS}/pods`, pod)).status, 201);
  await waitFor(
    'web Running',
    90_000,
    () =>
      (api.store.get('pods', NS, 'web') as Pod | undefined)?.status?.containerStatuses?.[0]?.state?.running
        ? true
        : undefined,
    250,
  );

  const logs = await kubectl(['logs', 'web']);
  assert.equal(logs.code, 0, logs.stderr);
  assert.match(logs.stdout, /hello-from-the-log/);

  const exec = await kubectl(
    ['exec', '-i', 'web', '--', 'sh', '-c', 'read line; echo "got:$line"; echo oops >&2; exit 3'],
    'ping\n',
  );
  assert.equal(exec.code, 3, `exit code passed through (stderr: ${exec.stderr})`);
  assert.match(exec.stdout, /got:ping/);
  assert.match(exec.stderr, /oops/);

  const localPort = randomPort();
  const pf = spawn(KUBECTL, [`--kubeconfig=${kubeconfig}`, '-n', NS, 'port-forward', 'pod/web', `${localPort}:8080`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let pfOut = '';
  pf.stdout.on('data', (d) => (pfOut += d));
  pf.stderr.on('data', (d) => (pfOut += d));
  try {
    await waitFor('port-forward listening', 30_000, () => (/Forwarding from/.test(pfOut) ? true : undefined), 100);
    const body = await new Promise<string>((resolve, reject) => {
      httpGet({ host: '127.0.0.1', port: localPort, path: '/index.html', timeout: 10_000 }, (res) => {
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => resolve(b));
      }).on('error', reject);
    });
    assert.match(body, /served-by-httpd/, pfOut);
  } finally {
    pf.kill('SIGTERM');
  }
});
