/**
 * Device plugins end to end (issue 31): the real agent, the test device plugin as a process of its
 * own (test/support/device-plugin*.ts) registering on <root-dir>/device-plugins/kubelet.sock, the
 * leg's containerd, and a pod resources API client on <root-dir>/pod-resources/kubelet.sock.
 *
 * Standalone (one agent, static pods): the plugin registers and its devices are allocatable (the
 * pod resources API: standalone has no Node object); a pod asking for one device runs with it; a
 * pod asking for N+1 is refused (UnexpectedAdmissionError, upstream's message).
 *
 * API server mode, in order on one agent (restarted once):
 * - capacity and allocatable = N on the Node; the plugin saw GetDevicePluginOptions, then
 *   ListAndWatch, then Allocate;
 * - a pod asking for one device: its node at /dev/kts0, the env and the read-only mount;
 * - List, Get and GetAllocatableResources name the pod's device;
 * - the agent restarted with the pod running: not restarted, the checkpoint unchanged, a second
 *   pod gets another device;
 * - CDI: on 1.7 and 2.x (CDI on in scripts/containerd.sh) the CDI-named device is injected from
 *   the spec the plugin writes into the daemon's cdi_spec_dirs; on 1.6 (no CDI) the container is
 *   refused with CreateContainerConfigError instead of starting without its device;
 * - N+1 refused; a health flip lowers allocatable, not capacity; the plugin gone: allocatable 0,
 *   then capacity 0 after the grace (shortened with KUBELET_TS_TEST_DEVICE_PLUGIN_STOP_GRACE), a
 *   new pod refused, the running pods untouched; the plugin back: its devices again.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { apiModeE2e } from '../support/api-mode-e2e.js';
import { cdiSpecDir, runtimeRelease, TEST_IMAGES, uniqueName } from '../support/containerd.js';
import { readCallLog } from '../support/csi-driver.js';
import { spawnDevicePlugin, type DevicePluginProcess } from '../support/device-plugin-process.js';
import type { TestDevice } from '../support/device-plugin-state.js';
import {
  agentTestContext,
  getPods,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { podResourcesClient, podResourcesSocket, type PodResourcesClient } from '../support/pod-resources-client.js';

const RESOURCE = 'kubelet-ts.test/dev';
const DEVICES: TestDevice[] = [
  { id: 'd0', kind: 'null' },
  { id: 'd1', kind: 'zero' },
  { id: 'd2', kind: 'null' },
];
const N = DEVICES.length;
// Read by the agents this file starts (their env is ours): upstream's 5 minutes would not fit.
process.env.KUBELET_TS_TEST_DEVICE_PLUGIN_STOP_GRACE = '3s';
const POD_MS = 60_000;
const STATUS_MS = 20_000;

/** The test device plugin of one agent: its state dir, restartable, its calls. */
class Plugin {
  proc: DevicePluginProcess | undefined;
  constructor(
    readonly rootDir: string,
    readonly stateDir: string,
  ) {
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(join(stateDir, 'devices.json'), JSON.stringify(DEVICES));
  }
  /** Starts it once the agent serves kubelet.sock (it registers right away). */
  async start(): Promise<void> {
    const pluginDir = join(this.rootDir, 'device-plugins');
    await waitFor('kubelet.sock', STATUS_MS, () => (existsSync(join(pluginDir, 'kubelet.sock')) ? true : undefined));
    this.proc = await spawnDevicePlugin({ resourceName: RESOURCE, pluginDir, stateDir: this.stateDir });
  }
  async stop(): Promise<void> {
    await this.proc?.stop();
    this.proc = undefined;
  }
  calls = () => readCallLog(join(this.stateDir, 'calls.jsonl'));
  registered = () => this.calls().filter((c) => c.method === 'Register' && c.code === 0).length;
  setDevices = (devices: TestDevice[]) => writeFileSync(join(this.stateDir, 'devices.json'), JSON.stringify(devices));
  setOptions = (o: object) => writeFileSync(join(this.stateDir, 'options.json'), JSON.stringify(o));
}

const sleepCmd = ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"];

function devicePod(ns: string, name: string, count: number, nodeName?: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: sleepCmd,
          resources: { limits: { [RESOURCE]: String(count) } },
        },
      ],
    },
  } as unknown as Pod;
}

const isRunning = (p: Pod | undefined) =>
  p?.status?.phase === 'Running' && !!p.status.containerStatuses?.[0]?.state?.running;
