import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { ConfigSeenAnnotationKey, ConfigSourceAnnotationKey } from '../../src/api/types.js';
import { PodStorage, checkAndUpdatePod, deepEqual } from '../../src/podconfig/pod-config.js';
import { createPodConfig, type PodSource, type PodUpdate } from '../../src/podconfig/index.js';
import { captureLogger, manualNowClock, mkPod, nextWithin } from './helpers.js';

/** [op, [pod names]] per emitted update: the shape the table compares. */
type Shape = Array<[string, string[]]>;
const shape = (us: PodUpdate[]): Shape => us.map((u) => [u.op, u.pods.map((p) => p.metadata!.name!)]);

const a = mkPod('a', 'uid-a');
const b = mkPod('b', 'uid-b');
const c = mkPod('c', 'uid-c');
const d = mkPod('d', 'uid-d');
const withImage = (p: Pod, image: string): Pod => ({ ...p, spec: { containers: [{ name: 'c', image }] } });
const withPhase = (p: Pod, phase: string): Pod => ({ ...p, status: { phase } });
const withMeta = (p: Pod, meta: Partial<NonNullable<Pod['metadata']>>): Pod => ({
  ...p,
  metadata: { ...p.metadata, ...meta },
});

interface Case {
  name: string;
  /** Updates applied first (their output is not checked). */
  before?: Array<Pick<PodUpdate, 'op' | 'pods'>>;
  update: Pick<PodUpdate, 'op' | 'pods'>;
  want: Shape;
}

