/**
 * Taking a node over from the upstream kubelet: a pod's sandbox and containers are created
 * directly over CRI exactly as an upstream v1.35 kubelet creates them (its labels, its
 * annotations with its container hash, restart count and grace period, the sandbox attempt, the
 * log paths, the pod cgroup), and the pod's status on the API is the one that kubelet reported.
 * Then our agent starts in API mode and must adopt them: the same sandbox and container IDs,
 * restart counts unchanged, the pod Running. A control container whose hash is that of another
 * image is replaced, which shows the hash is really compared; one created by an earlier
 * kubelet-ts (its old hash) is kept.
 *
 * `every`: the labels and annotations round-trip through each runtime release's CRI.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Container, Pod } from '../../src/api/types.js';
import { connectRuntime, type ContainerConfig, type PodSandboxConfig } from '../../src/cri/index.js';
import { hashContainer, legacyHashContainer } from '../../src/kuberuntime/hash.js';
import { TEST_IMAGES } from '../support/containerd.js';
import { agentTestContext, startKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';
import { startTestApiserver } from '../support/test-apiserver.js';

const NS = `takeover-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const NODE = 'e2e-node';
const POD = 'inherited';
const SLEEPER = ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"];

let kubelet: KubeletProcess | undefined;
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);
const { images } = connectRuntime(endpoint);
const api = await startTestApiserver();

after(async () => {
  await api.stop();
  images.close();
});

const container = (name: string): Container => ({
  name,
  image: TEST_IMAGES.busybox,
  imagePullPolicy: 'IfNotPresent',
  command: SLEEPER,
});

/** How each container was left by the kubelet before us: its restart count and the hash it wrote. */
interface Inherited {
  name: string;
  restartCount: number;
  /** The hash annotation; default: upstream's hash of the spec. */
  hash?: (c: Container) => string;
}

const inherited: Inherited[] = [
  { name: 'app', restartCount: 2 },
  { name: 'side', restartCount: 0 },
  // Created by an earlier kubelet-ts, with its old (pre-upstream) hash.
  { name: 'older', restartCount: 1, hash: legacyHashContainer },
  // The image changed while no kubelet ran: upstream's hash of the old image.
  { name: 'stale', restartCount: 0, hash: (c) => hashContainer({ ...c, image: 'example.com/old/busybox:1.0' }) },
];

/** upstream newPodLabels: the pod's labels and the three identity labels. */
function podLabels(pod: Pod): Record<string, string> {
  const m = pod.metadata!;
  return {
    ...m.labels,
    'io.kubernetes.pod.name': m.name!,
    'io.kubernetes.pod.namespace': m.namespace!,
    'io.kubernetes.pod.uid': m.uid!,
  };
}

