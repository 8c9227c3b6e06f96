import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { CsiError } from '../../../src/errors.js';
import { CsiNodeClient } from '../../../src/volume/csi/node-client.js';
import { CSI_NODE_SERVICE } from '../../../src/volume/csi/proto.js';
import { testTempDir } from '../../support/temp-dir.js';
import { stall, startServer, type TestServer } from './grpc-server.js';

const dir = testTempDir('kts-csi-node-');
const servers: TestServer[] = [];
const clients: CsiNodeClient[] = [];
after(async () => {
  for (const c of clients) c.close();
  for (const s of servers) await s.stop();
});

const CAP = { accessMode: 'SINGLE_NODE_WRITER' as const, fsType: 'ext4', mountFlags: ['noatime'] };

async function driver(name: string, node: Record<string, (r: Record<string, unknown>) => object | Promise<object>>) {
  const s = await startServer(join(dir, `${name}.sock`), { [CSI_NODE_SERVICE]: node });
  servers.push(s);
  const c = new CsiNodeClient(s.socketPath, 500);
  clients.push(c);
  return { s, c };
}

describe('CsiNodeClient over a unix socket', () => {
  it('NodeGetInfo maps node id, max volumes and topology', async () => {
    const { c } = await driver('info', {
      NodeGetInfo: () => ({ nodeId: 'n1', maxVolumesPerNode: '16', accessibleTopology: { segments: { zone: 'z1' } } }),
    });
    assert.deepEqual(await c.nodeGetInfo(), {
      nodeId: 'n1',
      maxVolumesPerNode: 16,
      accessibleTopology: { zone: 'z1' },
    });
  });

  it('NodeGetInfo refuses an empty node id', async () => {
    const { c } = await driver('noid', { NodeGetInfo: () => ({}) });
    await assert.rejects(c.nodeGetInfo(), (e: CsiError) => e.code === 'KTS_ERR_CSI' && /empty node_id/.test(e.message));
  });

  it('NodeGetCapabilities returns the RPC types', async () => {
    const { c } = await driver('caps', {
      NodeGetCapabilities: () => ({
        capabilities: [{ rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }, { rpc: { type: 'GET_VOLUME_STATS' } }, {}],
      }),
    });
    assert.deepEqual([...(await c.nodeGetCapabilities())].sort(), ['GET_VOLUME_STATS', 'STAGE_UNSTAGE_VOLUME']);
  });

  it('stage, publish, unpublish, unstage send the spec fields', async () => {
    const ok = () => ({});
    const { s, c } = await driver('mount', {
      NodeStageVolume: ok,
      NodePublishVolume: ok,
      NodeUnpublishVolume: ok,
      NodeUnstageVolume: ok,
    });
    await c.nodeStageVolume({ volumeId: 'v1', stagingTargetPath: '/g', capability: CAP, volumeContext: { a: 'b' } });
    await c.nodePublishVolume({
      volumeId: 'v1',
      stagingTargetPath: '/g',
      targetPath: '/t',
      capability: CAP,
      readonly: true,
    });
    await c.nodeUnpublishVolume('v1', '/t');
    await c.nodeUnstageVolume('v1', '/g');
    assert.deepEqual(
      s.calls.map((x) => x.method),
      ['NodeStageVolume', 'NodePublishVolume', 'NodeUnpublishVolume', 'NodeUnstageVolume'],
    );
    const stage = s.calls[0]!.request;
    assert.equal(stage.stagingTargetPath, '/g');
    assert.deepEqual(stage.volumeContext, { a: 'b' });
    const capability = stage.volumeCapability as {
      mount: { fsType: string; mountFlags: string[] };
      accessMode: { mode: string };
    };
    assert.equal(capability.mount.fsType, 'ext4');
    assert.deepEqual(capability.mount.mountFlags, ['noatime']);
    assert.equal(capability.accessMode.mode, 'SINGLE_NODE_WRITER');
    const publish = s.calls[1]!.request;
    assert.equal(publish.targetPath, '/t');
    assert.equal(publish.readonly, true);
    assert.deepEqual(s.calls[2]!.request, { volumeId: 'v1', targetPath: '/t' });
  });

  it('NodeGetVolumeStats maps bytes, inodes and condition', async () => {
    const { c } = await driver('stats', {
      NodeGetVolumeStats: () => ({
        usage: [
          { unit: 'BYTES', total: '1000', used: '100', available: '900' },
          { unit: 'INODES', total: '10', used: '1', available: '9' },
        ],
        volumeCondition: { abnormal: true, message: 'disk gone' },
      }),
    });
    assert.deepEqual(await c.nodeGetVolumeStats('v1', '/t'), {
      bytes: { total: 1000, used: 100, available: 900 },
      inodes: { total: 10, used: 1, available: 9 },
      condition: { abnormal: true, message: 'disk gone' },
    });
  });

  it('NodeExpandVolume sends the capacity and returns the new size', async () => {
    const { s, c } = await driver('expand', { NodeExpandVolume: () => ({ capacityBytes: '2048' }) });
    assert.equal(await c.nodeExpandVolume({ volumeId: 'v1', volumePath: '/t', requiredBytes: 2048 }), 2048);
    assert.deepEqual(s.calls[0]!.request.capacityRange, { requiredBytes: '2048', limitBytes: '0' });
  });

  it('a stalled call fails at its deadline with KTS_ERR_CSI_TIMEOUT', async () => {
    const { c } = await driver('stall', { NodePublishVolume: stall });
    const t0 = Date.now();
    await assert.rejects(
      c.nodePublishVolume({ volumeId: 'v', targetPath: '/t', capability: CAP }),
      (e: CsiError) => e instanceof CsiError && e.code === 'KTS_ERR_CSI_TIMEOUT' && e.method === 'NodePublishVolume',
    );
    assert.ok(Date.now() - t0 < 3000);
  });

  it('a driver error keeps its gRPC code and words', async () => {
    const { c } = await driver('fail', {
      NodeUnstageVolume: () =>
        Promise.reject(Object.assign(new Error('busy'), { code: grpc.status.FAILED_PRECONDITION })),
    });
    await assert.rejects(
      c.nodeUnstageVolume('v', '/g'),
      (e: CsiError) => e.grpcCode === grpc.status.FAILED_PRECONDITION && /FAILED_PRECONDITION: busy/.test(e.message),
    );
  });

  it('an absent socket is a KTS_ERR_CSI (or timeout) error, not a crash', async () => {
    const c = new CsiNodeClient(join(dir, 'absent.sock'), 300);
    clients.push(c);
    await assert.rejects(c.nodeGetInfo(), (e: CsiError) => e instanceof CsiError);
  });
});