const containerId = (p: Pod) => p.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');

/** The admission refusal of N+1 devices: upstream's allocator error through GetPodAdmitResult. */
const OVER_ASK = new RegExp(
  `^Pod was rejected: Allocate failed due to requested number of devices unavailable for ${RESOURCE.replace('.', '\\.')}\\. ` +
    `Requested: ${N + 1}, Available: \\d+, which is unexpected$`,
);

function assertRefused(p: Pod): void {
  assert.equal(p.status?.reason, 'UnexpectedAdmissionError', JSON.stringify(p.status));
  assert.match(p.status?.message ?? '', OVER_ASK);
  assert.equal(p.status?.containerStatuses?.[0]?.state?.running, undefined, 'never started');
}

/** Checks the device, env and mount inside the pod's container; returns the device ID it got. */
async function checkInside(
  runtime: {
    execSync(id: string, cmd: string[], t: number): Promise<{ exitCode: number; stdout: Buffer; stderr: Buffer }>;
  },
  pod: Pod,
): Promise<string> {
  const script = 'test -c /dev/kts0 && echo x >/dev/kts0 && echo "$KTS_DEVICES" && cat /kts-share/resource';
  const r = await runtime.execSync(containerId(pod), ['sh', '-c', script], 10);
  if (r.exitCode !== 0) {
    const seen = await runtime.execSync(containerId(pod), ['sh', '-c', 'ls -l /dev /kts-share; env'], 10);
    assert.fail(`${script}: exit ${r.exitCode} ${r.stderr.toString()}; in the container: ${seen.stdout.toString()}`);
  }
  const [ids, resource] = r.stdout.toString().trim().split('\n');
  assert.equal(resource, RESOURCE, 'the plugin mount at /kts-share');
  assert.match(ids ?? '', /^d[0-2]$/, 'one device in KTS_DEVICES');
  return ids!;
}

/** The pod's devices as the pod resources API lists them (one entry per device ID, as upstream). */
const idsOf = (pr: { containers: { devices: { resourceName: string; deviceIds: string[] }[] }[] } | undefined) =>
  (pr?.containers ?? []).flatMap((c) =>
    c.devices.filter((d) => d.resourceName === RESOURCE).flatMap((d) => d.deviceIds),
  );

// ---------------------------------------------------------------------------------------------
// Standalone mode.

const SA_NS = uniqueName('kts-dp-sa');
let saKubelet: KubeletProcess | undefined;
const sa = await agentTestContext(SA_NS, () => saKubelet);
const saPlugin = new Plugin(join(sa.dir, 'root'), join(sa.dir, 'dp-state'));
let saClient: PodResourcesClient | undefined;
after(async () => {
  saClient?.close();
  await saPlugin.stop();
});

const staticPod = async (name: string) =>
  (await getPods(saKubelet!)).find((p) => p.metadata?.name === `${name}-e2e-node`);

test('standalone: registered devices are allocatable, a pod gets one, N+1 is refused', async () => {
  saKubelet = startKubelet({ dir: sa.dir, manifests: sa.manifests, endpoint: sa.endpoint });
  await saPlugin.start();
  saClient = podResourcesClient(podResourcesSocket(join(sa.dir, 'root')));
  const allocatable = await waitFor('N allocatable devices', STATUS_MS, async () => {
    const ids = (await saClient!.allocatable()).filter((d) => d.resourceName === RESOURCE).flatMap((d) => d.deviceIds);
    return ids.length === N ? ids.sort() : undefined;
  });
  assert.deepEqual(allocatable, ['d0', 'd1', 'd2']);

  writeFileSync(join(sa.manifests, 'one.json'), JSON.stringify(devicePod(SA_NS, 'one', 1)));
  writeFileSync(join(sa.manifests, 'greedy.json'), JSON.stringify(devicePod(SA_NS, 'greedy', N + 1)));
  const one = await waitFor(
    'static pod one running',
    POD_MS,
    async () => {
      const p = await staticPod('one');
      return isRunning(p) ? p : undefined;
    },
    200,
  );
  const id = await checkInside(sa.runtime, one);
  const greedy = await waitFor(
    'static pod greedy refused',
    POD_MS,
    async () => {
      const p = await staticPod('greedy');
      return p?.status?.phase === 'Failed' ? p : undefined;
    },
    200,
  );
  assertRefused(greedy);
  const listed = (await saClient.list()).find((p) => p.name === 'one-e2e-node' && p.namespace === SA_NS);
  assert.deepEqual(idsOf(listed), [id], 'List names the static pod and its device');
  await stopKubelet(saKubelet);
  await saPlugin.stop();
});