/** upstream generatePodSandboxConfig for a BestEffort pod with the cgroupfs driver. */
function sandboxConfig(pod: Pod, attempt: number): PodSandboxConfig {
  const m = pod.metadata!;
  return {
    metadata: { name: m.name!, namespace: m.namespace!, uid: m.uid!, attempt },
    hostname: m.name!,
    // BuildPodLogsDirectory: <podLogsDir>/<namespace>_<name>_<uid>.
    logDirectory: join(dir, 'logs', `${m.namespace}_${m.name}_${m.uid}`),
    dnsConfig: { servers: [], searches: [], options: [] },
    portMappings: [],
    labels: podLabels(pod),
    annotations: { ...m.annotations },
    linux: {
      // GetPodCgroupParent: the pod cgroup under its QoS class, cgroupfs form.
      cgroupParent: `/kubepods/besteffort/pod${m.uid}`,
      securityContext: { namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' }, privileged: false },
    },
  };
}

/** upstream generateContainerConfig's metadata, labels, annotations and log path. */
function containerConfig(pod: Pod, c: Container, was: Inherited, imageRef: string): ContainerConfig {
  const m = pod.metadata!;
  return {
    metadata: { name: c.name, attempt: was.restartCount },
    image: { image: imageRef },
    command: c.command ?? [],
    args: [],
    workingDir: '',
    envs: [],
    mounts: [],
    labels: {
      'io.kubernetes.pod.name': m.name!,
      'io.kubernetes.pod.namespace': m.namespace!,
      'io.kubernetes.pod.uid': m.uid!,
      'io.kubernetes.container.name': c.name,
    },
    annotations: {
      'io.kubernetes.container.hash': (was.hash ?? hashContainer)(c),
      'io.kubernetes.container.restartCount': String(was.restartCount),
      'io.kubernetes.container.terminationMessagePath': c.terminationMessagePath ?? '',
      'io.kubernetes.container.terminationMessagePolicy': c.terminationMessagePolicy ?? '',
      'io.kubernetes.pod.terminationGracePeriod': String(pod.spec!.terminationGracePeriodSeconds),
      'io.kubernetes.container.type': 'container',
    },
    // buildContainerLogsPath: <container>/<restartCount>.log, relative to the log directory.
    logPath: `${c.name}/${was.restartCount}.log`,
  };
}

/** Runs the pod as the kubelet before us left it; returns the sandbox and container IDs. */
async function runAsUpstream(pod: Pod): Promise<{ sandboxId: string; ids: Map<string, string> }> {
  const image = await images.imageStatus(TEST_IMAGES.busybox);
  assert.ok(image, `${TEST_IMAGES.busybox} is in the test containerd`);
  const config = sandboxConfig(pod, 1);
  mkdirSync(config.logDirectory, { recursive: true });
  const sandboxId = await runtime.runPodSandbox(config, '');
  const ids = new Map<string, string>();
  for (const was of inherited) {
    const spec = pod.spec!.containers.find((c) => c.name === was.name)!;
    const id = await runtime.createContainer(sandboxId, containerConfig(pod, spec, was, image.id), config);
    await runtime.startContainer(id);
    ids.set(was.name, id);
  }
  return { sandboxId, ids };
}

/** The status that kubelet last reported (the API keeps it through the switch). */
async function reportAsUpstream(pod: Pod, sandboxIp: string, ids: Map<string, string>): Promise<void> {
  const startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = {
    phase: 'Running',
    hostIP: '127.0.0.1',
    podIP: sandboxIp,
    podIPs: [{ ip: sandboxIp }],
    qosClass: 'BestEffort',
    startTime: startedAt,
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
      (type) => ({ type, status: 'True', lastTransitionTime: startedAt }),
    ),
    containerStatuses: inherited.map((was) => ({
      name: was.name,
      image: TEST_IMAGES.busybox,
      imageID: '',
      containerID: `containerd://${ids.get(was.name)}`,
      restartCount: was.restartCount,
      ready: true,
      started: true,
      state: { running: { startedAt } },
    })),
  };
  const r = await api.call('PUT', `/api/v1/namespaces/${NS}/pods/${POD}/status`, { ...pod, status });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

const storedPod = () => api.store.get('pods', NS, POD) as Pod | undefined;
const statusOf = (p: Pod | undefined, name: string) => p?.status?.containerStatuses?.find((c) => c.name === name);

test('containers the upstream kubelet created are adopted, not restarted', async () => {
  const created = await api.call('POST', `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: POD, namespace: NS, labels: { app: POD } },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 5, containers: inherited.map((c) => container(c.name)) },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // The pod as the apiserver defaulted it: the spec both kubelets hash.
  const pod = storedPod()!;
  const { sandboxId, ids } = await runAsUpstream(pod);
  const ip = (await runtime.podSandboxStatus(sandboxId)).network?.ip ?? '';
  assert.ok(ip, 'the inherited sandbox has an IP');
  await reportAsUpstream(pod, ip, ids);

  kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    extraArgs: [`--kubeconfig=${api.kubeconfig(dir)}`, '--node-status-update-frequency=2s'],
  });
  // The control container is replaced once our agent has synced the pod.
  const replaced = (p: Pod | undefined) => {
    const s = statusOf(p, 'stale');
    return s?.state?.running && s.containerID !== `containerd://${ids.get('stale')}` ? p : undefined;
  };
  const synced = await waitFor('the stale container replaced', 60_000, () => replaced(storedPod()), 250);
  assert.equal(statusOf(synced, 'stale')!.restartCount, 1, 'a restart of the stale container');

  await new Promise((r) => setTimeout(r, 3000)); // a few more sync rounds: nothing else may change
  const p = storedPod()!;
  assert.equal(p.status?.phase, 'Running');
  assert.equal(p.status?.podIP, ip, 'the same pod IP');
  for (const was of inherited.filter((c) => c.name !== 'stale')) {
    const s = statusOf(p, was.name)!;
    assert.equal(s.containerID, `containerd://${ids.get(was.name)}`, `${was.name}: the same container`);
    assert.equal(s.restartCount, was.restartCount, `${was.name}: restart count unchanged`);
    assert.ok(s.state?.running, `${was.name}: running`);
  }
  const sandboxes = await runtime.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': pod.metadata!.uid! } });
  assert.deepEqual(
    sandboxes.map((s) => [s.id, s.state, s.metadata.attempt]),
    [[sandboxId, 'SANDBOX_READY', 1]],
    'no new sandbox',
  );
  const containers = await runtime.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': pod.metadata!.uid! } });
  const running = containers.filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.metadata.name);
  assert.deepEqual(running.sort(), ['app', 'older', 'side', 'stale'], 'one running instance of each');
  assert.equal(containers.length, 5, 'the four inherited containers and the replacement of the stale one');
});
