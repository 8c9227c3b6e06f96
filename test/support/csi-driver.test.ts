/**
 * The test CSI driver (test/support/csi-driver.ts) in-process on temporary sockets, called with a
 * gRPC client as the kubelet will call it: registration, node info, a volume's whole life through
 * real bind mounts (as root), and fault injection. Every mount is undone in `after`, even when a
 * test fails half-way.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mountsUnder, unmount } from '../../src/volume/mount.js';
import {
  loadCsiProtos,
  parseFaults,
  readCallLog,
  startCsiDriver,
  type TestCsiDriver,
  TOPOLOGY_KEY,
} from './csi-driver.js';
import { spawnCsiDriver } from './csi-driver-process.js';
import { testTempDir } from './temp-dir.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- proto-loader's untyped clients and messages */

const isRoot = process.getuid?.() === 0;
const DRIVER = 'csi.kubelet-ts.test';

type Call = (method: string, request?: any, deadlineMs?: number) => Promise<any>;

/** A promise-returning caller for one service of one socket. */
function caller(Service: any, socketPath: string): { call: Call; close(): void } {
  const client = new Service(`unix:${socketPath}`, grpc.credentials.createInsecure());
  const call: Call = (method, request = {}, deadlineMs = 5000) =>
    new Promise((resolve, reject) => {
      client[method](request, { deadline: Date.now() + deadlineMs }, (err: unknown, reply: unknown) =>
        err ? reject(err) : resolve(reply),
      );
    });
  return { call, close: () => client.close() };
}

const mountCap = { mount: { fsType: '', mountFlags: [] }, accessMode: { mode: 'SINGLE_NODE_WRITER' } };

