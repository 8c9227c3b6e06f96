/**
 * SystemdManager against a fake systemd peer speaking the real wire protocol
 * (test/support/fake-systemd-peer.ts): transient slices and their jobs, UnitExists, NoSuchUnit,
 * failed and unfinished jobs, property reads, and reconnecting after the peer drops us.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import {
  DBusConnectionError,
  DBusError,
  SystemdJobError,
  SystemdManager,
  UNLIMITED,
  slice,
  unitObjectPath,
  MessageType,
  type DBusClient,
  type DBusMessage,
} from '../../../src/cm/systemd/index.js';
import { JobWatcher } from '../../../src/cm/systemd/job-watcher.js';
import { startDBusDaemon } from '../../support/dbus-daemon.js';
import { startFakeSystemdPeer, type FakeSystemdPeer } from '../../support/fake-systemd-peer.js';

const POD_SLICE = 'kubepods-burstable-pod1234_5678.slice';

const podSliceProperties = () => [
  slice.description('libcontainer container kubepods-burstable-pod1234_5678.slice'),
  slice.wants(['kubepods-burstable.slice']),
  slice.defaultDependencies(false),
  slice.memoryAccounting(true),
  slice.cpuAccounting(true),
  slice.cpuWeight(39),
  slice.cpuQuotaPerSecUSec(500_000),
  slice.memoryMax(UNLIMITED),
];

const callsOf = (peer: FakeSystemdPeer, member: string): DBusMessage[] => peer.calls.filter((c) => c.member === member);

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
}

describe('SystemdManager against a fake systemd peer', () => {
  let peer: FakeSystemdPeer;
  let manager: SystemdManager;

  beforeEach(async () => {
    peer = await startFakeSystemdPeer();
    manager = await SystemdManager.connect({ socketPaths: [peer.socketPath], timeoutMs: 2000, jobTimeoutMs: 1000 });
  });

  afterEach(async () => {
    manager.close();
    await peer.close();
  });

  it('startTransientUnit sends name, mode "replace", typed a(sv) and an empty aux, and waits for JobRemoved', async () => {
    peer.jobRemoved = 150;
    const started = Date.now();
    await manager.startTransientUnit(POD_SLICE, podSliceProperties());
    assert.ok(Date.now() - started >= 140, 'resolved before JobRemoved');
    const [call] = callsOf(peer, 'StartTransientUnit');
    assert.equal(call!.signature, 'ssa(sv)a(sa(sv))');
    assert.equal(call!.path, '/org/freedesktop/systemd1');
    assert.equal(call!.destination, undefined, 'no destination on a peer-to-peer socket');
    assert.deepEqual(call!.body.slice(0, 2), [POD_SLICE, 'replace']);
    assert.deepEqual(call!.body[3], []);
    const props = new Map(call!.body[2] as Array<[string, unknown]>);
    assert.deepEqual(props.get('CPUWeight'), { sig: 't', value: 39n });
    assert.deepEqual(props.get('Wants'), { sig: 'as', value: ['kubepods-burstable.slice'] });
    assert.deepEqual(props.get('DefaultDependencies'), { sig: 'b', value: false });
    assert.deepEqual(props.get('MemoryMax'), { sig: 't', value: 2n ** 64n - 1n });
    assert.equal(peer.units.get(POD_SLICE)?.state, 'active');
  });

  it('calls Subscribe once per connection, before the first job', async () => {
    await manager.startTransientUnit('a.slice', []);
    await manager.startTransientUnit('b.slice', []);
    assert.deepEqual(
      peer.calls.map((c) => c.member),
      ['Ping', 'Subscribe', 'StartTransientUnit', 'StartTransientUnit'],
      'a peer connection is used once a Peer.Ping is answered',
    );
  });

  it('catches a JobRemoved that arrives in the same read as the reply', async () => {
    peer.jobRemoved = 'same-write';
    await manager.startTransientUnit('kubepods.slice', [slice.cpuWeight(100)]);
    await manager.stopUnit('kubepods.slice');
    assert.equal(peer.units.size, 0);
  });

  it('an existing unit is success: its live properties are set with SetUnitProperties (runtime)', async () => {
    await manager.startTransientUnit(POD_SLICE, podSliceProperties());
    await manager.startTransientUnit(POD_SLICE, [...podSliceProperties().slice(0, 4), slice.cpuWeight(80)]);
    const [set] = callsOf(peer, 'SetUnitProperties');
    assert.equal(set!.body[0], POD_SLICE);
    assert.equal(set!.body[1], true);
    assert.deepEqual(
      (set!.body[2] as Array<[string, unknown]>).map(([k]) => k),
      ['Description', 'MemoryAccounting', 'CPUWeight'],
    );
    assert.deepEqual(peer.units.get(POD_SLICE)!.properties.get('CPUWeight'), { sig: 't', value: 80n });
  });

  it('a job that ends "failed" is a SystemdJobError naming the unit and result; the unit is reset', async () => {
    peer.jobResult = () => 'failed';
    const err = await rejection(manager.startTransientUnit('bad.slice', []));
    assert.ok(err instanceof SystemdJobError, String(err));
    assert.equal(err.unit, 'bad.slice');
    assert.equal(err.result, 'failed');
    assert.equal(err.code, 'KTS_ERR_SYSTEMD_JOB');
    assert.match(err.message, /bad\.slice: StartTransientUnit job did not succeed \(result "failed"\)/);
    assert.deepEqual(
      callsOf(peer, 'ResetFailedUnit').map((c) => c.body[0]),
      ['bad.slice'],
    );
    assert.equal(peer.units.has('bad.slice'), false);
  });

  it('no JobRemoved within the job timeout is a SystemdJobError with result "timeout"', async () => {
    peer.jobRemoved = 'never';
    const started = Date.now();
    const err = await rejection(manager.startTransientUnit('slow.slice', []));
    assert.ok(err instanceof SystemdJobError && err.result === 'timeout', String(err));
    assert.match(err.message, /slow\.slice: job \/org\/freedesktop\/systemd1\/job\/\d+ did not finish within 1000 ms/);
    assert.ok(Date.now() - started >= 990);
    assert.deepEqual(
      callsOf(peer, 'ResetFailedUnit').map((c) => c.body[0]),
      ['slow.slice'],
    );
  });

  it('setUnitProperties passes runtime and a(sv); a unit systemd does not know is a DBusError NoSuchUnit', async () => {
    await manager.startTransientUnit('x.slice', []);
    await manager.setUnitProperties('x.slice', false, [slice.tasksMax(100), slice.memoryMax(1 << 30)]);
    assert.deepEqual(callsOf(peer, 'SetUnitProperties')[0]!.body[1], false);
    assert.deepEqual(peer.units.get('x.slice')!.properties.get('MemoryMax'), { sig: 't', value: 1073741824n });
    const err = await rejection(manager.setUnitProperties('gone.slice', true, [slice.cpuWeight(1)]));
    assert.ok(err instanceof DBusError && err.errorName === 'org.freedesktop.systemd1.NoSuchUnit', String(err));
  });

  it('stopUnit waits for its job; a unit that does not exist is already stopped', async () => {
    await manager.startTransientUnit('x.slice', []);
    await manager.stopUnit('x.slice');
    assert.equal(peer.units.has('x.slice'), false);
    await manager.stopUnit('x.slice');
    assert.equal(callsOf(peer, 'StopUnit').length, 2);
  });

  it('resetFailedUnit ignores NoSuchUnit', async () => {
    await manager.resetFailedUnit('never-existed.slice');
    assert.equal(callsOf(peer, 'ResetFailedUnit').length, 1);
  });

  it('getUnitProperty reads through the path GetUnit returns', async () => {
    await manager.startTransientUnit(POD_SLICE, podSliceProperties());
    assert.deepEqual(await manager.getUnitProperty(POD_SLICE, 'org.freedesktop.systemd1.Unit', 'ActiveState'), {
      sig: 's',
      value: 'active',
    });
    assert.deepEqual(await manager.getUnitProperty(POD_SLICE, 'org.freedesktop.systemd1.Slice', 'ControlGroup'), {
      sig: 's',
      value: '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice',
    });
    const get = callsOf(peer, 'Get')[0]!;
    assert.equal(get.path, '/org/freedesktop/systemd1/unit/kubepods_2dburstable_2dpod1234_5f5678_2eslice');
    assert.equal(get.interface, 'org.freedesktop.DBus.Properties');
    const err = await rejection(manager.getUnitProperty('nope.slice', 'org.freedesktop.systemd1.Unit', 'ActiveState'));
    assert.ok(err instanceof DBusError && err.errorName === 'org.freedesktop.systemd1.NoSuchUnit', String(err));
  });

  it('reconnects lazily after the peer drops the connection (daemon-reexec) and subscribes again', async () => {
    await manager.startTransientUnit('a.slice', []);
    peer.dropConnections();
    await new Promise((r) => setTimeout(r, 20));
    await manager.startTransientUnit('b.slice', []);
    assert.equal(peer.connections, 2);
    assert.equal(callsOf(peer, 'Subscribe').length, 2);
    assert.ok(peer.units.has('b.slice'));
  });

  it('a connection lost while waiting for a job is retried once on a new connection', async () => {
    peer.jobRemoved = 'never';
    const pending = manager.startTransientUnit('c.slice', [slice.cpuWeight(5)]);
    while (callsOf(peer, 'StartTransientUnit').length === 0) await new Promise((r) => setTimeout(r, 5));
    peer.jobRemoved = 10;
    peer.dropConnections();
    await pending; // the retry finds the unit existing: success, properties set
    assert.equal(peer.connections, 2);
    assert.equal(callsOf(peer, 'SetUnitProperties').length, 1);
  });

  it('after close() every method rejects without reconnecting', async () => {
    manager.close();
    const err = await rejection(manager.stopUnit('a.slice'));
    assert.ok(err instanceof DBusConnectionError && /closed by its caller/.test(err.message), String(err));
    assert.equal(peer.connections, 1);
  });
});

describe('SystemdManager.connect', () => {
  it('tries the sockets in order and uses the first that answers', async () => {
    const peer = await startFakeSystemdPeer();
    try {
      const m = await SystemdManager.connect({ socketPaths: [`${peer.socketPath}.missing`, peer.socketPath] });
      await m.resetFailedUnit('x.slice');
      m.close();
      assert.equal(peer.connections, 1);
    } finally {
      await peer.close();
    }
  });

  it('no socket answering is a DBusConnectionError naming each one', async () => {
    const err = await rejection(
      SystemdManager.connect({ socketPaths: ['/nonexistent/a', { path: '/nonexistent/b', bus: true }] }),
    );
    assert.ok(err instanceof DBusConnectionError && err.reason === 'connect', String(err));
    assert.match(
      err.message,
      /cannot reach systemd over D-Bus: cannot connect .*\/nonexistent\/a.*; cannot connect .*\/nonexistent\/b/,
    );
  });
});

describe('unit property helpers and object paths', () => {
  it('give each property the D-Bus type systemd declares', () => {
    assert.deepEqual(slice.cpuWeight(100), { name: 'CPUWeight', value: { sig: 't', value: 100n } });
    assert.deepEqual(slice.cpuShares(2n), { name: 'CPUShares', value: { sig: 't', value: 2n } });
    assert.deepEqual(slice.delegate(true), { name: 'Delegate', value: { sig: 'b', value: true } });
    assert.deepEqual(slice.description('d'), { name: 'Description', value: { sig: 's', value: 'd' } });
    for (const p of [
      slice.cpuQuotaPeriodUSec(100_000),
      slice.memoryLimit(1),
      slice.tasksMax(1),
      slice.ioAccounting(true),
      slice.tasksAccounting(false),
    ]) {
      assert.match(p.value.sig, /^[tb]$/);
    }
  });

  it('escape unit names as systemd does (bus_path_escape)', () => {
    assert.equal(unitObjectPath('kubepods.slice'), '/org/freedesktop/systemd1/unit/kubepods_2eslice');
    assert.equal(unitObjectPath('1x.slice'), '/org/freedesktop/systemd1/unit/_31x_2eslice');
    assert.equal(unitObjectPath('a@b-c\\d.service'), '/org/freedesktop/systemd1/unit/a_40b_2dc_5cd_2eservice');
    assert.equal(unitObjectPath(''), '/org/freedesktop/systemd1/unit/_');
  });
});

describe('SystemdManager on a message bus (a private dbus-daemon, the fake owning org.freedesktop.systemd1)', () => {
  it('says Hello, addresses systemd by name, gets JobRemoved through its match rule', async () => {
    const daemon = await startDBusDaemon();
    const peer = await startFakeSystemdPeer();
    try {
      await peer.joinBus(daemon.socketPath);
      const m = await SystemdManager.connect({
        socketPaths: [{ path: daemon.socketPath, bus: true }],
        jobTimeoutMs: 2000,
      });
      await m.startTransientUnit('kubepods.slice', [slice.cpuWeight(100)]);
      assert.deepEqual(await m.getUnitProperty('kubepods.slice', 'org.freedesktop.systemd1.Unit', 'ActiveState'), {
        sig: 's',
        value: 'active',
      });
      await m.stopUnit('kubepods.slice');
      m.close();
      assert.deepEqual(
        peer.calls.map((c) => c.member),
        ['Subscribe', 'StartTransientUnit', 'GetUnit', 'Get', 'StopUnit'],
      );
      assert.ok(
        peer.calls.every((c) => c.destination === 'org.freedesktop.systemd1' && /^:1\.\d+$/.test(c.sender ?? '')),
      );
    } finally {
      await peer.close();
      await daemon.stop();
    }
  });
});

describe('JobWatcher', () => {
  /** A DBusClient that only delivers the signals a test emits. */
  function signalSource() {
    const handlers: Array<(m: DBusMessage) => void> = [];
    const client: DBusClient = {
      uniqueName: undefined,
      closed: false,
      close: () => undefined,
      onClose: () => undefined,
      call: () => Promise.resolve([]),
      onSignal: (h) => (handlers.push(h), () => undefined),
    };
    const emit = (sender: string, job: string, result: string) =>
      handlers.forEach((h) =>
        h({
          type: MessageType.SIGNAL,
          flags: 0,
          serial: 1,
          sender,
          path: '/org/freedesktop/systemd1',
          interface: 'org.freedesktop.systemd1.Manager',
          member: 'JobRemoved',
          signature: 'uoss',
          body: [1, job, 'u.slice', result],
        }),
      );
    return { client, emit };
  }

  it("on a bus, takes JobRemoved only from systemd's unique name", async () => {
    const { client, emit } = signalSource();
    const jobs = new JobWatcher(client);
    jobs.acceptOnlyFrom(':1.1');
    const waiting = jobs.wait('/org/freedesktop/systemd1/job/1', 'u.slice', 500);
    emit(':1.66', '/org/freedesktop/systemd1/job/1', 'done'); // forged by another client
    emit(':1.1', '/org/freedesktop/systemd1/job/1', 'failed');
    assert.equal(await waiting, 'failed');
  });

  it('keeps a result that arrived before anyone waited for it', async () => {
    const { client, emit } = signalSource();
    const jobs = new JobWatcher(client);
    emit(':1.1', '/org/freedesktop/systemd1/job/9', 'canceled');
    assert.equal(await jobs.wait('/org/freedesktop/systemd1/job/9', 'u.slice', 10), 'canceled');
  });
});