// ---------------------------------------------------------------------------------------------
// API server mode.

const fx = await apiModeE2e('kts-dp');
const rootDir = join(fx.dir, 'root');
const plugin = new Plugin(rootDir, join(fx.dir, 'dp-state'));
let client: PodResourcesClient | undefined;
after(async () => {
  client?.close();
  await plugin.stop();
});
const checkpointPath = join(rootDir, 'device-plugins', 'kubelet_internal_checkpoint');
/** Device IDs by pod name, as the tests learn them. */
const got: Record<string, string> = {};

function startAgent(): void {
  fx.kubelet = startKubelet({
    dir: fx.dir,
    manifests: fx.manifests,
    endpoint: fx.endpoint,
    extraArgs: [
      `--kubeconfig=${fx.kubeconfig}`,
      `--hostname-override=${fx.node}`,
      '--node-ip=127.0.0.1',
      '--node-status-update-frequency=1s',
    ],
  });
}

type NodeResources = { capacity?: Record<string, string>; allocatable?: Record<string, string> };
const nodeStatus = () => (fx.api.store.get('nodes', undefined, fx.node)?.status ?? {}) as NodeResources;

/** Waits until the Node shows `capacity` and `allocatable` of the resource ('0' also matches absent allocatable). */
async function waitNode(capacity: number, allocatable: number): Promise<void> {
  await waitFor(
    `node ${RESOURCE} capacity ${capacity}, allocatable ${allocatable}`,
    STATUS_MS,
    () => {
      const s = nodeStatus();
      const alloc = s.allocatable?.[RESOURCE] ?? (allocatable === 0 ? '0' : undefined);
      return s.capacity?.[RESOURCE] === String(capacity) && alloc === String(allocatable) ? true : undefined;
    },
    200,
  ).catch((err: unknown) => {
    throw new Error(
      `${String(err)}; node status: ${JSON.stringify({ c: nodeStatus().capacity, a: nodeStatus().allocatable })}`,
    );
  });
}

const getPod = (name: string) => fx.api.store.get('pods', fx.ns, name) as Pod | undefined;

