import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiPodStatus, Pod } from '../../src/api/types.js';
import type { EventType, ObjectReference } from '../../src/events/types.js';
import {
  DeadlineExceededMessage,
  DeadlineExceededReason,
  newActiveDeadlineHandler,
} from '../../src/kubelet/active-deadline.js';
import { apiTime } from '../../src/status/index.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const clock = { now: () => NOW, setTimeout: () => ({ cancel: () => undefined }) };

function testPod(i: number, deadline: number | undefined, startTime: Date | undefined): Pod {
  return {
    metadata: { name: `pod${i}`, namespace: 'new', uid: `uid-${i}` },
    spec: {
      containers: [{ name: 'c', image: 'i' }],
      ...(deadline === undefined ? {} : { activeDeadlineSeconds: deadline }),
    },
    status: startTime ? { startTime } : {},
  } as Pod;
}

/** upstream mockPodStatusProvider: the status of each pod it holds, by UID. */
function provider(pods: readonly Pod[]) {
  return { getPodStatus: (uid: string): ApiPodStatus | undefined => pods.find((p) => p.metadata?.uid === uid)?.status };
}

function recorder() {
  const events: { ref: ObjectReference; type: EventType; reason: string; message: string }[] = [];
  return {
    events,
    event: (ref: ObjectReference, type: EventType, reason: string, message: string) =>
      void events.push({ ref, type, reason, message }),
  };
}

// upstream pkg/kubelet/active_deadline_test.go TestActiveDeadlineHandler. (Its
// TestNewActiveDeadlineHandler checks nil arguments, which the types rule out here.)
test('active deadline handler: ShouldSync and ShouldEvict per pod', () => {
  const startTime = apiTime(NOW - 60_000);
  const pods = [
    testPod(0, 30, startTime), // exceeded its active deadline
    testPod(1, 120, startTime), // not yet
    testPod(2, undefined, startTime), // no deadline
    testPod(3, 120, undefined), // no start time
    testPod(4, undefined, undefined),
  ];
  const rec = recorder();
  const handler = newActiveDeadlineHandler({ statusProvider: provider(pods), recorder: rec, clock });
  const table: [Pod, boolean][] = [
    [pods[0]!, true],
    [pods[1]!, false],
    [pods[2]!, false],
    [pods[3]!, false],
    [pods[4]!, false],
  ];
  table.forEach(([pod, expected], i) => {
    assert.equal(handler.shouldSync(pod), expected, `[${i}] shouldSync`);
    const r = handler.shouldEvict(pod);
    assert.equal(r.evict, expected, `[${i}] shouldEvict.evict`);
    if (expected)
      assert.deepEqual(
        [r.reason, r.message],
        [DeadlineExceededReason, DeadlineExceededMessage],
        `[${i}] reason and message`,
      );
  });
  assert.deepEqual(
    rec.events,
    [
      {
        ref: { kind: 'Pod', apiVersion: 'v1', name: 'pod0', namespace: 'new', uid: 'uid-0' },
        type: 'Normal',
        reason: 'DeadlineExceeded',
        message: 'Pod was active on the node longer than the specified deadline',
      },
    ],
    'one event, for the pod evicted, and only by shouldEvict',
  );
});

test('active deadline: the deadline is reached at exactly activeDeadlineSeconds', () => {
  const pods = [testPod(0, 60, apiTime(NOW - 60_000)), testPod(1, 60, apiTime(NOW - 59_000))];
  const handler = newActiveDeadlineHandler({ statusProvider: provider(pods), recorder: recorder(), clock });
  assert.deepEqual(
    pods.map((p) => handler.shouldSync(p)),
    [true, false],
  );
});

test("active deadline: the status we computed wins; the pod's own status (from the API, a JSON string) is the fallback", () => {
  const fromApi = testPod(0, 30, '2025-12-31T23:59:00Z' as unknown as Date);
  const empty = { getPodStatus: () => undefined };
  assert.equal(
    newActiveDeadlineHandler({ statusProvider: empty, recorder: recorder(), clock }).shouldSync(fromApi),
    true,
    'API start time a minute ago',
  );
  const restarted = { getPodStatus: () => ({ startTime: apiTime(NOW - 10_000) }) };
  assert.equal(
    newActiveDeadlineHandler({ statusProvider: restarted, recorder: recorder(), clock }).shouldSync(fromApi),
    false,
    'ours: ten seconds ago',
  );
  const garbage = testPod(1, 30, 'not a time' as unknown as Date);
  assert.equal(
    newActiveDeadlineHandler({ statusProvider: empty, recorder: recorder(), clock }).shouldSync(garbage),
    false,
    'an unreadable time is no start time',
  );
});
