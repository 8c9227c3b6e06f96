/**
 * The plugin manager over a real registry directory and real registration sockets (an in-test
 * gRPC server speaking pluginregistration v1, as node-driver-registrar does). Upstream:
 * pkg/kubelet/pluginmanager/pluginmanager_test.go (TestPluginRegistration) and
 * reconciler_test.go (register, unregister, re-register cases).
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { after, afterEach, describe, it } from 'node:test';
import { join } from 'node:path';
import { hotPaths } from '../../../src/cmd/hot-paths.js';
import { CsiRegistrationHandler, type CsiDriver } from '../../../src/volume/csi/csi-registration.js';
import type { NodeInfo } from '../../../src/volume/csi/node-client.js';
import { CSI_PLUGIN, PluginManager, REGISTRATION_SERVICE } from '../../../src/pluginmanager/index.js';
import { CSI_NODE_SERVICE } from '../../../src/volume/csi/proto.js';
import { testTempDir } from '../../support/temp-dir.js';
import { stall, startServer, waitFor, type Handler, type TestServer } from './grpc-server.js';

const servers: TestServer[] = [];
const managers: PluginManager[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop();
  for (const s of servers.splice(0)) await s.stop();
});
after(() => {});

interface Info {
  type?: string;
  name?: string;
  endpoint?: string;
  supportedVersions?: string[];
}

/**
 * A registrar socket answering GetInfo with `info` (or with `getInfo`, to stall it); the same
 * socket serves the driver's Node service (the endpoint it registers), NodeGetInfo by `nodeGetInfo`.
 */
async function registrar(
  socketPath: string,
  info: Info,
  getInfo?: Handler,
  nodeGetInfo?: Handler,
): Promise<TestServer> {
  const reply = { type: CSI_PLUGIN, endpoint: socketPath, supportedVersions: ['1.0.0'], ...info };
  const s = await startServer(socketPath, {
    [REGISTRATION_SERVICE]: { GetInfo: getInfo ?? (() => reply), NotifyRegistrationStatus: () => ({}) },
    [CSI_NODE_SERVICE]: { NodeGetInfo: nodeGetInfo ?? (() => ({ nodeId: 'node-1', maxVolumesPerNode: '8' })) },
  });
  servers.push(s);
  return s;
}

function notifications(s: TestServer): Array<{ pluginRegistered: boolean; error: string }> {
  return s.calls
    .filter((c) => c.method === 'NotifyRegistrationStatus')
    .map((c) => c.request as { pluginRegistered: boolean; error: string });
}

function setup(timeouts = {}) {
  const root = testTempDir('kts-csi-pm-');
  const dir = join(root, 'plugins_registry');
  const log: string[] = [];
  const nodeIds: string[] = [];
  const csi = new CsiRegistrationHandler({
    onRegister: (d: CsiDriver, info: NodeInfo) => void (log.push(`+${d.name}`), nodeIds.push(info.nodeId)),
    onDeregister: (d: CsiDriver) => void log.push(`-${d.name}`),
  });
  const pm = new PluginManager({
    rootDir: root,
    createFsWatcher: hotPaths().inotify.createFsWatcher,
    timeouts: { loopMs: 100, backoffInitialMs: 100, getInfoMs: 1000, notifyMs: 1000, ...timeouts },
  });
  pm.addHandler(CSI_PLUGIN, csi);
  managers.push(pm);
  return { root, dir, log, nodeIds, csi, pm };
}

