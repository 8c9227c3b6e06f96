/**
 * The test device plugin (test/support/device-plugin.ts) against a small Registration server of
 * this test's own, over real gRPC on unix sockets in a temp dir, as the kubelet will meet it:
 * the registration request, the ListAndWatch list and a health flip, Allocate's response, the
 * re-registration after kubelet.sock is made again, and a clean SIGTERM.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bind, loadCsiProtos } from './csi-driver.js';
import { loadDevicePluginProto, startDevicePlugin, type TestDevicePlugin } from './device-plugin.js';
import { spawnDevicePlugin } from './device-plugin-process.js';
import { preferredIds } from './device-plugin-state.js';
import { testTempDir } from './temp-dir.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- proto-loader's untyped clients and messages */

const RESOURCE = 'kubelet-ts.test/dev';
/** The devices are mknod-made character nodes: root (CAP_MKNOD) only. */
const skip = process.getuid?.() !== 0 && 'mknod needs root';
const pkg = loadDevicePluginProto();

function unary(client: any, method: string, request: any = {}): Promise<any> {
  return new Promise((resolve, reject) =>
    client[method](request, { deadline: Date.now() + 5000 }, (err: unknown, reply: unknown) =>
      err ? reject(err) : resolve(reply),
    ),
  );
}

/** The kubelet's side of Register: dial the plugin and ask its options before answering (dp/server.go). */
class FakeKubelet {
  readonly requests: any[] = [];
  readonly options: any[] = [];
  private server: grpc.Server | undefined;

  constructor(readonly dir: string) {}

  async start(): Promise<void> {
    this.server = new grpc.Server();
    this.server.addService(pkg.Registration.service, {
      Register: (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
        const plugin = new pkg.DevicePlugin(
          `unix:${join(this.dir, call.request.endpoint)}`,
          grpc.credentials.createInsecure(),
        );
        unary(plugin, 'GetDevicePluginOptions').then(
          (opts) => (this.options.push(opts), this.requests.push(call.request), plugin.close(), cb(null, {})),
          (err: Error) => (plugin.close(), cb({ code: grpc.status.UNKNOWN, details: err.message })),
        );
      },
    });
    await bind(this.server, join(this.dir, 'kubelet.sock'));
  }

  /** A kubelet restart: kubelet.sock and every other socket in the directory go (CleanupPluginDirectory). */
  stop(pluginSocket: string): void {
    this.server?.forceShutdown();
    for (const p of [join(this.dir, 'kubelet.sock'), pluginSocket]) rmSync(p, { force: true });
  }
}

/** ListAndWatch as a queue of lists. */
function watch(client: any): { next(): Promise<any>; call: grpc.ClientReadableStream<any>; ended: Promise<string> } {
  const call: grpc.ClientReadableStream<any> = client.ListAndWatch({});
  const queue: any[] = [];
  const waiters: ((m: any) => void)[] = [];
  call.on('data', (m) => (waiters.length > 0 ? waiters.shift()!(m) : queue.push(m)));
  const ended = new Promise<string>((resolve) => {
    call.on('error', (e: grpc.ServiceError) => resolve(`error ${grpc.status[e.code]}`));
    call.on('end', () => resolve('end'));
  });
  const next = () => (queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((r) => waiters.push(r)));
  return { next, call, ended };
}

const health = (list: any) => list.devices.map((d: any) => [d.ID, d.health]);

