/**
 * upstream's EventCorrelator (client-go tools/record/events_cache_test.go TestEventCorrelator:
 * create a single event, the same event just counts, a different reason is not aggregated,
 * similar events aggregate, events of another object stay apart; and the spam filter's per-object
 * bucket), as our own table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AGGREGATE_MAX_EVENTS,
  COMBINED_PREFIX,
  EventCorrelator,
  SPAM_BURST,
  SPAM_REFILL_MS,
} from '../../src/events/correlator.js';
import type { KubeEvent } from '../../src/events/types.js';
import { createApiserverSink } from '../../src/events/index.js';
import { createApiClients } from '../../src/apiclient/index.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const ev = (name: string, reason: string, message: string, at = T0): KubeEvent => ({
  involvedObject: { kind: 'Pod', name, namespace: 'ns', uid: `uid-${name}` },
  type: 'Warning',
  reason,
  message,
  timestamp: new Date(at),
});
const correlator = () => new EventCorrelator({ component: 'kubelet', host: 'node1' });

test('TestEventCorrelator cases', () => {
  const cases: { name: string; previous: KubeEvent[]; event: KubeEvent; combined: boolean; sameKeyAsLast: boolean }[] =
    [
      {
        name: 'create-a-single-event',
        previous: [],
        event: ev('p', 'Failed', 'm0'),
        combined: false,
        sameKeyAsLast: false,
      },
      {
        name: 'the-same-event-should-just-count',
        previous: [ev('p', 'Failed', 'm0')],
        event: ev('p', 'Failed', 'm0'),
        combined: false,
        sameKeyAsLast: true,
      },
      {
        name: 'the-same-event-should-not-be-aggregated-with-a-different-reason',
        previous: [ev('p', 'Failed', 'm0')],
        event: ev('p', 'BackOff', 'm0'),
        combined: false,
        sameKeyAsLast: false,
      },
      {
        name: 'similar-events-should-aggregate-event',
        previous: Array.from({ length: AGGREGATE_MAX_EVENTS - 1 }, (_, i) => ev('p', 'Failed', `m${i}`)),
        event: ev('p', 'Failed', 'm-last'),
        combined: true,
        sameKeyAsLast: false,
      },
      {
        name: 'events-from-different-objects-do-not-aggregate',
        previous: Array.from({ length: AGGREGATE_MAX_EVENTS - 1 }, (_, i) => ev('other', 'Failed', `m${i}`)),
        event: ev('p', 'Failed', 'm-last'),
        combined: false,
        sameKeyAsLast: false,
      },
      {
        name: 'similar-events-older-than-the-window-do-not-aggregate',
        previous: Array.from({ length: AGGREGATE_MAX_EVENTS - 1 }, (_, i) => ev('p', 'Failed', `m${i}`)),
        event: ev('p', 'Failed', 'm-last', T0 + 601_000),
        combined: false,
        sameKeyAsLast: false,
      },
    ];
  for (const c of cases) {
    const k = correlator();
    const keys = c.previous.map((p) => k.correlate(p)!.key);
    const got = k.correlate(c.event)!;
    assert.equal(got.message.startsWith(COMBINED_PREFIX), c.combined, c.name);
    assert.equal(got.message.endsWith(c.event.message), true, c.name);
    assert.equal(got.key === keys[keys.length - 1], c.sameKeyAsLast, c.name);
  }
});

test('aggregated events share one key: later similar events patch the same Event', () => {
  const k = correlator();
  const keys = Array.from({ length: 15 }, (_, i) => k.correlate(ev('p', 'Failed', `m${i}`))!.key);
  assert.equal(new Set(keys.slice(AGGREGATE_MAX_EVENTS - 1)).size, 1);
  assert.equal(new Set(keys).size, AGGREGATE_MAX_EVENTS);
});

test('spam filter: 25 events per object, then one per 5 min; other objects unaffected', () => {
  const k = correlator();
  const passed = Array.from({ length: 40 }, (_, i) => k.correlate(ev('p', 'BackOff', 'same', T0 + i))).filter(Boolean);
  assert.equal(passed.length, SPAM_BURST);
  assert.ok(k.correlate(ev('q', 'BackOff', 'same', T0 + 50)), 'another object has its own bucket');
  assert.equal(k.correlate(ev('p', 'BackOff', 'same', T0 + 100)), undefined);
  assert.ok(k.correlate(ev('p', 'BackOff', 'same', T0 + SPAM_REFILL_MS + 100)), 'refilled after 5 min');
  assert.equal(k.correlate(ev('p', 'BackOff', 'same', T0 + SPAM_REFILL_MS + 200)), undefined);
});

test('the apiserver sink: 30 messages of one pod and reason are 9 Events and one combined, 25 writes', async () => {
  const api = await startTestApiserver();
  const clients = await createApiClients(api.kubeconfig(testTempDir('kts-correlator-')));
  try {
    const sink = createApiserverSink({ client: clients.main, nodeName: 'node1', qps: 0 });
    for (let i = 0; i < 30; i++) sink.write(ev('p', 'FailedMount', `attempt ${i}`, Date.now()));
    await waitFor('all handled', 5000, () => (sink.posted + sink.filtered === 30 ? true : undefined), 10);
    const events = api.store.list('events', 'ns') as { message: string; count: number }[];
    assert.equal(events.length, AGGREGATE_MAX_EVENTS);
    const combined = events.filter((e) => e.message.startsWith(COMBINED_PREFIX));
    assert.equal(combined.length, 1);
    assert.equal(sink.posted, SPAM_BURST);
    assert.equal(combined[0]!.count, SPAM_BURST - (AGGREGATE_MAX_EVENTS - 1));
    assert.equal(sink.filtered, 30 - SPAM_BURST);
  } finally {
    clients.close();
    await api.stop();
  }
});