describe('PluginManager (plugins_registry)', () => {
  it('registers a socket present at start, and tells it so', async () => {
    const { dir, log, nodeIds, csi, pm } = setup();
    mkdirSync(dir, { recursive: true });
    const s = await registrar(join(dir, 'd1-reg.sock'), {
      name: 'd1.example.com',
      supportedVersions: ['v1.2.0', '1.0.0'],
    });
    pm.run();
    await waitFor(() => notifications(s).length === 1, 5000, 'NotifyRegistrationStatus');
    assert.deepEqual(notifications(s)[0], { pluginRegistered: true, error: '' });
    assert.deepEqual(log, ['+d1.example.com']);
    assert.deepEqual(nodeIds, ['node-1']);
    assert.deepEqual(csi.get('d1.example.com')?.highestSupportedVersion, { major: 1, minor: 2, patch: 0 });
    assert.equal(pm.registered().get(s.socketPath)?.endpoint, s.socketPath);
  });

  it('an empty endpoint means the registration socket itself (upstream operation executor)', async () => {
    const { dir, log, pm } = setup();
    mkdirSync(dir, { recursive: true });
    const s = await registrar(join(dir, 'd1.sock'), { name: 'd1', endpoint: '' });
    pm.run();
    await waitFor(() => notifications(s).length === 1, 5000, 'NotifyRegistrationStatus');
    assert.deepEqual(notifications(s)[0], { pluginRegistered: true, error: '' });
    assert.deepEqual(log, ['+d1']);
    assert.equal(pm.registered().get(s.socketPath)?.endpoint, s.socketPath);
  });

  it('registers a socket created after start (in a subdirectory too); ignores plain files', async () => {
    const { dir, log, pm } = setup();
    pm.run();
    writeFileSync(join(dir, 'not-a-socket'), 'x');
    mkdirSync(join(dir, 'sub'));
    const s1 = await registrar(join(dir, 'd1.sock'), { name: 'd1' });
    const s2 = await registrar(join(dir, 'sub', 'd2.sock'), { name: 'd2' });
    await waitFor(() => notifications(s1).length === 1 && notifications(s2).length === 1, 5000, 'both registered');
    assert.deepEqual([...log].sort(), ['+d1', '+d2']);
  });

  // Upstream TestPluginRegistration's bad cases: a type nobody handles, an unsupported version.
  const refused: Array<[string, Info, RegExp]> = [
    [
      'an unknown plugin type',
      { name: 'x', type: 'FancyPlugin' },
      /no handler registered for plugin type: FancyPlugin/,
    ],
    [
      'no v1 version',
      { name: 'x', supportedVersions: ['0.3.0', '2.0.0'] },
      /not a supported CSI version|none of the versions/,
    ],
    ['no versions at all', { name: 'x', supportedVersions: [] }, /empty list of supported versions/],
    ['an empty name', { name: '' }, /empty name/],
    ['a relative endpoint', { name: 'x', endpoint: 'csi.sock' }, /not an absolute unix socket path/],
  ];
  for (const [what, info, why] of refused) {
    it(`refuses ${what} with NotifyRegistrationStatus(false)`, async () => {
      const { dir, log, pm } = setup();
      pm.run();
      const s = await registrar(join(dir, 'bad.sock'), info);
      await waitFor(() => notifications(s).length >= 1, 5000, 'NotifyRegistrationStatus(false)');
      const n = notifications(s)[0]!;
      assert.equal(n.pluginRegistered, false);
      assert.match(n.error, why);
      assert.deepEqual(log, []);
      assert.equal(pm.registered().size, 0);
    });
  }

  it('refuses a driver whose NodeGetInfo fails, and forgets it', async () => {
    const { dir, log, csi, pm } = setup();
    pm.run();
    const s = await registrar(join(dir, 'd1.sock'), { name: 'd1' }, undefined, () => ({ nodeId: '' }));
    await waitFor(() => notifications(s).length >= 1, 5000, 'NotifyRegistrationStatus(false)');
    assert.equal(notifications(s)[0]!.pluginRegistered, false);
    assert.match(
      notifications(s)[0]!.error,
      /RegisterPlugin for CSI driver "d1" failed: CSI NodeGetInfo: .*empty node_id/,
    );
    assert.deepEqual(log, []);
    assert.equal(csi.get('d1'), undefined);
  });

  it('deregisters a driver whose socket is removed', async () => {
    const { dir, log, csi, pm } = setup();
    pm.run();
    const s = await registrar(join(dir, 'd1.sock'), { name: 'd1' });
    await waitFor(() => log.length === 1, 5000, 'registered');
    await s.stop();
    rmSync(s.socketPath, { force: true });
    await waitFor(() => log.length === 2, 5000, 'deregistered');
    assert.deepEqual(log, ['+d1', '-d1']);
    assert.equal(csi.get('d1'), undefined);
    assert.equal(pm.registered().size, 0);
  });

  it('re-registers a driver whose socket is replaced', async () => {
    const { dir, log, pm } = setup();
    pm.run();
    const path = join(dir, 'd1.sock');
    const first = await registrar(path, { name: 'd1' });
    await waitFor(() => log.length === 1, 5000, 'registered');
    await first.stop();
    rmSync(path, { force: true });
    const second = await registrar(path, { name: 'd1', supportedVersions: ['1.5.0'] });
    await waitFor(() => notifications(second).length === 1, 5000, 'second registration');
    await waitFor(() => log.length === 3, 5000, 'deregister + register');
    assert.deepEqual(log, ['+d1', '-d1', '+d1']);
    assert.equal(pm.registered().size, 1);
  });

  it('a chmod of a registered socket does not re-register it', async () => {
    const { dir, log, pm } = setup();
    pm.run();
    const s = await registrar(join(dir, 'd1.sock'), { name: 'd1' });
    await waitFor(() => log.length === 1, 5000, 'registered');
    chmodSync(s.socketPath, 0o600);
    await new Promise((r) => setTimeout(r, 400)); // several reconciler passes (loopMs 100)
    assert.deepEqual(log, ['+d1']);
    assert.equal(notifications(s).length, 1);
  });

  it('a stalled GetInfo times out, is retried, and does not hold up other sockets', async () => {
    const { dir, log, pm } = setup({ getInfoMs: 300 });
    pm.run();
    const stalled = await registrar(join(dir, 'a-stalled.sock'), {}, stall);
    const good = await registrar(join(dir, 'b-good.sock'), { name: 'good' });
    await waitFor(() => log.includes('+good'), 5000, 'the good driver registered');
    await waitFor(() => stalled.calls.filter((c) => c.method === 'GetInfo').length >= 2, 5000, 'a retried GetInfo');
    assert.equal(notifications(stalled).length, 0);
    assert.deepEqual(
      [...pm.registered().values()].map((p) => p.name),
      ['good'],
    );
    assert.equal(notifications(good)[0]?.pluginRegistered, true);
  });

  it('a socket nobody listens on is retried without crashing', async () => {
    const { dir, log, pm } = setup();
    pm.run();
    const s = await registrar(join(dir, 'dead.sock'), { name: 'dead' });
    await s.stop(); // the socket file may stay behind with no listener
    const good = await registrar(join(dir, 'good.sock'), { name: 'good' });
    await waitFor(() => notifications(good).length === 1, 5000, 'good registered');
    assert.ok(log.includes('+good'));
  });
});
