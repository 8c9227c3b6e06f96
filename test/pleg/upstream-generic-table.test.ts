// The generic PLEG against upstream's own cases, with both differs (the addon's and the TS twin):
// upstream pkg/kubelet/pleg/generic_test.go TestRelisting, TestDetectingContainerDeaths,
// TestRelistingWithSandboxes, TestRelistWithCache, TestRemoveCacheEntry, TestHealthy and
// TestRelistWithReinspection. Not mirrored: TestEventChannelFull (our listeners are called, there
// is no channel to fill) and TestRelistIPChange (the evented PLEG's cache path; ours relists).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { implementations } from '../../src/cmd/hot-paths.js';
import { createGenericPLEG, createPodStatusCache, type PodLifecycleEvent } from '../../src/pleg/index.js';
import type { RuntimeContainerState } from '../../src/kuberuntime/types.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';

type Step = {
  containers?: Array<[uid: string, cid: string, state: RuntimeContainerState | undefined]>;
  sandboxes?: Array<[uid: string, sid: string, ready: boolean | undefined]>;
  events: string[];
};

/** Rows: a sequence of runtime states, each followed by one relist and the events it must emit (sorted). */
const RELIST_ROWS: Array<[name: string, upstream: string, steps: Step[]]> = [
  [
    'first sight of each state; a quiet relist; deaths and removals; a new container',
    'TestRelisting',
    [
      {
        containers: [
          ['1234', 'c1', 'exited'],
          ['1234', 'c2', 'running'],
          ['1234', 'c3', 'running'],
          ['4567', 'c1', 'exited'],
        ],
        events: [
          '1234/c1/ContainerDied',
          '1234/c2/ContainerStarted',
          '1234/c3/ContainerStarted',
          '4567/c1/ContainerDied',
        ],
      },
      { events: [] },
      {
        containers: [
          ['1234', 'c2', 'exited'],
          ['1234', 'c3', undefined],
          ['1234', 'c4', 'running'],
          ['4567', 'c1', undefined],
        ],
        events: [
          '1234/c2/ContainerDied',
          '1234/c3/ContainerDied',
          '1234/c3/ContainerRemoved',
          '1234/c4/ContainerStarted',
          '4567/c1/ContainerRemoved',
        ],
      },
    ],
  ],
  [
    'a running container that exits, and one that disappears',
    'TestDetectingContainerDeaths',
    [
      {
        containers: [
          ['1234', 'c1', 'running'],
          ['1234', 'c2', 'running'],
        ],
        events: ['1234/c1/ContainerStarted', '1234/c2/ContainerStarted'],
      },
      {
        containers: [
          ['1234', 'c1', 'exited'],
          ['1234', 'c2', undefined],
        ],
        events: ['1234/c1/ContainerDied', '1234/c2/ContainerDied', '1234/c2/ContainerRemoved'],
      },
    ],
  ],
  [
    'sandboxes are containers to the PLEG: ready → started, not ready → died, gone → removed',
    'TestRelistingWithSandboxes',
    [
      {
        sandboxes: [
          ['1234', 's1', true],
          ['4567', 's2', false],
        ],
        events: ['1234/s1/ContainerStarted', '4567/s2/ContainerDied'],
      },
      { events: [] },
      {
        sandboxes: [
          ['1234', 's1', false],
          ['4567', 's2', undefined],
        ],
        events: ['1234/s1/ContainerDied', '4567/s2/ContainerRemoved'],
      },
    ],
  ],
];

const fmt = (e: PodLifecycleEvent) => `${e.id}/${e.data}/${e.type}`;