const cases: Case[] = [
  { name: 'first SET adds every pod', update: { op: 'SET', pods: [a, b] }, want: [['ADD', ['a', 'b']]] },
  { name: 'first empty SET sends one empty ADD (source ready)', update: { op: 'SET', pods: [] }, want: [['ADD', []]] },
  {
    name: 'second empty SET sends nothing',
    before: [{ op: 'SET', pods: [] }],
    update: { op: 'SET', pods: [] },
    want: [],
  },
  {
    name: 'unchanged SET is a no-op',
    before: [{ op: 'SET', pods: [a, b] }],
    update: { op: 'SET', pods: [a, b] },
    want: [],
  },
  {
    // The same pod objects are recognised as merged before (no comparison), but only while
    // what they were merged into is still held.
    name: 'the same pod object again after its REMOVE is added again',
    before: [
      { op: 'SET', pods: [a, b] },
      { op: 'REMOVE', pods: [a] },
    ],
    update: { op: 'SET', pods: [a, b] },
    want: [['ADD', ['a']]],
  },
  {
    name: 'first SET of an unchanged source still only ADDs',
    update: { op: 'SET', pods: [a] },
    want: [['ADD', ['a']]],
  },
  {
    name: 'SET adds a new pod',
    before: [{ op: 'SET', pods: [a] }],
    update: { op: 'SET', pods: [a, b] },
    want: [['ADD', ['b']]],
  },
  {
    name: 'SET removes a missing pod',
    before: [{ op: 'SET', pods: [a, b] }],
    update: { op: 'SET', pods: [b] },
    want: [['REMOVE', ['a']]],
  },
  {
    name: 'spec change is an UPDATE',
    before: [{ op: 'SET', pods: [a] }],
    update: { op: 'SET', pods: [withImage(a, 'busybox:1.37')] },
    want: [['UPDATE', ['a']]],
  },
  {
    name: 'label change is an UPDATE',
    before: [{ op: 'SET', pods: [a] }],
    update: { op: 'SET', pods: [withMeta(a, { labels: { app: 'x' } })] },
    want: [['UPDATE', ['a']]],
  },
  {
    name: 'annotation change is an UPDATE',
    before: [{ op: 'SET', pods: [a] }],
    update: { op: 'SET', pods: [withMeta(a, { annotations: { 'example.com/x': '1' } })] },
    want: [['UPDATE', ['a']]],
  },
  {
    name: 'a different config.seen is not a change',
    before: [{ op: 'SET', pods: [a] }],
    update: { op: 'SET', pods: [withMeta(a, { annotations: { [ConfigSeenAnnotationKey]: '2030-01-01T00:00:00Z' } })] },
    want: [],
  },
  {
    name: 'status-only change is a RECONCILE',
    before: [{ op: 'SET', pods: [a] }],
    update: { op: 'SET', pods: [withPhase(a, 'Running')] },
    want: [['RECONCILE', ['a']]],
  },
  {
    name: 'resourceVersion-only change emits nothing',
    before: [{ op: 'SET', pods: [a] }],
    update: { op: 'SET', pods: [withMeta(a, { resourceVersion: '42' })] },
    want: [],
  },
  {
    name: 'deletionTimestamp newly set is a DELETE',
    before: [{ op: 'SET', pods: [a] }],
    update: {
      op: 'SET',
      pods: [withMeta(a, { deletionTimestamp: new Date('2024-05-01T10:00:30Z'), deletionGracePeriodSeconds: 30 })],
    },
    want: [['DELETE', ['a']]],
  },
  {
    name: 'SET orders REMOVE, ADD, UPDATE, DELETE, RECONCILE',
    before: [{ op: 'SET', pods: [a, b, c, d] }],
    update: {
      op: 'SET',
      pods: [
        withPhase(d, 'Running'),
        withMeta(c, { deletionTimestamp: new Date('2024-05-01T10:00:30Z') }),
        withImage(b, 'busybox:1.37'),
        mkPod('e', 'uid-e'),
      ],
    },
    want: [
      ['REMOVE', ['a']],
      ['ADD', ['e']],
      ['UPDATE', ['b']],
      ['DELETE', ['c']],
      ['RECONCILE', ['d']],
    ],
  },
  {
    name: 'a changed UID under the same name is REMOVE + ADD',
    before: [{ op: 'SET', pods: [a] }],
    update: { op: 'SET', pods: [mkPod('a', 'uid-a2')] },
    want: [
      ['REMOVE', ['a']],
      ['ADD', ['a']],
    ],
  },
  {
    name: 'duplicate names within a SET keep the first',
    update: { op: 'SET', pods: [a, mkPod('a', 'uid-other')] },
    want: [['ADD', ['a']]],
  },
  { name: 'incremental ADD', update: { op: 'ADD', pods: [a] }, want: [['ADD', ['a']]] },
  {
    name: 'incremental ADD of a known, unchanged pod is a no-op',
    before: [{ op: 'ADD', pods: [a] }],
    update: { op: 'ADD', pods: [a] },
    want: [],
  },
  {
    name: 'incremental UPDATE',
    before: [{ op: 'ADD', pods: [a, b] }],
    update: { op: 'UPDATE', pods: [withImage(a, 'x:1')] },
    want: [['UPDATE', ['a']]],
  },
  {
    name: 'incremental UPDATE of status only',
    before: [{ op: 'ADD', pods: [a] }],
    update: { op: 'UPDATE', pods: [withPhase(a, 'Running')] },
    want: [['RECONCILE', ['a']]],
  },
  {
    name: 'incremental DELETE',
    before: [{ op: 'ADD', pods: [a] }],
    update: { op: 'DELETE', pods: [withMeta(a, { deletionTimestamp: new Date('2024-05-01T10:00:30Z') })] },
    want: [['DELETE', ['a']]],
  },
  {
    name: 'incremental REMOVE',
    before: [{ op: 'ADD', pods: [a, b] }],
    update: { op: 'REMOVE', pods: [a] },
    want: [['REMOVE', ['a']]],
  },
  {
    name: 'incremental REMOVE of an unknown pod is a no-op',
    before: [{ op: 'ADD', pods: [a] }],
    update: { op: 'REMOVE', pods: [b] },
    want: [],
  },
  { name: 'incremental ops do not mark the source seen (no ready ADD)', update: { op: 'UPDATE', pods: [] }, want: [] },
];

