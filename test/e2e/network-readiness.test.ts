/**
 * A node before its network add-on, as upstream handles it: containerd started with an empty CNI
 * conf dir reports NetworkReady=false. The syncLoop keeps running (upstream gates it on
 * RuntimeReady only): a hostNetwork pod (the DaemonSet that would install the CNI config) runs and
 * is in /pods; a pod on the pod network waits, its syncs failing with upstream's NetworkNotReady
 * Warning ("network is not ready: container runtime network not ready: NetworkReady=false …").
 * Writing the conflist makes the runtime report NetworkReady, and the waiting pod starts.
 * Once running, each pod has the kubelet-managed /etc/hosts (upstream makeHostsMount): the pod
 * network's with its IP, hostname and hostAliases; the node's for the hostNetwork pod. The
 * dnsPolicy Default pod's resolv.conf is the configured resolvConf's (upstream GetPodDNS).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { connectRuntime } from '../../src/cri/index.js';
import { REPO_ROOT, removeTestPods, startNoCniContainerd, TEST_IMAGES } from '../support/containerd.js';
import {
  getPods,
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  unmountUnder,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const NS = `netready-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}`;
const ctr = await startNoCniContainerd(join(REPO_ROOT, '.state', 'no-cni-containerd'));
const { runtime } = connectRuntime(ctr.endpoint);
const { dir, manifests } = makeKubeletDirs();
let kubelet: KubeletProcess | undefined;

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  await removeTestPods(runtime, { namespace: NS }, ctr.endpoint).catch((err: unknown) => console.error(err));
  await unmountUnder(dir);
  runtime.close();
  await ctr.stop();
});

const RESOLV_CONF = join(dir, 'resolv.conf');
writeFileSync(
  RESOLV_CONF,
  '# the node upstream resolver\nnameserver 192.0.2.53\nsearch example.test\noptions ndots:2\n',
);
const ALIASES = [{ ip: '192.0.2.10', hostnames: ['db.example.test', 'db'] }];

function manifest(name: string, hostNetwork: boolean): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      hostNetwork,
      dnsPolicy: 'Default',
      hostAliases: ALIASES,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'c',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
        },
      ],
    },
  });
}

const inPods = async (name: string): Promise<Pod | undefined> =>
  (await getPods(kubelet!)).find((p) => p.metadata?.namespace === NS && p.metadata.name === `${name}-e2e-node`);

const running = async (name: string) => {
  const p = await inPods(name);
  return p?.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running) ? p : undefined;
};

test('NetworkReady=false: hostNetwork pods run, pod-network pods wait with NetworkNotReady, then start', async () => {
  const st = await runtime.status();
  const net = st.conditions.find((c) => c.type === 'NetworkReady');
  assert.equal(net?.status, false, 'the runtime starts without a network');

  writeFileSync(join(manifests, 'hostnet.json'), manifest('hostnet', true));
  writeFileSync(join(manifests, 'podnet.json'), manifest('podnet', false));
  kubelet = startKubelet({ dir, manifests, endpoint: ctr.endpoint, extraConfig: [`resolvConf: ${RESOLV_CONF}`] });

  await waitFor('the hostNetwork pod Running in /pods', 60_000, () => running('hostnet'), 200);
  const waiting = await waitFor('the pod-network pod in /pods', 30_000, () => inPods('podnet'), 200);
  assert.equal(waiting.status?.phase, 'Pending');
  const event = await waitFor(
    'a NetworkNotReady event for the pod-network pod',
    30_000,
    () =>
      readFileSync(kubelet!.logFile, 'utf8')
        .split('\n')
        .find((l) => l.includes('"reason":"NetworkNotReady"') && l.includes(`${NS}/podnet-e2e-node`)),
    200,
  );
  assert.match(event, /"type":"Warning"/);
  assert.match(
    event,
    /"message":"network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:[^"]*cni/,
  );
  const sandboxes = await runtime.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.namespace': NS } });
  assert.deepEqual(
    sandboxes.map((s) => s.metadata?.name),
    ['hostnet-e2e-node'],
    'no sandbox for the pod-network pod while the network is not ready',
  );

  ctr.writeCniConfig();
  // containerd reloads its CNI config; the agent sees NetworkReady at its next status (5 s) and
  // the pod worker retries after its back-off (10 s, jittered).
  const started = await waitFor('the pod-network pod Running', 60_000, () => running('podnet'), 250);
  const podIP = started.status?.podIP;
  assert.ok(podIP && podIP !== started.status?.hostIP, 'the pod has a pod IP');

  const aliasLines = '\n# Entries added by HostAliases.\n192.0.2.10\tdb.example.test\tdb\n';
  assert.equal(
    await readInPod('podnet', ['cat', '/etc/hosts']),
    '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' +
      'fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n' +
      `${podIP}\tpodnet-e2e-node\n${aliasLines}`,
  );
  assert.equal(
    await readInPod('hostnet', ['cat', '/etc/hosts']),
    `# Kubernetes-managed hosts file (host network).\n${readFileSync('/etc/hosts', 'utf8')}${aliasLines}`,
  );
  const resolv = await readInPod('podnet', ['cat', '/etc/resolv.conf']);
  assert.match(resolv, /^nameserver 192\.0\.2\.53$/m);
  assert.match(resolv, /^search example\.test$/m);
  assert.match(resolv, /^options ndots:2$/m);
});

/** Runs a command in the pod's container through the runtime and returns its stdout. */
async function readInPod(name: string, cmd: string[]): Promise<string> {
  const [c] = await runtime.listContainers({
    state: 'CONTAINER_RUNNING',
    labelSelector: { 'io.kubernetes.pod.namespace': NS, 'io.kubernetes.pod.name': `${name}-e2e-node` },
  });
  assert.ok(c, `a running container of ${name}`);
  const r = await runtime.execSync(c.id, cmd, 10);
  assert.equal(r.exitCode, 0, `${cmd.join(' ')} in ${name}: ${Buffer.from(r.stderr).toString()}`);
  return Buffer.from(r.stdout).toString();
}
