// The OOM watcher's two signals deduplicated into one event per kill, memcg → pod/container, the
// degraded start without /dev/kmsg, and the OOMKilled reason fix-up.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { KmsgOomWatcher, podOfMemcg } from '../../src/oom/watcher.js';
import type { OomEvent, OomKillRecord } from '../../src/oom/types.js';
import { markOomKilled } from '../../src/status/oom-killed.js';

const CID = 'a'.repeat(64);
const MEMCG = `/kubepods/burstable/pod1234-5678/${CID}`;

function harness() {
  const events: OomEvent[] = [];
  let deliver: (k: OomKillRecord[]) => void = () => undefined;
  const w = new KmsgOomWatcher({
    createKmsgWatcher: (_p, on) => {
      deliver = on;
      return { lost: () => 0, close: () => undefined };
    },
    onEvent: (e) => events.push(e),
  });
  w.start();
  const kill = (pid: number) =>
    deliver([{ seq: pid, tsUs: 1, pid, comm: 'x', constraint: 'CONSTRAINT_MEMCG', oomMemcg: MEMCG, taskMemcg: MEMCG }]);
  const counters = (n: bigint) =>
    w.observeCounters([{ memcg: MEMCG, podUid: '1234-5678', containerId: CID, oomKills: n }]);
  return { w, events, kill, counters };
}

it('maps a memcg path to the pod UID and container id', () => {
  assert.deepEqual(podOfMemcg(MEMCG), { podUid: '1234-5678', containerId: CID });
  assert.deepEqual(podOfMemcg('/kubepods/podabc'), { podUid: 'abc' });
  assert.deepEqual(podOfMemcg('/system.slice/foo.service'), {});
  assert.deepEqual(podOfMemcg('/podfake/x'), {}, 'pod segment must be under kubepods');
  // The systemd driver's names (runc's scope for containerd's containers).
  assert.deepEqual(
    podOfMemcg(
      `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice/cri-containerd-${CID}.scope`,
    ),
    { podUid: '1234-5678', containerId: CID },
  );
  assert.deepEqual(podOfMemcg('/kubepods.slice/kubepods-podabc.slice'), { podUid: 'abc' });
  assert.deepEqual(podOfMemcg('/kubepods.slice/kubepods-besteffort.slice'), {});
});

it('one event per kill: kmsg first, then the counter', () => {
  const h = harness();
  h.counters(0n);
  h.kill(10);
  h.counters(1n);
  assert.equal(h.events.length, 1);
  assert.equal(h.events[0]!.source, 'kmsg');
  assert.equal(h.events[0]!.containerId, CID);
  assert.ok(h.w.wasOomKilled(CID));
});

it('one event per kill: counter first (kmsg late or lost), then kmsg', () => {
  const h = harness();
  h.counters(0n);
  h.counters(2n);
  assert.equal(h.events.length, 2);
  assert.ok(h.events.every((e) => e.source === 'memory.events'));
  h.kill(11);
  h.kill(12);
  assert.equal(h.events.length, 2, 'kmsg records of kills already reported are dropped');
  h.kill(13);
  assert.equal(h.events.length, 3, 'a new kill is reported');
});

it('kills before the first counter sighting are history, not events', () => {
  const h = harness();
  h.counters(5n);
  assert.equal(h.events.length, 0);
});

it('without /dev/kmsg it starts degraded and still counts', () => {
  const events: OomEvent[] = [];
  const w = new KmsgOomWatcher({
    createKmsgWatcher: () => {
      throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
    },
    onEvent: (e) => events.push(e),
  });
  w.start();
  assert.equal(w.kmsgActive, false);
  w.observeCounters([{ memcg: MEMCG, podUid: 'p', containerId: CID, oomKills: 0n }]);
  w.observeCounters([{ memcg: MEMCG, podUid: 'p', containerId: CID, oomKills: 1n }]);
  assert.equal(events.length, 1);
});

it('markOomKilled rewrites Error to OOMKilled only for containers the watcher saw killed', () => {
  const term = (id: string, exitCode: number, reason: string) => ({
    terminated: {
      exitCode,
      reason,
      containerID: `containerd://${id}`,
      startedAt: new Date(0),
      finishedAt: new Date(0),
    },
  });
  const status = {
    containerStatuses: [
      {
        name: 'a',
        state: term(CID, 137, 'Error'),
        lastState: term('b'.repeat(64), 137, 'Error'),
        ready: false,
        restartCount: 1,
        image: '',
        imageID: '',
      },
      {
        name: 'c',
        state: term(CID, 0, 'Completed'),
        lastState: term('c'.repeat(64), 1, 'Error'),
        ready: false,
        restartCount: 0,
        image: '',
        imageID: '',
      },
    ],
  };
  markOomKilled(status as never, (id) => id === CID);
  assert.equal(status.containerStatuses[0]!.state.terminated.reason, 'OOMKilled');
  assert.equal(status.containerStatuses[0]!.lastState.terminated!.reason, 'Error');
  assert.equal(status.containerStatuses[1]!.state.terminated.reason, 'Completed', 'exit 0 is not an OOM kill');
});