describe('podStorage.merge', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const s = new PodStorage({ logger: captureLogger().logger });
      for (const u of tc.before ?? []) s.merge('api', u);
      const got = s.merge('api', tc.update);
      assert.deepEqual(shape(got), tc.want);
      for (const u of got) assert.equal(u.source, 'api');
    });
  }

  it('annotates the source and the first-seen time, and keeps that time on updates', () => {
    const clock = manualNowClock(Date.parse('2024-05-01T10:00:00Z'));
    const s = new PodStorage({ clock, logger: captureLogger().logger });
    const [add] = s.merge('file', { op: 'SET', pods: [a] });
    const ann = add!.pods[0]!.metadata!.annotations!;
    assert.equal(ann[ConfigSourceAnnotationKey], 'file');
    assert.equal(ann[ConfigSeenAnnotationKey], '2024-05-01T10:00:00.000Z');

    clock.set(Date.parse('2024-05-01T11:00:00Z'));
    const [upd] = s.merge('file', { op: 'SET', pods: [withImage(a, 'busybox:2')] });
    assert.equal(upd!.op, 'UPDATE');
    assert.equal(upd!.pods[0]!.metadata!.annotations![ConfigSeenAnnotationKey], '2024-05-01T10:00:00.000Z');
    assert.equal(upd!.pods[0]!.spec!.containers[0]!.image, 'busybox:2');
  });

  it('sources are independent', () => {
    const s = new PodStorage({ logger: captureLogger().logger });
    s.merge('api', { op: 'SET', pods: [a] });
    assert.deepEqual(shape(s.merge('file', { op: 'SET', pods: [b] })), [['ADD', ['b']]]);
    assert.deepEqual(shape(s.merge('file', { op: 'SET', pods: [] })), [['REMOVE', ['b']]]);
    assert.deepEqual(
      s.podsOf('api').map((p) => p.metadata!.name),
      ['a'],
    );
  });

  it('hands out copies: neither the input nor the output aliases what it stores', () => {
    const s = new PodStorage({ logger: captureLogger().logger });
    const input = mkPod('x', 'uid-x');
    const [add] = s.merge('api', { op: 'SET', pods: [input] });
    assert.equal(input.metadata!.annotations, undefined, 'input not mutated');
    add!.pods[0]!.spec!.containers[0]!.image = 'mutated';
    input.spec!.containers[0]!.image = 'mutated-too';
    assert.deepEqual(s.merge('api', { op: 'SET', pods: [mkPod('x', 'uid-x')] }), []);
  });

  it('a REMOVE carries the stored pod, a DELETE the new one', () => {
    const s = new PodStorage({ logger: captureLogger().logger });
    s.merge('api', { op: 'SET', pods: [a, b] });
    const ts = new Date('2024-05-01T10:00:30Z');
    const out = s.merge('api', { op: 'SET', pods: [withMeta(b, { deletionTimestamp: ts })] });
    assert.equal(out[0]!.op, 'REMOVE');
    assert.equal(out[0]!.pods[0]!.metadata!.uid, a.metadata!.uid);
    assert.equal(out[1]!.op, 'DELETE');
    assert.equal(out[1]!.pods[0]!.metadata!.deletionTimestamp!.getTime(), ts.getTime());
  });

  it('logs dropped duplicates', () => {
    const { logger, lines } = captureLogger();
    const s = new PodStorage({ logger });
    s.merge('api', { op: 'SET', pods: [a, mkPod('a', 'uid-dup')] });
    assert.ok(lines.some((l) => /duplicated/.test(l.msg) && l.pod === 'default/a'));
  });
});

describe('checkAndUpdatePod and deepEqual', () => {
  it('treats absent and empty maps alike and Dates by time', () => {
    assert.ok(deepEqual({ x: undefined, y: [1, { z: 2 }] }, { y: [1, { z: 2 }] }));
    assert.ok(deepEqual(new Date(5), new Date(5)));
    assert.ok(!deepEqual(new Date(5), new Date(6)));
    assert.equal(checkAndUpdatePod(mkPod('p', 'u'), withMeta(mkPod('p', 'u'), { labels: {} })).change, 'none');
  });
});