describe('test CSI driver', () => {
  const dir = testTempDir('kts-csi-driver-');
  const pkg = loadCsiProtos();
  let driver: TestCsiDriver;
  const clients: { close(): void }[] = [];
  let node: Call;
  let controller: Call;
  let identity: Call;
  let registration: Call;

  before(async () => {
    driver = await startCsiDriver({
      endpoint: join(dir, 'csi.sock'),
      registrationDir: join(dir, 'plugins_registry'),
      driverName: DRIVER,
      nodeId: 'node-a',
      stateDir: join(dir, 'state'),
      maxVolumes: 7,
    });
    const open = (Service: any, socket: string) => {
      const c = caller(Service, socket);
      clients.push(c);
      return c.call;
    };
    node = open(pkg.csi.v1.Node, driver.opts.endpoint);
    controller = open(pkg.csi.v1.Controller, driver.opts.endpoint);
    identity = open(pkg.csi.v1.Identity, driver.opts.endpoint);
    registration = open(pkg.pluginregistration.Registration, driver.registrationSocket!);
  });

  after(async () => {
    for (const c of clients) c.close();
    await driver?.stop();
    for (const p of await mountsUnder(dir)) await unmount(p);
  });

  it('registers as node-driver-registrar does', async () => {
    assert.equal(driver.registrationSocket, join(dir, 'plugins_registry', `${DRIVER}-reg.sock`));
    const info = await registration('GetInfo');
    assert.deepEqual(
      { type: info.type, name: info.name, endpoint: info.endpoint, versions: info.supportedVersions },
      { type: 'CSIPlugin', name: DRIVER, endpoint: join(dir, 'csi.sock'), versions: ['1.0.0'] },
    );
    await registration('NotifyRegistrationStatus', { pluginRegistered: true, error: '' });
    assert.deepEqual(driver.registrationStatus, { pluginRegistered: true, error: '' });
  });

  it('answers Identity and NodeGetInfo with its name, node id, limit and topology', async () => {
    assert.equal((await identity('GetPluginInfo')).name, DRIVER);
    assert.equal((await identity('Probe')).ready.value, true);
    const info = await node('NodeGetInfo');
    assert.equal(info.nodeId, 'node-a');
    assert.equal(info.maxVolumesPerNode, '7');
    assert.deepEqual(info.accessibleTopology.segments, { [TOPOLOGY_KEY]: 'node-a' });
    const caps = (await node('NodeGetCapabilities')).capabilities.map((c: any) => c.rpc.type);
    assert.deepEqual(caps, ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS', 'EXPAND_VOLUME']);
  });

  it(
    'stages, publishes and tears down a volume through real bind mounts',
    { skip: !isRoot && 'needs root' },
    async () => {
      const created = await controller('CreateVolume', {
        name: 'pvc-1',
        capacityRange: { requiredBytes: '1048576' },
        volumeCapabilities: [mountCap],
      });
      const volumeId = created.volume.volumeId;
      assert.equal(created.volume.capacityBytes, '1048576');
      const staging = join(dir, 'kubelet', 'globalmount');
      const target = join(dir, 'kubelet', 'pod', 'mount');
      mkdirSync(staging, { recursive: true });
      const stage = { volumeId, stagingTargetPath: staging, volumeCapability: mountCap };
      await node('NodeStageVolume', stage);
      await node('NodeStageVolume', stage);
      const publish = { volumeId, stagingTargetPath: staging, targetPath: target, volumeCapability: mountCap };
      await node('NodePublishVolume', publish);
      await node('NodePublishVolume', publish);
      assert.deepEqual((await mountsUnder(join(dir, 'kubelet'))).sort(), [staging, target].sort());

      writeFileSync(join(target, 'data'), 'kept');
      assert.equal(readFileSync(join(driver.backingDir(volumeId), 'data'), 'utf8'), 'kept');
      const stats = await node('NodeGetVolumeStats', { volumeId, volumePath: target });
      assert.deepEqual(
        stats.usage.map((u: any) => u.unit),
        ['BYTES', 'INODES'],
      );
      const grown = await node('NodeExpandVolume', {
        volumeId,
        volumePath: target,
        capacityRange: { requiredBytes: '2097152' },
      });
      assert.equal(grown.capacityBytes, '2097152');

      await node('NodeUnpublishVolume', { volumeId, targetPath: target });
      await node('NodeUnpublishVolume', { volumeId, targetPath: target });
      await node('NodeUnstageVolume', { volumeId, stagingTargetPath: staging });
      assert.deepEqual(await mountsUnder(join(dir, 'kubelet')), []);
      assert.equal(readFileSync(join(driver.backingDir(volumeId), 'data'), 'utf8'), 'kept');
      const methods = driver.calls().map((c) => c.method);
      assert.ok(methods.includes('NodeUnstageVolume'));
    },
  );

  it(
    'publishes read-only when asked, and refuses the same target read-write',
    { skip: !isRoot && 'needs root' },
    async () => {
      await controller('CreateVolume', { name: 'pvc-ro', volumeCapabilities: [mountCap] });
      const target = join(dir, 'kubelet', 'ro', 'mount');
      const publish = { volumeId: 'pvc-ro', targetPath: target, volumeCapability: mountCap, readonly: true };
      await node('NodePublishVolume', publish);
      try {
        assert.throws(() => writeFileSync(join(target, 'x'), 'x'), { code: 'EROFS' });
        await node('NodePublishVolume', publish);
        await assert.rejects(node('NodePublishVolume', { ...publish, readonly: false }), {
          code: grpc.status.ALREADY_EXISTS,
        });
      } finally {
        await node('NodeUnpublishVolume', { volumeId: 'pvc-ro', targetPath: target });
      }
    },
  );

  it(
    'makes an inline volume on its publish and removes it on unpublish',
    { skip: !isRoot && 'needs root' },
    async () => {
      const target = join(dir, 'kubelet', 'inline', 'mount');
      const volumeContext = { 'csi.storage.k8s.io/ephemeral': 'true' };
      await node('NodePublishVolume', {
        volumeId: 'csi-inline1',
        targetPath: target,
        volumeCapability: mountCap,
        volumeContext,
      });
      writeFileSync(join(target, 'f'), 'x');
      assert.equal(existsSync(join(driver.backingDir('csi-inline1'), 'f')), true);
      await node('NodeUnpublishVolume', { volumeId: 'csi-inline1', targetPath: target });
      assert.equal(existsSync(driver.backingDir('csi-inline1')), false);
      assert.equal(existsSync(target), false);
    },
  );

  it('refuses bad requests with the codes the spec gives', async () => {
    await assert.rejects(node('NodePublishVolume', { volumeId: 'pvc-x', volumeCapability: mountCap }), {
      code: grpc.status.INVALID_ARGUMENT,
    });
    const absent = { volumeId: 'absent', targetPath: join(dir, 't'), volumeCapability: mountCap };
    await assert.rejects(node('NodePublishVolume', absent), { code: grpc.status.NOT_FOUND });
    await assert.rejects(
      node('NodeGetInfo', {}).then(() => node('NodeStageVolume', { volumeId: '../x' })),
      {
        code: grpc.status.INVALID_ARGUMENT,
      },
    );
  });

  it('fails and stalls the calls named in its faults file, and logs them', async () => {
    writeFileSync(driver.faultsPath, 'NodeGetInfo=fail:UNAVAILABLE\nProbe=stall\n');
    await assert.rejects(node('NodeGetInfo'), { code: grpc.status.UNAVAILABLE });
    await assert.rejects(identity('Probe', {}, 300), { code: grpc.status.DEADLINE_EXCEEDED });
    const probes = driver.calls().filter((c) => c.method === 'Probe');
    assert.equal(probes.at(-1)?.code, undefined, 'a stalled call is logged as received, unanswered');
    writeFileSync(driver.faultsPath, '');
    assert.equal((await node('NodeGetInfo')).nodeId, 'node-a');
    const failed = driver.calls().filter((c) => c.method === 'NodeGetInfo' && c.code === grpc.status.UNAVAILABLE);
    assert.equal(failed.length, 1);
  });

  it('parses fault entries by code name or number, ignoring junk', () => {
    const f = parseFaults('A=fail:14, B=stall\nC=fail:NOT_FOUND\nD=bogus\nE=fail:NOPE');
    assert.deepEqual(Object.fromEntries(f), {
      A: { kind: 'fail', code: 14 },
      B: { kind: 'stall' },
      C: { kind: 'fail', code: grpc.status.NOT_FOUND },
    });
  });
});

describe('test CSI driver as a process', () => {
  it('starts from its CLI, takes faults from CSI_DRIVER_FAULTS, and removes its sockets on SIGTERM', async () => {
    const dir = testTempDir('kts-csi-driver-main-');
    const opts = {
      endpoint: join(dir, 'csi.sock'),
      registrationDir: join(dir, 'plugins_registry'),
      driverName: DRIVER,
      nodeId: 'node-b',
      stateDir: join(dir, 'state'),
    };
    const proc = await spawnCsiDriver(opts, { CSI_DRIVER_FAULTS: 'NodeGetInfo=fail:INTERNAL' });
    const pkg = loadCsiProtos();
    const reg = caller(pkg.pluginregistration.Registration, join(opts.registrationDir, `${DRIVER}-reg.sock`));
    const node = caller(pkg.csi.v1.Node, opts.endpoint);
    try {
      assert.equal((await reg.call('GetInfo')).endpoint, opts.endpoint);
      await assert.rejects(node.call('NodeGetInfo'), { code: grpc.status.INTERNAL });
    } finally {
      reg.close();
      node.close();
      await proc.stop();
    }
    assert.equal(proc.child.exitCode, 0);
    assert.equal(existsSync(opts.endpoint) || existsSync(join(opts.registrationDir, `${DRIVER}-reg.sock`)), false);
  });

  it('comes back after SIGKILL on the same state dir, its call log continued', async () => {
    const dir = testTempDir('kts-csi-driver-restart-');
    const opts = {
      endpoint: join(dir, 'csi.sock'),
      driverName: DRIVER,
      nodeId: 'node-c',
      stateDir: join(dir, 'state'),
    };
    const pkg = loadCsiProtos();
    const codes: (number | undefined)[] = [];
    for (const faults of ['NodeGetInfo=fail:UNAVAILABLE', '']) {
      const proc = await spawnCsiDriver(opts, { CSI_DRIVER_FAULTS: faults });
      const node = caller(pkg.csi.v1.Node, opts.endpoint);
      await node.call('NodeGetInfo').catch((err: { code: number }) => codes.push(err.code));
      node.close();
      await proc.stop('SIGKILL');
    }
    assert.deepEqual(codes, [grpc.status.UNAVAILABLE]);
    const log = readCallLog(join(opts.stateDir, 'calls.jsonl')).map((c) => c.code);
    assert.deepEqual(log, [grpc.status.UNAVAILABLE, 0]);
  });
});