async function createPod(name: string, count: number): Promise<void> {
  const r = await fx.api.call('POST', `/api/v1/namespaces/${fx.ns}/pods`, devicePod(fx.ns, name, count, fx.node));
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

const waitRunning = (name: string) =>
  waitFor(`pod ${name} running`, POD_MS, () => (isRunning(getPod(name)) ? getPod(name) : undefined), 200);
const waitFailed = (name: string) =>
  waitFor(
    `pod ${name} Failed`,
    POD_MS,
    () => (getPod(name)?.status?.phase === 'Failed' ? getPod(name) : undefined),
    200,
  );

test('API server mode: the plugin registers, capacity and allocatable are N on the Node', async () => {
  startAgent();
  await plugin.start();
  await waitNode(N, N);
  client = podResourcesClient(podResourcesSocket(rootDir));
});

test('a pod asking for one device runs with its node, env and mount; Options, ListAndWatch, Allocate in order', async () => {
  await createPod('one', 1);
  got.one = await checkInside(fx.runtime, await waitRunning('one'));
  const methods = plugin.calls().map((c) => c.method);
  const first = (m: string) => methods.indexOf(m);
  assert.ok(first('GetDevicePluginOptions') >= 0, methods.join(' '));
  assert.ok(first('GetDevicePluginOptions') < first('ListAndWatch'), methods.join(' '));
  assert.ok(first('ListAndWatch') < first('Allocate'), methods.join(' '));
});

test('the pod resources API names the running pod and its device', async () => {
  const listed = (await client!.list()).find((p) => p.name === 'one' && p.namespace === fx.ns);
  assert.deepEqual(idsOf(listed), [got.one]);
  assert.deepEqual(
    listed?.containers.map((c) => c.name),
    ['main'],
  );
  assert.deepEqual(idsOf(await client!.get('one', fx.ns)), [got.one]);
  const all = (await client!.allocatable()).filter((d) => d.resourceName === RESOURCE).flatMap((d) => d.deviceIds);
  assert.deepEqual(all.sort(), ['d0', 'd1', 'd2'], 'every healthy device');
  await assert.rejects(client!.get('nope', fx.ns), /pod nope in namespace .* not found/);
});

test('agent restart with the pod running: not restarted, checkpoint unchanged, the next pod gets another device', async () => {
  const before = readFileSync(checkpointPath, 'utf8');
  const running = getPod('one')!;
  const registered = plugin.registered();
  await stopKubelet(fx.kubelet!);
  startAgent();
  // The plugin sees kubelet.sock made again and registers again by itself.
  await waitFor('the plugin registered again', STATUS_MS, () => (plugin.registered() > registered ? true : undefined));
  // Its first list reached the device manager (the Node may still show the old agent's status).
  await waitFor('N allocatable devices again', STATUS_MS, async () =>
    (await client!.allocatable()).filter((d) => d.resourceName === RESOURCE).length === N ? true : undefined,
  );
  await waitNode(N, N);
  const after1 = getPod('one')!;
  assert.equal(containerId(after1), containerId(running), 'same container');
  assert.equal(after1.status?.containerStatuses?.[0]?.restartCount, 0);
  const cp = (s: string) => JSON.parse(s) as { Data: unknown; Checksum: number };
  assert.deepEqual(cp(readFileSync(checkpointPath, 'utf8')), cp(before), 'checkpoint unchanged');
  await createPod('two', 1);
  got.two = await checkInside(fx.runtime, await waitRunning('two'));
  assert.notEqual(got.two, got.one, 'not the device pod one holds');
  const entries = (cp(readFileSync(checkpointPath, 'utf8')).Data as { PodDeviceEntries: unknown[] }).PodDeviceEntries;
  assert.equal(entries.length, 2, 'both pods in the checkpoint');
});

test('CDI names: injected on 1.7 and 2.x, refused on 1.6 (no CDI) with CreateContainerConfigError', async () => {
  const [major, minor] = await runtimeRelease(fx.runtime);
  const hasCdi = major > 1 || minor >= 7;
  const specDir = cdiSpecDir(fx.endpoint);
  const support = await fx.runtime.cdiSupport();
  assert.equal(support.enabled, hasCdi, 'the runtime reports CDI as scripts/containerd.sh configured it');
  if (hasCdi) assert.deepEqual(support.specDirs, [specDir]);
  plugin.setOptions({ cdi: true, cdiSpecDir: specDir ?? join(fx.dir, 'cdi-unused') });
  try {
    await createPod('cdi', 1);
    if (hasCdi) {
      const p = await waitRunning('cdi');
      const id = await checkInside(fx.runtime, p);
      const r = await fx.runtime.execSync(containerId(p), ['sh', '-c', `test -c /dev/kts-cdi-${id}`], 10);
      assert.equal(r.exitCode, 0, `the CDI device /dev/kts-cdi-${id} injected by the runtime`);
      return;
    }
    const waiting = await waitFor(
      'cdi CreateContainerConfigError',
      POD_MS,
      () => {
        const w = getPod('cdi')?.status?.containerStatuses?.[0]?.state?.waiting;
        return w?.reason === 'CreateContainerConfigError' ? w : undefined;
      },
      200,
    );
    assert.match(waiting.message ?? '', /kubelet-ts\.test\/dev=d\d/);
    assert.match(waiting.message ?? '', /does not apply CDI devices/);
  } finally {
    plugin.setOptions({});
  }
});

test('N+1 devices are refused: UnexpectedAdmissionError with upstream message', async () => {
  await createPod('greedy', N + 1);
  assertRefused(await waitFailed('greedy'));
});

test('health flip: allocatable drops, capacity stays', async () => {
  plugin.setDevices(DEVICES.map((d) => (d.id === 'd2' ? { ...d, health: 'Unhealthy' } : d)));
  await waitNode(N, N - 1);
  const all = (await client!.allocatable()).filter((d) => d.resourceName === RESOURCE).flatMap((d) => d.deviceIds);
  assert.deepEqual(all.sort(), ['d0', 'd1']);
});

test('the plugin gone: allocatable 0, capacity 0 after the grace, new pods refused; back: its devices again', async () => {
  await plugin.stop();
  await waitNode(N, 0);
  await waitNode(0, 0);
  await createPod('late', 1);
  const late = await waitFailed('late');
  assert.match(late.status?.reason ?? '', /^(UnexpectedAdmissionError|OutOfkubelet-ts\.test\/dev)$/);
  assert.ok(isRunning(getPod('one')) && isRunning(getPod('two')), 'the running pods keep running');
  await plugin.start();
  await waitNode(N, N - 1);
});
