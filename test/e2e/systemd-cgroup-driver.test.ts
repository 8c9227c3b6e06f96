/**
 * The systemd cgroup driver against a real systemd (Debian's, PID 1 of private namespaces:
 * scripts/systemd-node.sh) and a containerd inside it with SystemdCgroup = true, of the release
 * the suite runs now.
 *
 * 1. Standalone, cgroupDriver: systemd: a Burstable static pod gets kubepods.slice,
 *    kubepods-burstable.slice and kubepods-burstable-pod<uid>.slice from systemd with its limits,
 *    runc puts its containers in cri-containerd-<id>.scope below, the Summary API reads them, and
 *    a deleted pod's slice is stopped and its cgroups removed.
 * 2. A kubeadm node, its files unchanged (the drop-in and kubelet.service from deploy/kubeadm,
 *    config.yaml as kubeadm writes it, cgroupDriver: systemd included, kubeadm-flags.env, a
 *    bootstrap kubeconfig with a token) at kubeadm's own paths inside the node, started with
 *    `systemctl start kubelet`: it bootstraps, registers, runs an API pod in its slice, rotates
 *    its client certificate and serves the main port with an issued certificate.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Pod } from '../../src/api/types.js';
import { REPO_ROOT } from '../support/containerd.js';
import { httpGet, randomPort, stopKubelet, waitFor } from '../support/kubelet-process.js';
import { SystemdNode, suiteContainerdVersion } from '../support/systemd-node.js';
import { startTestApiserver, type TestApiserver } from '../support/test-apiserver.js';
import { writeKubeconfig } from '../support/test-certs.js';
import { CsrSigner } from '../support/csr-signer.js';
import { currentCertSerial, servedCertificate } from '../support/pki.js';
import { KUBEADM_CONFIG, KUBEADM_FLAGS_ENV } from '../support/kubeadm-files.js';

const MODE = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
const STATE = join(REPO_ROOT, '.state', `systemd-node-${MODE}`);
const HOST = {
  etcKubernetes: join(STATE, 'etc-kubernetes'),
  varLibKubelet: join(STATE, 'var-lib-kubelet'),
  varLogPods: join(STATE, 'var-log-pods'),
  units: join(STATE, 'etc-systemd-system'),
  standalone: join(STATE, 'standalone'),
};
const NODE_NAME = 'kubeadm-node';
const TOKEN = 'kubead.0123456789abcdef';
const BUSYBOX = 'localhost/kubelet-ts/busybox:latest';
const BUSYBOX_SLEEP = ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"];

let node: SystemdNode | undefined;
let endpoint = '';
let api: TestApiserver | undefined;
let signer: CsrSigner | undefined;
let standalone: { child: ChildProcess; pid: number } | undefined;

before(async () => {
  rmSync(STATE, { recursive: true, force: true });
  for (const d of Object.values(HOST)) mkdirSync(d, { recursive: true });
  mkdirSync(join(HOST.units, 'kubelet.service.d'));
  copyFileSync(join(REPO_ROOT, 'deploy', 'kubeadm', 'kubelet.service'), join(HOST.units, 'kubelet.service'));
  copyFileSync(
    join(REPO_ROOT, 'deploy', 'kubeadm', '10-kubeadm.conf'),
    join(HOST.units, 'kubelet.service.d', '10-kubeadm.conf'),
  );
  // The test's own drop-in: the node has no journal, so the agent's output goes to a file; and the
  // suite's implementation choice (KUBELET_TS_NATIVE) reaches the service.
  writeFileSync(
    join(HOST.units, 'kubelet.service.d', '90-test.conf'),
    [
      '[Service]',
      'StandardOutput=append:/var/lib/kubelet/kubelet.log',
      'StandardError=append:/var/lib/kubelet/kubelet.log',
      `Environment=KUBELET_TS_NATIVE=${process.env.KUBELET_TS_NATIVE ?? '1'}`,
      '',
    ].join('\n'),
  );
  node = await SystemdNode.start({
    stateDir: join(STATE, 'node'),
    hostname: NODE_NAME,
    binds: [
      [HOST.etcKubernetes, '/etc/kubernetes'],
      [HOST.varLibKubelet, '/var/lib/kubelet'],
      [HOST.varLogPods, '/var/log/pods'],
      [HOST.units, '/etc/systemd/system'],
      [REPO_ROOT, '/opt/kubelet-ts'],
    ],
  });
  endpoint = await node.startContainerd(
    suiteContainerdVersion(),
    MODE === 'ts' ? 'kts8' : 'kts9',
    MODE === 'ts' ? '10.86.0.0/16' : '10.87.0.0/16',
  );
  // kubeadm-flags.env names containerd's usual socket: inside the node, /run is the node's own.
  mkdirSync(join(STATE, 'node', 'run', 'containerd'), { recursive: true });
  symlinkSync(endpoint.replace('unix://', ''), join(STATE, 'node', 'run', 'containerd', 'containerd.sock'));
});

after(async () => {
  // Each step whatever the one before did: the node must stop (it holds processes and mounts).
  const step = (what: string) => (err: unknown) => console.error(`after: ${what} failed`, err);
  if (standalone) await stopKubelet(standalone).catch(step('stopping the standalone agent'));
  await node?.systemctl('stop', 'kubelet').catch(() => undefined);
  signer?.close();
  await api?.stop().catch(step('stopping the apiserver'));
  await node?.stop();
});

const sliceOf = (qos: string, uid: string) => `kubepods-${qos}-pod${uid.replace(/-/g, '_')}.slice`;

test('cgroupDriver systemd: pod slices from systemd with their limits, containers in scopes below, stats, removal', async () => {
  const port = randomPort();
  const readOnlyPort = randomPort();
  const manifests = join(HOST.standalone, 'manifests');
  mkdirSync(manifests, { recursive: true });
  writeFileSync(
    join(HOST.standalone, 'config.yaml'),
    [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      'cgroupDriver: systemd',
      `staticPodPath: ${manifests}`,
      `containerRuntimeEndpoint: ${endpoint}`,
      `readOnlyPort: ${readOnlyPort}`,
      `port: ${port}`,
      'address: 127.0.0.1',
      `healthzPort: ${randomPort()}`,
      `podLogsDir: ${join(HOST.standalone, 'logs')}`,
      'fileCheckFrequency: 20s',
      'failCgroupV1: false',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(manifests, 'web.yaml'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: BUSYBOX,
            imagePullPolicy: 'IfNotPresent',
            command: BUSYBOX_SLEEP,
            resources: { requests: { cpu: '100m' }, limits: { memory: '64Mi' } },
          },
        ],
      },
    }),
  );
  standalone = await node!.spawn(
    [
      join(REPO_ROOT, 'bin', 'kubelet-ts.js'),
      `--config=${join(HOST.standalone, 'config.yaml')}`,
      `--root-dir=${join(HOST.standalone, 'root')}`,
      '--hostname-override=sd-node',
    ],
    'kubelet-ts-standalone',
    join(HOST.standalone, 'kubelet.log'),
  );

  const pod = await waitFor(
    'the static pod Running',
    60_000,
    async () => {
      const r = await httpGet(readOnlyPort, '/pods').catch(() => undefined);
      const p = r?.status === 200 ? (JSON.parse(r.body).items as Pod[])[0] : undefined;
      return p?.status?.phase === 'Running' ? p : undefined;
    },
    250,
  );
  const uid = pod.metadata!.uid!;
  const slice = sliceOf('burstable', uid);
  const path = `/kubepods.slice/kubepods-burstable.slice/${slice}`;
  // systemd made the slices and holds the pod's limits (102 shares for 100m, 64 MiB).
  for (const unit of ['kubepods.slice', 'kubepods-burstable.slice', 'kubepods-besteffort.slice', slice])
    assert.equal(await node!.unitProperty(unit, 'ActiveState'), 'active', unit);
  assert.equal(await node!.unitProperty(slice, 'ControlGroup'), path);
  assert.equal(await node!.unitProperty(slice, 'CPUShares'), '102');
  assert.equal(await node!.unitProperty(slice, 'MemoryLimit'), String(64 * 2 ** 20));
  assert.equal(
    readFileSync(join(node!.cgroupRoot('memory'), path, 'memory.limit_in_bytes'), 'utf8').trim(),
    String(64 * 2 ** 20),
  );
  // runc (SystemdCgroup = true) put the container in its scope under the pod's slice.
  const id = pod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
  assert.equal(await node!.unitProperty(`cri-containerd-${id}.scope`, 'Slice'), slice);
  assert.ok(existsSync(join(node!.cgroupRoot('cpu'), path, `cri-containerd-${id}.scope`)));

  const summary = await waitFor(
    'the pod in the Summary API',
    30_000,
    async () => {
      const r = await httpGet(readOnlyPort, '/stats/summary');
      const s = JSON.parse(r.body) as {
        pods: Array<{
          podRef: { uid: string };
          memory?: { workingSetBytes?: number };
          containers: Array<{
            name: string;
            memory?: { workingSetBytes?: number };
            cpu?: { usageCoreNanoSeconds?: number };
          }>;
        }>;
      };
      const p = s.pods.find((x) => x.podRef.uid === uid);
      return p && p.containers.length === 1 && (p.containers[0]!.cpu?.usageCoreNanoSeconds ?? 0) > 0 ? p : undefined;
    },
    500,
  );
  assert.ok((summary.memory?.workingSetBytes ?? 0) > 0, 'pod memory from its slice');
  assert.ok((summary.containers[0]!.memory?.workingSetBytes ?? 0) > 0, 'container memory from its scope');

  // A deleted pod: its containers stop, then (housekeeping, every 2 s) its slice is stopped.
  rmSync(join(manifests, 'web.yaml'));
  await waitFor(
    'the pod slice stopped and its cgroups removed',
    30_000,
    async () => {
      const state = await node!.unitProperty(slice, 'ActiveState');
      return state === 'inactive' &&
        !existsSync(join(node!.cgroupRoot('cpu'), path)) &&
        !existsSync(join(node!.cgroupRoot('memory'), path))
        ? true
        : undefined;
    },
    1000,
  );
  assert.equal(standalone.child.exitCode, null, 'the agent still runs');
  await stopKubelet(standalone);
  standalone = undefined;
});

test('a kubeadm node, its files unchanged (cgroupDriver: systemd), under systemd: bootstrap, register, API pod in its slice, rotation, issued serving certificate', async () => {
  api = await startTestApiserver({ bootstrapTokens: [TOKEN] });
  // Short lifetimes so a rotation is seen within the test; serving CSRs approved as a cluster's approver would.
  signer = new CsrSigner(api.store, api.certs, { lifetimeSeconds: 20, approveServing: true });
  mkdirSync(join(HOST.etcKubernetes, 'pki'), { recursive: true });
  mkdirSync(join(HOST.etcKubernetes, 'manifests'), { recursive: true });
  copyFileSync(api.certs.caFile, join(HOST.etcKubernetes, 'pki', 'ca.crt'));
  writeKubeconfig(join(HOST.etcKubernetes, 'bootstrap-kubelet.conf'), api.url, '/etc/kubernetes/pki/ca.crt', TOKEN);
  // kubeadm's config.yaml; serverTLSBootstrap is what a cluster that wants issued serving certificates sets in it.
  writeFileSync(join(HOST.varLibKubelet, 'config.yaml'), `${KUBEADM_CONFIG}serverTLSBootstrap: true\n`);
  writeFileSync(
    join(HOST.varLibKubelet, 'kubeadm-flags.env'),
    `KUBELET_KUBEADM_ARGS="${KUBEADM_FLAGS_ENV.join(' ')}"\n`,
  );
  await node!.systemctl('start', 'kubelet');
  const mainPid = await node!.unitProperty('kubelet', 'MainPID');

  const pem = (name: 'kubelet-client' | 'kubelet-server') => currentCertSerial(join(HOST.varLibKubelet, 'pki'), name);
  const diagnose = () =>
    readFileSync(join(HOST.varLibKubelet, 'kubelet.log'), 'utf8').split('\n').slice(-20).join('\n');
  await waitFor('the Node registered', 60_000, () => api!.store.get('nodes', undefined, NODE_NAME), 250).catch(
    (err: unknown) => {
      throw new Error(`${String(err)}\n${diagnose()}`);
    },
  );
  assert.ok(
    api.users.some((u) => u.name === `system:node:${NODE_NAME}`),
    'registered with the bootstrapped certificate',
  );
  const firstClient = pem('kubelet-client');
  assert.ok(firstClient);

  const NS = `kubeadm-${MODE}`;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'hello', namespace: NS },
    spec: {
      nodeName: NODE_NAME,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: BUSYBOX_SLEEP }],
    },
  } as Pod;
  assert.equal((await api.call('POST', `/api/v1/namespaces/${NS}/pods`, pod)).status, 201);
  const running = await waitFor(
    'the API pod Running',
    90_000,
    () => {
      const p = api!.store.get('pods', NS, 'hello') as Pod | undefined;
      return p?.status?.phase === 'Running' ? p : undefined;
    },
    250,
  );
  assert.equal(
    await node!.unitProperty(sliceOf('besteffort', running.metadata!.uid!), 'ActiveState'),
    'active',
    "the pod's slice",
  );

  // kubeadm's config sets no port: the main port is upstream's default 10250.
  await waitFor(
    'an issued serving certificate on the main port',
    60_000,
    async () => {
      const s = pem('kubelet-server');
      return s && (await servedCertificate(10250)).serial === s ? s : undefined;
    },
    250,
  );
  // 70-90 % of 25 s (validFrom is 5 s before issue): renewed 12.5-17.5 s after the first one.
  await waitFor(
    'the client certificate rotated',
    60_000,
    () => (pem('kubelet-client') !== firstClient ? true : undefined),
    500,
  );
  const rotated = pem('kubelet-client')!;
  await waitFor(
    'the agent talking with the rotated certificate',
    20_000,
    () => (api!.users.some((u) => u.certSerial?.toUpperCase() === rotated) ? true : undefined),
    250,
  );
  assert.equal(await node!.unitProperty('kubelet', 'MainPID'), mainPid, 'no restart');
  assert.equal(await node!.unitProperty('kubelet', 'NRestarts'), '0');
});