for (const impl of implementations('pleg')) {
  describe(`generic PLEG, upstream's cases (${impl.name} differ)`, () => {
    const setUp = () => {
      const rt = new FakeRuntime();
      const cache = createPodStatusCache();
      const pleg = createGenericPLEG({ ...rt.plegOptions(), differ: impl.createRelistDiffer(), cache });
      const events: PodLifecycleEvent[] = [];
      pleg.watch((e) => events.push(e));
      return { rt, cache, pleg, events };
    };

    for (const [name, upstream, steps] of RELIST_ROWS) {
      it(`${upstream}: ${name}`, async () => {
        const { rt, pleg, events } = setUp();
        for (const [i, step] of steps.entries()) {
          for (const [uid, cid, state] of step.containers ?? []) rt.setContainer(uid, cid, state);
          for (const [uid, sid, ready] of step.sandboxes ?? []) rt.setSandbox(uid, sid, ready);
          events.length = 0;
          await pleg.relist();
          assert.deepEqual(events.map(fmt).sort(), [...step.events].sort(), `relist ${i + 1}`);
        }
      });
    }

    it('TestRelistWithCache: a failed status read sends no events and caches the error; the next good read sends them', async () => {
      const { rt, cache, pleg, events } = setUp();
      rt.setContainer('1234', 'c1', 'running');
      rt.setContainer('4567', 'c2', 'running');
      rt.failStatus.add('1234');
      await pleg.relist();
      assert.deepEqual(events.map(fmt), ['4567/c2/ContainerStarted'], 'only the pod whose status was read');
      assert.ok(cache.get('1234')?.error, 'the error is in the cache');
      assert.equal(cache.get('1234')?.status, undefined);
      events.length = 0;
      await pleg.relist();
      assert.deepEqual(events.map(fmt), [], 'still failing: still no events (not repeated every relist)');
      rt.failStatus.clear();
      await pleg.relist();
      assert.deepEqual(events.map(fmt), ['1234/c1/ContainerStarted'], 'the events come once the read succeeds');
      assert.equal(cache.get('1234')?.error, undefined);
      assert.equal(cache.get('1234')?.status?.containerStatuses[0]?.state, 'running');
    });

    it('TestRelistWithReinspection: a pod whose inspection failed is inspected again with no new change, and its events recur', async () => {
      const { rt, pleg, events } = setUp();
      rt.setContainer('1234', 'c1', 'running');
      rt.failStatus.add('1234');
      await pleg.relist();
      assert.deepEqual(events, []);
      rt.failStatus.clear();
      await pleg.relist();
      assert.deepEqual(events.map(fmt), ['1234/c1/ContainerStarted']);
      events.length = 0;
      await pleg.relist();
      assert.deepEqual(events, [], 'inspected once more only while it failed');
    });

    it('TestRemoveCacheEntry: a pod gone from the runtime reads as an empty status', async () => {
      const { rt, cache, pleg } = setUp();
      rt.setContainer('1234', 'c1', 'running');
      await pleg.relist();
      rt.setContainer('1234', 'c1', undefined);
      await pleg.relist();
      const entry = cache.get('1234');
      assert.equal(entry?.error, undefined);
      assert.deepEqual(entry?.status?.containerStatuses ?? [], []);
      assert.deepEqual(entry?.status?.sandboxStatuses ?? [], []);
    });

    it('TestHealthy: unhealthy until the first relist succeeds, healthy after it, unhealthy past the threshold', async () => {
      let now = 1_000_000;
      const clock = { now: () => now, setTimeout: () => ({ cancel() {} }) };
      const rt = new FakeRuntime();
      const pleg = createGenericPLEG({
        ...rt.plegOptions(),
        differ: impl.createRelistDiffer(),
        cache: createPodStatusCache(),
        clock,
      });
      assert.deepEqual(pleg.healthy(), { ok: false, message: 'pleg has yet to be successful' });
      await pleg.relist();
      assert.equal(pleg.healthy().ok, true);
      now += 3 * 60_000 + 1;
      const h = pleg.healthy();
      assert.equal(h.ok, false);
      assert.match(h.message!, /pleg was last seen active 180s ago; threshold is 180s/);
      await pleg.relist();
      assert.equal(pleg.healthy().ok, true, 'a relist that succeeds again makes it healthy');
    });

    it('a relist that cannot list keeps it unhealthy from the start', async () => {
      const rt = new FakeRuntime();
      const pleg = createGenericPLEG({
        ...rt.plegOptions(),
        differ: impl.createRelistDiffer(),
        source: { listRaw: () => Promise.reject(new Error('runtime down')) },
        cache: createPodStatusCache(),
      });
      await pleg.relist();
      assert.deepEqual(pleg.healthy(), { ok: false, message: 'pleg has yet to be successful' });
    });
  });
}