/** A source whose pushes the test drives. */
class FakeSource implements PodSource {
  push: ((u: PodUpdate) => void) | undefined;
  stopped = false;
  start(push: (u: PodUpdate) => void): void {
    this.push = push;
  }
  stop(): void {
    this.stopped = true;
  }
  send(op: PodUpdate['op'], pods: Pod[]): void {
    this.push!({ op, pods, source: 'ignored' });
  }
}

describe('PodConfig', () => {
  it('delivers every update in order to a slow consumer, with the registered source name', async () => {
    const file = new FakeSource();
    const cfg = createPodConfig(new Map([['file', file]]), { logger: captureLogger().logger });
    const it = cfg.updates()[Symbol.asyncIterator]();
    file.send('SET', []);
    for (let i = 0; i < 200; i++) file.send('SET', [mkPod(`p${i}`, `uid-${i}`)]);
    const got: PodUpdate[] = [];
    for (let i = 0; i < 1 + 200 * 2 - 1; i++) got.push((await nextWithin(it)).value as PodUpdate);
    assert.deepEqual(got[0], { op: 'ADD', pods: [], source: 'file' });
    assert.deepEqual(shape(got.slice(1, 4)), [
      ['ADD', ['p0']],
      ['REMOVE', ['p0']],
      ['ADD', ['p1']],
    ]);
    assert.deepEqual(shape(got.slice(-1)), [['ADD', ['p199']]]);
    assert.ok(got.every((u) => u.source === 'file'));
    cfg.stop();
    assert.equal((await nextWithin(it)).done, true);
    assert.ok(file.stopped);
  });

  it('ends the stream after stop() once queued updates are read, and ignores later pushes', async () => {
    const src = new FakeSource();
    const cfg = createPodConfig(new Map([['api', src]]), { logger: captureLogger().logger });
    src.send('ADD', [a]);
    cfg.stop();
    src.send('ADD', [b]);
    const seen: Shape = [];
    for await (const u of cfg.updates()) seen.push(...shape([u]));
    assert.deepEqual(seen, [['ADD', ['a']]]);
  });

  it('wakes a waiting consumer', async () => {
    const src = new FakeSource();
    const cfg = createPodConfig(new Map([['api', src]]), { logger: captureLogger().logger });
    const it = cfg.updates()[Symbol.asyncIterator]();
    const pending = nextWithin(it);
    setTimeout(() => src.send('SET', [a]), 10);
    assert.deepEqual(shape([(await pending).value as PodUpdate]), [['ADD', ['a']]]);
    cfg.stop();
  });

  it('tracks sources ready (seenAllSources)', () => {
    const file = new FakeSource();
    const api = new FakeSource();
    const cfg = createPodConfig(
      new Map([
        ['file', file],
        ['api', api],
      ]),
      { logger: captureLogger().logger },
    );
    const both = new Set(['file', 'api']);
    assert.equal(cfg.seenAllSources(both), false);
    file.send('SET', []);
    assert.equal(cfg.seenAllSources(both), false);
    assert.equal(cfg.seenAllSources(new Set(['file'])), false, 'a configured source is missing from expected');
    api.send('ADD', [a]);
    assert.equal(cfg.seenAllSources(both), false, 'incremental updates do not count as the first SET');
    api.send('SET', [a]);
    assert.equal(cfg.seenAllSources(both), true);
    assert.equal(cfg.seenAllSources(new Set(['file', 'api', 'http'])), false, 'an expected source never seen');
    const http = new FakeSource();
    cfg.addSource('http', http);
    assert.equal(cfg.seenAllSources(both), false);
    http.send('SET', []);
    assert.equal(cfg.seenAllSources(new Set(['file', 'api', 'http'])), true);
    assert.throws(() => cfg.addSource('http', new FakeSource()), /already registered/);
    cfg.stop();
  });
});