describe('test device plugin', { skip }, () => {
  const dir = testTempDir('kts-device-plugin-');
  const pluginDir = join(dir, 'device-plugins');
  const stateDir = join(dir, 'state');
  let kubelet: FakeKubelet;
  let plugin: TestDevicePlugin;
  let client: any;

  before(async () => {
    mkdirSync(pluginDir, { recursive: true });
    kubelet = new FakeKubelet(pluginDir);
    await kubelet.start();
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(join(stateDir, 'options.json'), JSON.stringify({ preStartRequired: true, cdi: true }));
    plugin = await startDevicePlugin({ resourceName: RESOURCE, pluginDir, stateDir, socketName: 'kts.sock' });
    client = new pkg.DevicePlugin(`unix:${plugin.socketPath}`, grpc.credentials.createInsecure());
  });

  after(async () => {
    client?.close();
    await plugin?.stop();
    kubelet?.stop(join(pluginDir, 'kts.sock'));
  });

  it('registers once it serves: version, endpoint file name, resource name, options', async () => {
    await plugin.waitRegistered(1);
    assert.deepEqual(kubelet.requests[0], {
      version: 'v1beta1',
      endpoint: 'kts.sock',
      resourceName: RESOURCE,
      options: { preStartRequired: true, getPreferredAllocationAvailable: false },
    });
    assert.deepEqual(kubelet.options[0], { preStartRequired: true, getPreferredAllocationAvailable: false });
    assert.deepEqual(
      plugin.calls().map((c) => [c.method, c.code]),
      [
        ['Register', 0],
        ['GetDevicePluginOptions', 0],
      ],
    );
  });

  it('makes its devices as real character nodes (c 1 3, c 1 5)', () => {
    for (const [id, minor] of [
      ['d0', 3],
      ['d1', 5],
    ] as const) {
      const st = statSync(plugin.state.hostPath(id));
      assert.ok(st.isCharacterDevice(), id);
      assert.deepEqual([st.rdev >> 8, st.rdev & 0xff], [1, minor]);
    }
  });

  it('ListAndWatch sends the full list, then a new one when devices.json changes', async () => {
    const w = watch(client);
    assert.deepEqual(health(await w.next()), [
      ['d0', 'Healthy'],
      ['d1', 'Healthy'],
    ]);
    writeFileSync(
      plugin.state.devicesPath,
      JSON.stringify([{ id: 'd0' }, { id: 'd1', kind: 'zero', health: 'Unhealthy' }]),
    );
    assert.deepEqual(health(await w.next()), [
      ['d0', 'Healthy'],
      ['d1', 'Unhealthy'],
    ]);
    w.call.cancel();
    assert.equal(await w.ended, 'error CANCELLED');
  });

  it('Allocate: device specs, env, read-only mount, annotation and CDI names, per container', async () => {
    const reply = await unary(client, 'Allocate', {
      containerRequests: [{ devicesIds: ['d1', 'd0'] }, { devicesIds: ['d0'] }],
    });
    assert.equal(reply.containerResponses.length, 2);
    const first = reply.containerResponses[0];
    assert.deepEqual(first.devices, [
      { containerPath: '/dev/kts0', hostPath: plugin.state.hostPath('d1'), permissions: 'rw' },
      { containerPath: '/dev/kts1', hostPath: plugin.state.hostPath('d0'), permissions: 'rw' },
    ]);
    assert.deepEqual(first.envs, { KTS_DEVICES: 'd1,d0' });
    assert.deepEqual(first.mounts, [{ containerPath: '/kts-share', hostPath: plugin.state.shareDir, readOnly: true }]);
    assert.deepEqual(first.annotations, { 'kubelet-ts.test/devices': 'd1,d0' });
    assert.deepEqual(first.cdiDevices, [{ name: 'kubelet-ts.test/dev=d1' }, { name: 'kubelet-ts.test/dev=d0' }]);
    assert.deepEqual(reply.containerResponses[1].envs, { KTS_DEVICES: 'd0' });
  });

  it('Allocate of an unknown device fails; faults fail or stall a method', async () => {
    await assert.rejects(unary(client, 'Allocate', { containerRequests: [{ devicesIds: ['nope'] }] }), (e: any) => {
      assert.equal(e.code, grpc.status.INTERNAL);
      assert.match(e.details, /unknown device IDs nope/);
      return true;
    });
    writeFileSync(join(stateDir, 'faults'), 'PreStartContainer=fail:RESOURCE_EXHAUSTED\n');
    await assert.rejects(unary(client, 'PreStartContainer', { devicesIds: ['d0'] }), { code: 8 });
    writeFileSync(join(stateDir, 'faults'), '');
    assert.deepEqual(await unary(client, 'PreStartContainer', { devicesIds: ['d0'] }), {});
  });

  it('GetPreferredAllocation: must-include first, then the available ones, up to the size', async () => {
    const reply = await unary(client, 'GetPreferredAllocation', {
      containerRequests: [{ availableDeviceIDs: ['a', 'b', 'c'], mustIncludeDeviceIDs: ['c'], allocationSize: 2 }],
    });
    assert.deepEqual(reply.containerResponses, [{ deviceIDs: ['c', 'a'] }]);
    assert.deepEqual(preferredIds({ availableDeviceIDs: ['a'], mustIncludeDeviceIDs: [], allocationSize: 3 }), ['a']);
  });

  it('serves again and re-registers when the kubelet re-creates kubelet.sock', async () => {
    kubelet.stop(plugin.socketPath);
    assert.equal(existsSync(plugin.socketPath), false);
    kubelet = new FakeKubelet(pluginDir);
    await kubelet.start();
    await plugin.waitRegistered(2);
    assert.equal(kubelet.requests[0].endpoint, 'kts.sock');
    client.close();
    client = new pkg.DevicePlugin(`unix:${plugin.socketPath}`, grpc.credentials.createInsecure());
    const w = watch(client);
    assert.equal((await w.next()).devices.length, 2);
    w.call.cancel();
  });
});

