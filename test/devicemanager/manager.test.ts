/**
 * The device manager over real gRPC: an in-test plugin on a unix socket in a temp dir registers on
 * kubelet.sock. Mirrors upstream pkg/kubelet/cm/devicemanager/manager_test.go; each table or test
 * names the upstream test it follows.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { Container, Pod } from '../../src/api/types.js';
import { hotPaths } from '../../src/cmd/hot-paths.js';
import { ManagerImpl } from '../../src/devicemanager/manager.js';
import type { PluginClient } from '../../src/devicemanager/plugin-client.js';
import { registry } from '../../src/metrics/index.js';
import { DEVICE_PLUGIN, PluginManager } from '../../src/pluginmanager/index.js';
import { testTempDir } from '../support/temp-dir.js';
import { MiniPlugin, type MiniPluginOptions } from './mini-plugin.js';

const RES = 'example.com/dev';
const GRACE = 5 * 60_000;

const plugins: MiniPlugin[] = [];
const managers: ManagerImpl[] = [];
afterEach(async () => {
  for (const p of plugins.splice(0)) await p.stop();
  for (const m of managers.splice(0)) await m.stop();
});

async function sample(name: string, labels: Record<string, string>, suffix = ''): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  const v = m.values.find(
    (x) =>
      ((x as { metricName?: string }).metricName ?? name) === name + suffix &&
      Object.entries(labels).every(([k, want]) => x.labels[k] === want),
  );
  return v?.value ?? 0;
}

async function waitFor(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Harness {
  m: ManagerImpl;
  dir: string;
  clock: { t: number };
  pods: Pod[];
}

async function harness(rootDir = testTempDir('dm-'), pods: Pod[] = []): Promise<Harness> {
  const clock = { t: 1_000_000 };
  const m = new ManagerImpl({ rootDir, now: () => clock.t, dialTimeoutMs: 2000 });
  managers.push(m);
  await m.start({ activePods: () => pods, sourcesReady: () => true });
  return { m, dir: m.dir, clock, pods };
}

async function plugin(h: Harness, opts: Partial<MiniPluginOptions> & { endpoint: string }): Promise<MiniPlugin> {
  const p = await MiniPlugin.start({ dir: h.dir, devices: [], ...opts });
  plugins.push(p);
  return p;
}

const capOf = (h: Harness): [number | undefined, number | undefined] => {
  const c = h.m.getCapacity();
  return [c.capacity[RES], c.allocatable[RES]];
};

function pod(uid: string, containers: Array<[string, number]>, init: Array<[string, number, boolean?]> = []): Pod {
  const c = ([name, n]: [string, number]): Container => ({ name, resources: { limits: { [RES]: String(n) } } });
  return {
    metadata: { uid, name: uid, namespace: 'default' },
    spec: {
      containers: containers.map(c),
      initContainers: init.map(([name, n, sidecar]) => ({
        ...c([name, n]),
        ...(sidecar ? { restartPolicy: 'Always' } : {}),
      })),
    },
  };
}

describe('registration (upstream plugin/v1beta1 server_test.go, manager_test.go)', () => {
  it('refuses an unsupported version and an invalid resource name with upstream texts', async () => {
    const h = await harness();
    const p = await plugin(h, { endpoint: 'p.sock' });
    await assert.rejects(p.register(RES, 'v1alpha1'), {
      message: 'requested API version "v1alpha1" is not supported by kubelet. Supported version is ["v1beta1"]',
    });
    await assert.rejects(p.register('cpu'), { message: 'the ResourceName "cpu" is invalid' });
    await assert.rejects(p.register('kubernetes.io/dev'), {
      message: 'the ResourceName "kubernetes.io/dev" is invalid',
    });
    assert.deepEqual(h.m.getCapacity(), { capacity: {}, allocatable: {}, removed: [] });
  });

  it('kubelet_device_plugin_registration_total counts every Register, refused ones too', async () => {
    const h = await harness();
    const p = await plugin(h, { endpoint: 'p.sock', devices: [['d1', 'Healthy']] });
    const before = await sample('kubelet_device_plugin_registration_total', { resource_name: 'metrics.io/x' });
    await assert.rejects(p.register('metrics.io/x', 'v0'));
    await p.register('metrics.io/x');
    assert.equal(
      await sample('kubelet_device_plugin_registration_total', { resource_name: 'metrics.io/x' }),
      before + 2,
    );
  });

  it('refuses a plugin whose socket does not serve (the dial fails)', async () => {
    const h = await harness();
    const p = await plugin(h, { endpoint: 'p.sock' });
    await p.stop();
    await assert.rejects(p.register(RES), /failed to dial device plugin/);
  });

  it('removes stale sockets at start, keeps the checkpoint, other files and directories', async () => {
    const root = testTempDir('dm-');
    const dir = join(root, 'device-plugins');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'DEPRECATION'), '');
    const stale = createServer().listen(join(dir, 'stale.sock'));
    await new Promise((r) => stale.once('listening', r));
    stale.close();
    writeFileSync(join(dir, 'stale2.sock'), ''); // a plain file named .sock is not a socket
    await harness(root);
    assert.equal(existsSync(join(dir, 'stale.sock')), false);
    assert.equal(existsSync(join(dir, 'stale2.sock')), true);
    assert.equal(existsSync(join(dir, 'sub')), true);
    assert.equal(existsSync(join(dir, 'kubelet.sock')), true);
  });

  it('TestDevicePluginReRegistration: 2 devices, same 2 again, then 1 other device gives 1/1', async () => {
    const h = await harness();
    const p1 = await plugin(h, {
      endpoint: 'p1.sock',
      devices: [
        ['d1', 'Healthy'],
        ['d2', 'Healthy'],
      ],
    });
    await p1.register(RES);
    await waitFor(() => capOf(h)[0] === 2, 'first plugin devices');
    const p2 = await plugin(h, {
      endpoint: 'p2.sock',
      devices: [
        ['d1', 'Healthy'],
        ['d2', 'Healthy'],
      ],
    });
    await p2.register(RES);
    await waitFor(() => p2.calls.some((c) => c.method === 'ListAndWatch'), 'second stream');
    assert.deepEqual(capOf(h), [2, 2]);
    const p3 = await plugin(h, { endpoint: 'p3.sock', devices: [['d3', 'Healthy']] });
    await p3.register(RES);
    await waitFor(() => capOf(h)[0] === 1, 'third plugin list');
    assert.deepEqual(capOf(h), [1, 1]);
    // ours (upstream PR #135437): the old plugins' streams ending does not zero the new one
    await p1.stop();
    await p2.stop();
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(capOf(h), [1, 1]);
  });

  it('the same plugin registering again on the same socket replaces its old connection', async () => {
    const h = await harness();
    const p = await plugin(h, { endpoint: 'p.sock', devices: [['d1', 'Healthy']] });
    await p.register(RES);
    await waitFor(() => capOf(h)[1] === 1, 'devices');
    await p.register(RES);
    await waitFor(() => p.calls.filter((c) => c.method === 'ListAndWatch').length === 2, 'second stream');
    await new Promise((r) => setTimeout(r, 100)); // the old stream's end has been seen
    assert.deepEqual(capOf(h), [1, 1]);
    p.setDevices([
      ['d1', 'Healthy'],
      ['d2', 'Healthy'],
    ]);
    await waitFor(() => capOf(h)[1] === 2, 'the new stream is live');
    assert.deepEqual(h.m.pluginHandler.registered(), [{ resource: RES, socketPath: p.socketPath }]);
  });

  it('a health flip is a full list: capacity stays, allocatable drops (TestGetAllocatableDevicesHealthTransition)', async () => {
    const h = await harness();
    const p = await plugin(h, {
      endpoint: 'p.sock',
      devices: [
        ['d1', 'Healthy'],
        ['d2', 'Healthy'],
      ],
    });
    await p.register(RES);
    await waitFor(() => capOf(h)[1] === 2, 'devices');
    assert.deepEqual(Object.keys(h.m.getAllocatableDevices()[RES]!).sort(), ['d1', 'd2']);
    p.setDevices([
      ['d1', 'Healthy'],
      ['d2', 'Unhealthy'],
    ]);
    await waitFor(() => capOf(h)[1] === 1, 'health flip');
    assert.deepEqual(capOf(h), [2, 1]);
    assert.deepEqual(Object.keys(h.m.getAllocatableDevices()[RES]!), ['d1']);
  });

  it('stream end: all devices unhealthy, then the resource goes after the grace period (TestUpdateCapacityAllocatable)', async () => {
    const h = await harness();
    const p = await plugin(h, {
      endpoint: 'p.sock',
      devices: [
        ['d1', 'Healthy'],
        ['d2', 'Unhealthy'],
      ],
    });
    await p.register(RES);
    await waitFor(() => capOf(h)[0] === 2, 'devices');
    await p.stop();
    await waitFor(() => capOf(h)[1] === 0, 'disconnect');
    assert.deepEqual(capOf(h), [2, 0]);
    h.clock.t += GRACE;
    assert.deepEqual(capOf(h), [2, 0], 'still inside the grace period');
    h.clock.t += 10_000;
    assert.deepEqual(h.m.getCapacity(), { capacity: {}, allocatable: {}, removed: [RES] });
    assert.equal(h.m.isDevicePluginResource(RES), false);
  });

  it('after a restart a checkpointed resource reads 0/0 and stays a device plugin resource', async () => {
    const h = await harness();
    assert.equal(h.m.shouldResetExtendedResourceCapacity(), true, 'TestResetExtendedResource: no checkpoint yet');
    const p = await plugin(h, { endpoint: 'p.sock', devices: [['d1', 'Healthy']] });
    await p.register(RES);
    await waitFor(() => capOf(h)[0] === 1, 'devices');
    await h.m.stop();
    const again = await harness(join(h.dir, '..'));
    assert.deepEqual(capOf(again), [0, 0]);
    assert.equal(again.m.isDevicePluginResource(RES), true);
    assert.equal(again.m.shouldResetExtendedResourceCapacity(), false);
    again.clock.t += GRACE + 10_000;
    assert.deepEqual(again.m.getCapacity().removed, [RES]);
  });

  it('the plugins_registry handler validates with upstream texts', async () => {
    const h = await harness();
    const handler = h.m.pluginHandler;
    assert.throws(() => handler.validatePlugin(RES, '/x.sock', ['v1alpha1']), {
      message: 'manager version, v1beta1, is not among plugin supported versions [v1alpha1]',
    });
    assert.throws(() => handler.validatePlugin('cpu', '/x.sock', ['v1beta1']), {
      message: 'invalid name of device plugin socket: the ResourceName "cpu" is invalid',
    });
    const p = await plugin(h, { endpoint: 'reg.sock', devices: [['d1', 'Healthy']] });
    await handler.registerPlugin(RES, p.socketPath, ['v1beta1'], 1000);
    await waitFor(() => capOf(h)[0] === 1, 'devices via plugins_registry');
    await handler.deRegisterPlugin(RES, p.socketPath);
    assert.deepEqual(capOf(h), [1, 0]);
  });
});

describe('plugins_registry (the DevicePlugin type through the plugin manager)', () => {
  it('a DevicePlugin-type plugin registers through the plugin manager; its socket removed, it is deregistered', async () => {
    const root = testTempDir('dm-');
    const h = await harness(root);
    const pm = new PluginManager({
      rootDir: root,
      createFsWatcher: hotPaths().inotify.createFsWatcher,
      timeouts: { loopMs: 100, backoffInitialMs: 100 },
    });
    pm.addHandler(DEVICE_PLUGIN, h.m.pluginHandler);
    const registry = join(root, 'plugins_registry');
    mkdirSync(registry, { recursive: true });
    const p = await MiniPlugin.start({
      dir: registry,
      endpoint: 'dp.sock',
      devices: [['d1', 'Healthy']],
      registryName: RES,
    });
    plugins.push(p);
    pm.run();
    try {
      await waitFor(() => capOf(h)[1] === 1, 'devices via plugins_registry');
      assert.deepEqual(p.calls.find((c) => c.method === 'NotifyRegistrationStatus')?.request, {
        pluginRegistered: true,
        error: '',
      });
      rmSync(p.socketPath);
      await waitFor(() => capOf(h)[1] === 0, 'deregistration');
      assert.deepEqual(capOf(h), [1, 0]);
    } finally {
      await pm.stop();
    }
  });
});

describe('TestDevicePluginReRegistrationProbeMode', () => {
  it('2 devices, the same 2 on a new socket, then 1 other: 1/1; the first socket removed changes nothing', async () => {
    const root = testTempDir('dm-');
    const h = await harness(root);
    const pm = new PluginManager({
      rootDir: root,
      createFsWatcher: hotPaths().inotify.createFsWatcher,
      timeouts: { loopMs: 100, backoffInitialMs: 100 },
    });
    pm.addHandler(DEVICE_PLUGIN, h.m.pluginHandler);
    const registry = join(root, 'plugins_registry');
    mkdirSync(registry, { recursive: true });
    pm.run();
    const start = async (endpoint: string, devices: Array<[string, string]>): Promise<MiniPlugin> => {
      const p = await MiniPlugin.start({ dir: registry, endpoint, devices, registryName: RES });
      plugins.push(p);
      await waitFor(() => p.calls.some((c) => c.method === 'ListAndWatch'), `${endpoint} registered`);
      return p;
    };
    try {
      const p1 = await start('p1.sock', [
        ['d1', 'Healthy'],
        ['d2', 'Healthy'],
      ]);
      await waitFor(() => capOf(h)[1] === 2, 'first plugin');
      await start('p2.sock', [
        ['d1', 'Healthy'],
        ['d2', 'Healthy'],
      ]);
      assert.deepEqual(capOf(h), [2, 2]);
      await start('p3.sock', [['d3', 'Healthy']]);
      await waitFor(() => capOf(h)[0] === 1, 'third plugin');
      assert.deepEqual(capOf(h), [1, 1]);
      rmSync(p1.socketPath);
      await waitFor(() => h.m.pluginHandler.registered().length === 2, 'p1 deregistered');
      assert.deepEqual(capOf(h), [1, 1]);
    } finally {
      await pm.stop();
    }
  });
});

describe('allocation (TestPodContainerDeviceAllocation and friends)', () => {
  async function ready(opts: Partial<MiniPluginOptions> = {}, pods: Pod[] = []): Promise<[Harness, MiniPlugin]> {
    const h = await harness(undefined, pods);
    const devices: Array<[string, string]> = [
      ['d1', 'Healthy'],
      ['d2', 'Healthy'],
      ['d3', 'Healthy'],
    ];
    const p = await plugin(h, { endpoint: 'p.sock', devices, ...opts });
    await p.register(RES);
    await waitFor(() => capOf(h)[1] === 3, 'devices');
    return [h, p];
  }

  it('allocates, refuses over-asking with the exact text, and gives run options', async () => {
    const pods: Pod[] = [];
    const [h, p] = await ready({}, pods);
    const a = pod('a', [['c', 2]]);
    pods.push(a);
    await h.m.allocate(a, a.spec!.containers[0]!);
    assert.deepEqual(Object.keys(h.m.getDevices('a', 'c')[RES]!), ['d1', 'd2']);
    const b = pod('b', [['c', 2]]);
    pods.push(b);
    await assert.rejects(h.m.allocate(b, b.spec!.containers[0]!), {
      message: `requested number of devices unavailable for ${RES}. Requested: 2, Available: 1`,
    });
    const opts = await h.m.deviceRunContainerOptions(a, a.spec!.containers[0]!);
    assert.deepEqual(opts?.envs, [{ name: 'TEST_DEVICES', value: 'd1,d2' }]);
    assert.deepEqual(
      opts?.devices.map((d) => d.pathInContainer),
      ['/dev/d1', '/dev/d2'],
    );
    assert.equal(p.calls.filter((c) => c.method === 'Allocate').length, 1);
    assert.ok((await sample('kubelet_device_plugin_alloc_duration_seconds', { resource_name: RES }, '_count')) >= 1);
    // a pod gone from the active list frees its devices at the next allocation
    pods.splice(0, 1);
    await h.m.allocate(b, b.spec!.containers[0]!);
    assert.equal(Object.keys(h.m.getDevices('b', 'c')[RES]!).length, 2);
  });

  it('a resource no plugin registered is skipped; a stopped plugin refuses (TestPodContainerDeviceToAllocate)', async () => {
    const pods: Pod[] = [];
    const [h, p] = await ready({}, pods);
    const other: Pod = {
      metadata: { uid: 'o', name: 'o', namespace: 'default' },
      spec: { containers: [{ name: 'c', resources: { limits: { 'other.io/x': '1' } } }] },
    };
    pods.push(other);
    await h.m.allocate(other, other.spec!.containers[0]!);
    assert.deepEqual(h.m.getDevices('o', 'c'), {});
    await p.stop();
    await waitFor(() => capOf(h)[1] === 0, 'disconnect');
    const a = pod('a', [['c', 1]]);
    pods.push(a);
    await assert.rejects(h.m.allocate(a, a.spec!.containers[0]!), {
      message: `no healthy devices present; cannot allocate unhealthy devices ${RES}`,
    });
  });

  it('TestInitContainerDeviceAllocation / TestRestartableInitContainerDeviceAllocation: reuse and sidecars', async () => {
    const pods: Pod[] = [];
    const [h] = await ready({}, pods);
    const a = pod(
      'a',
      [
        ['app1', 1],
        ['app2', 1],
      ],
      [
        ['init', 2],
        ['sidecar', 1, true],
      ],
    );
    pods.push(a);
    for (const c of [...a.spec!.initContainers!, ...a.spec!.containers]) await h.m.allocate(a, c);
    const ids = (c: string): string[] => Object.keys(h.m.getDevices('a', c)[RES] ?? {});
    assert.deepEqual(ids('init'), ['d1', 'd2']);
    // the sidecar reuses one of the finished init container's devices and keeps it: the apps get the rest
    assert.deepEqual(ids('sidecar'), ['d1']);
    assert.deepEqual(ids('app1'), ['d2']);
    assert.deepEqual(ids('app2'), ['d3']);
  });

  it('GetPreferredAllocation only when advertised, its choice first', async () => {
    const pods: Pod[] = [];
    const [h, p] = await ready({ getPreferredAllocationAvailable: true, preferred: ['d3'] }, pods);
    const a = pod('a', [['c', 1]]);
    pods.push(a);
    await h.m.allocate(a, a.spec!.containers[0]!);
    assert.deepEqual(Object.keys(h.m.getDevices('a', 'c')[RES]!), ['d3']);
    const req = p.calls.find((c) => c.method === 'GetPreferredAllocation')!.request as {
      containerRequests: Array<{ availableDeviceIDs: string[]; allocationSize: number }>;
    };
    assert.deepEqual(req.containerRequests[0]!.availableDeviceIDs, ['d1', 'd2', 'd3']);
    assert.equal(req.containerRequests[0]!.allocationSize, 1);

    const [h2, p2] = await ready({ preferred: ['d3'] }, pods);
    await h2.m.allocate(a, a.spec!.containers[0]!);
    assert.equal(
      p2.calls.some((c) => c.method === 'GetPreferredAllocation'),
      false,
    );
    assert.deepEqual(Object.keys(h2.m.getDevices('a', 'c')[RES]!), ['d1']);
  });

  it('TestDevicePreStartContainer: called with the devices; a failure fails creation', async () => {
    const pods: Pod[] = [];
    const [h, p] = await ready({ preStartRequired: true }, pods);
    const a = pod('a', [['c', 2]]);
    pods.push(a);
    await h.m.allocate(a, a.spec!.containers[0]!);
    await h.m.deviceRunContainerOptions(a, a.spec!.containers[0]!);
    const pre = p.calls.find((c) => c.method === 'PreStartContainer')!;
    assert.deepEqual(pre.request['devicesIds'], ['d1', 'd2']);
    p.opts.fail = { PreStartContainer: 'boom' };
    await assert.rejects(h.m.deviceRunContainerOptions(a, a.spec!.containers[0]!), {
      message: 'device plugin PreStartContainer rpc failed with err: rpc error: code = Unknown desc = boom',
    });
  });

  it('an Allocate failure is passed on and the devices are free again', async () => {
    const pods: Pod[] = [];
    const [h, p] = await ready({ fail: { Allocate: 'no luck' } }, pods);
    const a = pod('a', [['c', 3]]);
    pods.push(a);
    await assert.rejects(h.m.allocate(a, a.spec!.containers[0]!), {
      message: 'rpc error: code = Unknown desc = no luck',
    });
    p.opts.fail = {};
    await h.m.allocate(a, a.spec!.containers[0]!);
    assert.equal(Object.keys(h.m.getDevices('a', 'c')[RES]!).length, 3);
  });

  it('TestUpdatePluginResources: allocatable is raised to the devices allocated, for a pod holding devices', async () => {
    const pods: Pod[] = [];
    const [h] = await ready({}, pods);
    const a = pod('a', [['c', 2]]);
    pods.push(a);
    await h.m.allocate(a, a.spec!.containers[0]!);
    assert.deepEqual(h.m.sanitizeAllocatable(a, { [RES]: 0, cpu: 4 }), { [RES]: 2, cpu: 4 });
    assert.deepEqual(h.m.sanitizeAllocatable(pod('x', [['c', 1]]), { [RES]: 0 }), { [RES]: 0 });
  });

  it('restart: allocations come back from the checkpoint; a container running at start keeps them without the plugin', async () => {
    const pods: Pod[] = [];
    const [h] = await ready({}, pods);
    const a = pod('a', [['c', 2]]);
    pods.push(a);
    await h.m.allocate(a, a.spec!.containers[0]!);
    await h.m.stop();
    const clock = { t: 0 };
    const m = new ManagerImpl({ rootDir: join(h.dir, '..'), now: () => clock.t });
    managers.push(m);
    await m.start({
      activePods: () => pods,
      sourcesReady: () => true,
      initialRunningContainers: [{ podUid: 'a', containerName: 'c' }],
    });
    assert.deepEqual(Object.keys(m.getDevices('a', 'c')[RES]!), ['d1', 'd2']);
    await m.allocate(a, a.spec!.containers[0]!); // ours: admitted although the plugin is not back
    const b = pod('b', [['c', 1]]);
    await assert.rejects(m.allocate(b, b.spec!.containers[0]!), {
      message: `no healthy devices present; cannot allocate unhealthy devices ${RES}`,
    });
    assert.deepEqual(m.sanitizeAllocatable(a, {}), { [RES]: 2 });
  });
});

describe('TestUpdateCapacityAllocatable (the walk, through the client handler)', () => {
  const R2 = 'example.com/other';
  const opts = { preStartRequired: false, getPreferredAllocationAvailable: false };
  const dev = (ID: string, health: string) => ({ ID, health, topology: null });
  const fake = (resource: string): PluginClient => ({ resource, socketPath: `/x/${resource}` }) as PluginClient;

  it('counts, health flips, deletions, a second resource, stop, grace, re-read', async () => {
    const h = await harness();
    const c1 = fake(RES);
    h.m.pluginConnected(RES, c1, opts);
    const steps: Array<[string, ReturnType<typeof dev>[], [number, number]]> = [
      ['2 healthy + 1 unhealthy', [dev('d1', 'Healthy'), dev('d2', 'Healthy'), dev('d3', 'Unhealthy')], [3, 2]],
      ['a healthy one turns unhealthy', [dev('d1', 'Unhealthy'), dev('d2', 'Healthy'), dev('d3', 'Unhealthy')], [3, 1]],
      ['a healthy one is deleted', [dev('d1', 'Unhealthy'), dev('d3', 'Unhealthy')], [2, 0]],
      ['a new healthy one', [dev('d1', 'Unhealthy'), dev('d3', 'Unhealthy'), dev('d4', 'Healthy')], [3, 1]],
      ['any health text but Healthy is unhealthy', [dev('d4', 'healthy'), dev('d5', '')], [2, 0]],
    ];
    for (const [what, list, want] of steps) {
      h.m.pluginListAndWatch(RES, c1, list);
      assert.deepEqual(capOf(h), want, what);
    }
    h.m.pluginListAndWatch(RES, c1, [dev('d1', 'Healthy'), dev('d2', 'Unhealthy')]);
    const c2 = fake(R2);
    h.m.pluginConnected(R2, c2, opts);
    h.m.pluginListAndWatch(R2, c2, [dev('o1', 'Healthy')]);
    assert.deepEqual(h.m.getCapacity(), {
      capacity: { [RES]: 2, [R2]: 1 },
      allocatable: { [RES]: 1, [R2]: 1 },
      removed: [],
    });
    // a message from a client that no longer serves the resource changes nothing
    h.m.pluginListAndWatch(RES, fake(RES), []);
    h.m.pluginDisconnected(RES, fake(RES));
    assert.deepEqual(capOf(h), [2, 1]);
    h.m.pluginDisconnected(RES, c1);
    assert.deepEqual(capOf(h), [2, 0], 'stopped: all unhealthy, capacity kept');
    h.clock.t += GRACE + 10_000;
    assert.deepEqual(h.m.getCapacity(), { capacity: { [R2]: 1 }, allocatable: { [R2]: 1 }, removed: [RES] });
    assert.equal(h.m.isDevicePluginResource(RES), false);
    await h.m.stop();
    const again = await harness(join(h.dir, '..'));
    assert.deepEqual(again.m.getCapacity(), { capacity: { [R2]: 0 }, allocatable: { [R2]: 0 }, removed: [] });
    assert.equal(again.m.isDevicePluginResource(R2), true);
    assert.equal(again.m.isDevicePluginResource(RES), false);
  });
});
