/**
 * The endpoint over a real socket. Upstream: endpoint_test.go (TestAllocate, TestGetPreferredAllocation,
 * the stopped endpoint); ours: the RPC deadline upstream does not have, and the Allocate answer's
 * bytes kept as sent (unknown fields survive into the checkpoint).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { Endpoint } from '../../src/devicemanager/endpoint.js';
import { PluginClient } from '../../src/devicemanager/plugin-client.js';
import {
  DEVICE_PLUGIN_SERVICE,
  decodeContainerResponse,
  devicePluginService,
  encodeContainerResponse,
} from '../../src/devicemanager/proto.js';
import { testTempDir } from '../support/temp-dir.js';

/** A ContainerAllocateResponse with an env and an unknown field 15 (varint 7) a newer API might add. */
const KNOWN = encodeContainerResponse({ envs: { A: '1' } });
const WITH_UNKNOWN = Buffer.concat([KNOWN, Buffer.from([15 << 3, 7])]);
const FRAMED = Buffer.concat([Buffer.from([0x0a, WITH_UNKNOWN.length]), WITH_UNKNOWN]);

const servers: grpc.Server[] = [];
const clients: PluginClient[] = [];
after(() => {
  for (const c of clients) c.disconnect();
  for (const s of servers) s.forceShutdown();
});

/** A plugin whose Allocate answers FRAMED as raw bytes, or never (stall). */
async function rawPlugin(stall = false): Promise<string> {
  const socket = join(testTempDir('dm-ep-'), 'p.sock');
  const def = { ...devicePluginService(DEVICE_PLUGIN_SERVICE) };
  def['Allocate'] = { ...def['Allocate']!, responseSerialize: (b: unknown) => b as Buffer };
  const server = new grpc.Server();
  servers.push(server);
  server.addService(def as unknown as grpc.ServiceDefinition, {
    GetDevicePluginOptions: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb(null, {}),
    Allocate: (_c: unknown, cb: grpc.sendUnaryData<Buffer>) => (stall ? undefined : cb(null, FRAMED)),
    GetPreferredAllocation: (_c: unknown, cb: grpc.sendUnaryData<object>) =>
      cb(null, { containerResponses: [{ deviceIDs: ['b'] }, { deviceIDs: ['c'] }] }),
  });
  await new Promise<void>((res, rej) =>
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? rej(e) : res())),
  );
  return socket;
}

async function endpoint(socket: string, rpcTimeoutMs = 5000): Promise<Endpoint> {
  const client = new PluginClient('x.io/d', socket);
  clients.push(client);
  const opts = await client.connect(2000);
  return new Endpoint('x.io/d', client, opts, { now: Date.now, graceMs: 1000, rpcTimeoutMs });
}

describe('Endpoint', () => {
  it("Allocate keeps the response's bytes as sent: an unknown field survives", async () => {
    const ep = await endpoint(await rawPlugin());
    const resp = await ep.allocate(['a']);
    assert.deepEqual(resp.containerResponses, [WITH_UNKNOWN]);
    assert.deepEqual(decodeContainerResponse(resp.containerResponses[0]!).envs, { A: '1' });
  });

  it('GetPreferredAllocation: the first container response', async () => {
    const ep = await endpoint(await rawPlugin());
    assert.deepEqual(await ep.getPreferredAllocation(['a', 'b'], [], 1), ['b']);
  });

  it('ours: Allocate has a deadline', async () => {
    const ep = await endpoint(await rawPlugin(true), 200);
    await assert.rejects(ep.allocate(['a']), /rpc error: code = DeadlineExceeded/);
  });

  it('a stopped endpoint refuses calls; the grace period runs from the stop', async () => {
    const clock = { t: 0 };
    const ep = new Endpoint('x.io/d', undefined, undefined, { now: () => clock.t, graceMs: 1000 });
    assert.equal(ep.isStopped(), true);
    await assert.rejects(ep.allocate(['a']), { message: 'endpoint x.io/d has been stopped' });
    await assert.rejects(ep.preStartContainer(['a']), { message: 'endpoint x.io/d has been stopped' });
    clock.t = 1000;
    assert.equal(ep.stopGracePeriodExpired(), false);
    clock.t = 1001;
    assert.equal(ep.stopGracePeriodExpired(), true);
  });

  it('a dial that finds nobody fails with upstream text', async () => {
    const client = new PluginClient('x.io/d', join(testTempDir('dm-ep-'), 'none.sock'));
    clients.push(client);
    await assert.rejects(client.connect(300), /failed to dial device plugin: /);
  });
});