describe('test device plugin, plugin watcher path', { skip }, () => {
  const dir = testTempDir('kts-device-plugin-reg-');
  const pluginDir = join(dir, 'plugins', 'kts');
  const registrationDir = join(dir, 'plugins_registry');

  it('serves GetInfo as DevicePlugin on <registration-dir>/<name>-reg.sock and never calls Register', async () => {
    const plugin = await startDevicePlugin({
      resourceName: RESOURCE,
      pluginDir,
      stateDir: join(dir, 'state'),
      registrationDir,
    });
    const reg = new (loadCsiProtos().pluginregistration.Registration)(
      `unix:${plugin.registrationSocket}`,
      grpc.credentials.createInsecure(),
    );
    try {
      assert.equal(plugin.registrationSocket, join(registrationDir, 'kts-test-dev-reg.sock'));
      assert.deepEqual(await unary(reg, 'GetInfo'), {
        type: 'DevicePlugin',
        name: RESOURCE,
        endpoint: join(pluginDir, 'kts-test-dev.sock'),
        supportedVersions: ['v1beta1'],
      });
      await unary(reg, 'NotifyRegistrationStatus', { pluginRegistered: false, error: 'bad name' });
      assert.deepEqual(plugin.registrationStatus, { pluginRegistered: false, error: 'bad name' });
      assert.equal(plugin.calls().filter((c) => c.method === 'Register').length, 0);
    } finally {
      reg.close();
      await plugin.stop();
    }
    assert.equal(existsSync(join(registrationDir, 'kts-test-dev-reg.sock')), false);
    assert.equal(existsSync(join(pluginDir, 'kts-test-dev.sock')), false);
  });
});

describe('test device plugin process', { skip }, () => {
  const dir = testTempDir('kts-device-plugin-proc-');
  const pluginDir = join(dir, 'device-plugins');

  it('SIGTERM ends the ListAndWatch stream, removes its socket and exits 0', async () => {
    mkdirSync(pluginDir, { recursive: true });
    const kubelet = new FakeKubelet(pluginDir);
    await kubelet.start();
    const opts = { resourceName: RESOURCE, pluginDir, stateDir: join(dir, 'state') };
    const proc = await spawnDevicePlugin(opts);
    const socket = proc.ready.socket as string;
    const c = new pkg.DevicePlugin(`unix:${socket}`, grpc.credentials.createInsecure());
    try {
      assert.equal(kubelet.requests.length, 1);
      const w = watch(c);
      assert.equal((await w.next()).devices.length, 2);
      const exited = new Promise<number | null>((r) => proc.child.once('exit', (code) => r(code)));
      await proc.stop('SIGTERM');
      assert.equal(await exited, 0);
      assert.equal(await w.ended, 'end');
      assert.equal(existsSync(socket), false);
    } finally {
      c.close();
      await proc.stop('SIGKILL');
      kubelet.stop(socket);
    }
  });
});
