// The relist differ's contract (src/pleg/relist-types.ts), case by case, for every implementation
// on this host and the conventional reference (protobufjs objects + generateEvents).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { implementations } from '../../src/cmd/hot-paths.js';
import { KubeletError } from '../../src/errors.js';
import type { RelistDiffer, RelistResult } from '../../src/pleg/relist-types.js';
import { createConventionalDiffer } from '../../bench/fixtures/relist-conventional.js';
import {
  CONTAINER_NAME,
  encodeContainers,
  encodeSandboxes,
  PbWriter,
  POD_NAME,
  POD_NAMESPACE,
  POD_UID,
  type FxContainer,
  type FxSandbox,
} from '../../bench/fixtures/relist-model.js';

const impls = [
  ...implementations('pleg').map((i) => ({ name: i.name, create: i.createRelistDiffer })),
  { name: 'conventional', create: createConventionalDiffer },
];

const POD = { uid: 'uid-a', name: 'web', namespace: 'prod' };

function ctr(
  id: string,
  state: number,
  pod: { uid: string; name: string; namespace: string } = POD,
  extra: Partial<FxContainer> = {},
): FxContainer {
  return {
    id,
    sandboxId: 'sb',
    name: 'c',
    attempt: 0,
    image: 'img',
    imageRef: 'ref',
    state,
    createdAt: 1n,
    labels: [
      [POD_UID, pod.uid],
      [POD_NAME, pod.name],
      [POD_NAMESPACE, pod.namespace],
      [CONTAINER_NAME, 'c'],
    ],
    annotations: [['a', 'b']],
    ...extra,
  };
}

function sbx(
  id: string,
  state: number,
  pod: { uid: string; name: string; namespace: string } = POD,
  extra: Partial<FxSandbox> = {},
): FxSandbox {
  return {
    id,
    metadata: { name: pod.name, uid: pod.uid, namespace: pod.namespace, attempt: 0 },
    state,
    createdAt: 1n,
    labels: [[POD_UID, pod.uid]],
    annotations: [],
    runtimeHandler: '',
    ...extra,
  };
}

const RUNNING = 1;
const EXITED = 2;
const CREATED = 0;
const UNKNOWN = 3;

function diff(d: RelistDiffer, sandboxes: FxSandbox[], containers: FxContainer[]): RelistResult {
  return d.diff(encodeSandboxes(sandboxes), encodeContainers(containers));
}

function events(r: RelistResult): string[] {
  return r.events.map((e) => `${e.type} ${e.podId}/${e.containerId}`);
}

for (const impl of impls) {
  describe(`relist differ (${impl.name})`, () => {
    // Every generateEvents case: old state (or none) -> new state (or none).
    const cases: Array<[string, number | undefined, number | undefined, string[]]> = [
      ['new running', undefined, RUNNING, ['ContainerStarted']],
      ['new exited', undefined, EXITED, ['ContainerDied']],
      ['new created', undefined, CREATED, ['ContainerChanged']],
      ['new unknown', undefined, UNKNOWN, ['ContainerChanged']],
      ['new out-of-range state', undefined, 9, ['ContainerChanged']],
      ['running -> running', RUNNING, RUNNING, []],
      ['running -> exited', RUNNING, EXITED, ['ContainerDied']],
      ['running -> unknown', RUNNING, UNKNOWN, ['ContainerChanged']],
      ['exited -> running', EXITED, RUNNING, ['ContainerStarted']],
      ['exited -> exited', EXITED, EXITED, []],
      ['created -> running', CREATED, RUNNING, ['ContainerStarted']],
      ['created -> unknown (both unknown)', CREATED, UNKNOWN, []],
      ['unknown -> exited', UNKNOWN, EXITED, ['ContainerDied']],
      ['running -> gone', RUNNING, undefined, ['ContainerDied', 'ContainerRemoved']],
      ['exited -> gone', EXITED, undefined, ['ContainerRemoved']],
      ['unknown -> gone', UNKNOWN, undefined, ['ContainerDied', 'ContainerRemoved']],
    ];
    for (const [name, before, after, want] of cases) {
      it(`generateEvents: ${name}`, () => {
        const d = impl.create();
        diff(d, [], before === undefined ? [] : [ctr('c1', before)]);
        const r = diff(d, [], after === undefined ? [] : [ctr('c1', after)]);
        assert.deepEqual(
          events(r),
          want.map((t) => `${t} uid-a/c1`),
        );
        if (want.length > 0) assert.deepEqual(r.pods.get('uid-a'), { uid: 'uid-a', name: 'web', namespace: 'prod' });
        else assert.equal(r.pods.size, 0);
        d.close();
      });
    }

    it('sandboxes take part as containers: ready is running, anything else exited', () => {
      const d = impl.create();
      assert.deepEqual(events(diff(d, [sbx('s1', 0)], [])), ['ContainerStarted uid-a/s1']);
      assert.deepEqual(events(diff(d, [sbx('s1', 1)], [])), ['ContainerDied uid-a/s1']);
      assert.deepEqual(events(diff(d, [sbx('s1', 0)], [])), ['ContainerStarted uid-a/s1']);
      assert.deepEqual(events(diff(d, [sbx('s1', 7)], [])), ['ContainerDied uid-a/s1']);
      assert.deepEqual(events(diff(d, [], [])), ['ContainerRemoved uid-a/s1']);
    });

    it('ignores foreign containers and sandboxes, counts only ours', () => {
      const d = impl.create();
      const noUid = ctr('f1', RUNNING, POD, { labels: [[CONTAINER_NAME, 'x']] });
      const noName = ctr('f2', RUNNING, POD, { labels: [[POD_UID, 'uid-a']] });
      const emptyUid = ctr('f3', RUNNING, POD, {
        labels: [
          [POD_UID, ''],
          [CONTAINER_NAME, 'x'],
        ],
      });
      const foreignSb = sbx('f4', 0, POD, { labels: [['app', 'x']] });
      const r = diff(
        d,
        [foreignSb, sbx('s1', 0)],
        [noUid, noName, emptyUid, ctr('c1', EXITED), ctr('c2', CREATED), ctr('c3', 42)],
      );
      assert.deepEqual(events(r), [
        'ContainerDied uid-a/c1',
        'ContainerChanged uid-a/c2',
        'ContainerChanged uid-a/c3',
        'ContainerStarted uid-a/s1',
      ]);
      assert.deepEqual(r.counts, { runningPods: 1, containers: { created: 1, running: 0, exited: 1, unknown: 1 } });
    });

    it('counts running pods by ready sandboxes, once per pod', () => {
      const d = impl.create();
      const b = { uid: 'uid-b', name: 'b', namespace: 'x' };
      const c = { uid: 'uid-c', name: 'c', namespace: 'x' };
      const r = diff(
        d,
        [sbx('s1', 0), sbx('s2', 0), sbx('s3', 1, b), sbx('s4', 0, c)],
        [ctr('c1', RUNNING), ctr('c2', RUNNING, b)],
      );
      assert.deepEqual(r.counts, { runningPods: 2, containers: { created: 0, running: 2, exited: 0, unknown: 0 } });
    });

    it('sorts events by pod uid, container id, then Died before Removed', () => {
      const d = impl.create();
      const b = { uid: 'uid-0', name: 'b', namespace: 'x' };
      diff(d, [], [ctr('z', RUNNING), ctr('a', RUNNING), ctr('m', RUNNING, b)]);
      const r = diff(d, [], [ctr('b', RUNNING, b)]);
      assert.deepEqual(events(r), [
        'ContainerStarted uid-0/b',
        'ContainerDied uid-0/m',
        'ContainerRemoved uid-0/m',
        'ContainerDied uid-a/a',
        'ContainerRemoved uid-a/a',
        'ContainerDied uid-a/z',
        'ContainerRemoved uid-a/z',
      ]);
      assert.deepEqual([...r.pods.keys()], ['uid-0', 'uid-a']);
    });

    it('takes the pod name from the first sandbox, its labels, else the first container', () => {
      const d = impl.create();
      const labelsOnly = { uid: 'uid-a', name: 'from-labels', namespace: 'ns-labels' };
      // Container labels only.
      let r = diff(d, [], [ctr('c1', RUNNING, labelsOnly), ctr('c2', RUNNING)]);
      assert.deepEqual(r.pods.get('uid-a'), { uid: 'uid-a', name: 'from-labels', namespace: 'ns-labels' });
      // A sandbox wins over containers, its metadata over its labels, field by field.
      const sb = sbx('s1', 0, POD, {
        metadata: { name: '', uid: 'ignored', namespace: 'meta-ns', attempt: 0 },
        labels: [
          [POD_UID, 'uid-a'],
          [POD_NAME, 'sb-label-name'],
          [POD_NAMESPACE, 'sb-label-ns'],
        ],
      });
      r = diff(
        d,
        [sb, sbx('s2', 0, { uid: 'uid-a', name: 'second', namespace: 'second' })],
        [ctr('c1', RUNNING, labelsOnly)],
      );
      assert.deepEqual(r.pods.get('uid-a'), { uid: 'uid-a', name: 'sb-label-name', namespace: 'meta-ns' });
      // Without metadata at all: labels.
      r = diff(d, [{ ...sb, id: 's3', metadata: undefined }], []);
      assert.deepEqual(r.pods.get('uid-a'), { uid: 'uid-a', name: 'sb-label-name', namespace: 'sb-label-ns' });
      // Gone: the last known name stays, for the removal events and podInfo().
      r = diff(d, [], []);
      assert.deepEqual(r.pods.get('uid-a'), { uid: 'uid-a', name: 'sb-label-name', namespace: 'sb-label-ns' });
      assert.deepEqual(d.podInfo('uid-a'), { uid: 'uid-a', name: 'sb-label-name', namespace: 'sb-label-ns' });
      // Out of sight for two relists: forgotten.
      diff(d, [], []);
      assert.equal(d.podInfo('uid-a'), undefined);
      assert.equal(d.podInfo('never-seen'), undefined);
    });

    it('podInfo knows pods without events too', () => {
      const d = impl.create();
      diff(d, [sbx('s1', 0)], [ctr('c1', RUNNING)]);
      const r = diff(d, [sbx('s1', 0)], [ctr('c1', RUNNING)]);
      assert.equal(r.events.length, 0);
      assert.deepEqual(d.podInfo('uid-a'), { uid: 'uid-a', name: 'web', namespace: 'prod' });
    });

    it('keys records by (pod, id): the first container with an id wins, containers before sandboxes', () => {
      const d = impl.create();
      const b = { uid: 'uid-b', name: 'b', namespace: 'x' };
      let r = diff(d, [sbx('dup', 1)], [ctr('dup', RUNNING), ctr('dup', EXITED), ctr('dup', EXITED, b)]);
      assert.deepEqual(events(r), ['ContainerStarted uid-a/dup', 'ContainerDied uid-b/dup']);
      assert.equal(r.counts.containers.running + r.counts.containers.exited, 3, 'duplicates are counted');
      // The same id moving to another pod: removed from one, new in the other.
      r = diff(d, [], [ctr('dup', RUNNING, b)]);
      assert.deepEqual(events(r), [
        'ContainerDied uid-a/dup',
        'ContainerRemoved uid-a/dup',
        'ContainerStarted uid-b/dup',
      ]);
    });

    it("keepPrevious() reports a pod's changes again on the next diff (upstream: failed inspection)", () => {
      const d = impl.create();
      const b = { uid: 'uid-b', name: 'b', namespace: 'x' };
      diff(d, [], [ctr('c1', RUNNING), ctr('c2', RUNNING), ctr('k', RUNNING, b)]);
      let r = diff(d, [], [ctr('c1', EXITED), ctr('c3', RUNNING), ctr('k', EXITED, b)]);
      assert.deepEqual(events(r), [
        'ContainerDied uid-a/c1',
        'ContainerDied uid-a/c2',
        'ContainerRemoved uid-a/c2',
        'ContainerStarted uid-a/c3',
        'ContainerDied uid-b/k',
      ]);
      d.keepPrevious(['uid-a', 'no-such-pod']);
      d.keepPrevious(['uid-a']); // twice: no effect
      r = diff(d, [], [ctr('c1', EXITED), ctr('c3', RUNNING), ctr('k', EXITED, b)]);
      assert.deepEqual(events(r), [
        'ContainerDied uid-a/c1',
        'ContainerDied uid-a/c2',
        'ContainerRemoved uid-a/c2',
        'ContainerStarted uid-a/c3',
      ]);
      // A pod without events in the last diff is left alone.
      d.keepPrevious(['uid-b']);
      r = diff(d, [], [ctr('c1', EXITED), ctr('c3', RUNNING), ctr('k', EXITED, b)]);
      assert.deepEqual(events(r), []);
    });

    it('keepPrevious() of a pod that vanished keeps it and its name', () => {
      const d = impl.create();
      diff(d, [sbx('s1', 0)], [ctr('c1', RUNNING)]);
      let r = diff(d, [], []);
      assert.equal(r.events.length, 4);
      d.keepPrevious(['uid-a']);
      r = diff(d, [], []);
      assert.deepEqual(events(r), [
        'ContainerDied uid-a/c1',
        'ContainerRemoved uid-a/c1',
        'ContainerDied uid-a/s1',
        'ContainerRemoved uid-a/s1',
      ]);
      assert.deepEqual(r.pods.get('uid-a'), { uid: 'uid-a', name: 'web', namespace: 'prod' });
    });

    it('reset() forgets everything; close() frees and makes diff() throw', () => {
      const d = impl.create();
      diff(d, [sbx('s1', 0)], [ctr('c1', RUNNING)]);
      d.reset();
      assert.equal(d.podInfo('uid-a'), undefined);
      assert.deepEqual(events(diff(d, [sbx('s1', 0)], [ctr('c1', RUNNING)])), [
        'ContainerStarted uid-a/c1',
        'ContainerStarted uid-a/s1',
      ]);
      d.close();
      d.close();
      assert.throws(() => diff(d, [], []), /closed/);
      assert.equal(d.podInfo('uid-a'), undefined);
    });

    it('empty replies are empty lists', () => {
      const d = impl.create();
      const r = d.diff(Buffer.alloc(0), new Uint8Array(0));
      assert.deepEqual(r, {
        events: [],
        pods: new Map(),
        counts: { runningPods: 0, containers: { created: 0, running: 0, exited: 0, unknown: 0 } },
      });
    });

    it('accepts a Uint8Array view into a larger buffer', () => {
      const d = impl.create();
      const ct = encodeContainers([ctr('c1', RUNNING)]);
      const big = new Uint8Array(ct.length + 20);
      big.fill(0xff);
      big.set(ct, 10);
      assert.deepEqual(events(d.diff(new Uint8Array(0), big.subarray(10, 10 + ct.length))), [
        'ContainerStarted uid-a/c1',
      ]);
    });

    it('decodes non-UTF-8-safe bytes the same way (ids and names are UTF-8 strings)', () => {
      const d = impl.create();
      const pod = { uid: 'uid-ü', name: 'naïve', namespace: '名前空間' };
      const r = diff(d, [sbx('s-é', 0, pod)], [ctr('c-😀', RUNNING, pod)]);
      assert.deepEqual(events(r), ['ContainerStarted uid-ü/c-😀', 'ContainerStarted uid-ü/s-é']);
      assert.deepEqual(r.pods.get('uid-ü'), pod);
      assert.deepEqual(d.podInfo('uid-ü'), pod);
    });

    it('follows proto3: skips unknown fields of every wire type, last scalar and map entry win', () => {
      const d = impl.create();
      const w = new PbWriter();
      w.message(1, (c) => {
        c.tag(99, 0).varint(2n ** 63n); // unknown varint
        c.tag(98, 1).raw(Buffer.alloc(8, 0xaa)); // fixed64
        c.tag(97, 5).raw(Buffer.alloc(4, 0xbb)); // fixed32
        c.bytes(96, Buffer.from([0x08, 0xff])); // unknown bytes, malformed inside: never looked at
        c.str(1, 'first-id').str(1, 'c1');
        c.tag(6, 0).varint(2).tag(6, 0).varint(1); // running
        c.map(8, [
          [POD_UID, 'wrong'],
          [CONTAINER_NAME, 'c'],
          [POD_UID, 'uid-a'],
        ]);
        c.message(8, (e) => e.str(2, 'value-first').str(1, 'k')); // value before key
        if (impl.name !== 'conventional') c.bytes(3, Buffer.from([0xff])); // metadata: not decoded
        c.tag(7, 0).varint(2n ** 64n - 1n); // created_at: -1
      });
      w.tag(2, 0).varint(5); // unknown top-level field
      const r = d.diff(Buffer.alloc(0), w.finish());
      assert.deepEqual(events(r), ['ContainerStarted uid-a/c1']);
      // Enum values are the low 32 bits of the varint (as protobufjs's int32()).
      const w2 = new PbWriter().message(1, (c) =>
        c
          .str(1, 'c1')
          .tag(6, 0)
          .varint(2n ** 32n + 2n)
          .map(8, [
            [POD_UID, 'uid-a'],
            [CONTAINER_NAME, 'c'],
          ]),
      );
      assert.deepEqual(events(d.diff(Buffer.alloc(0), w2.finish())), ['ContainerDied uid-a/c1']);
      // Non-canonical (overlong) varints are fine.
      const inner = new PbWriter()
        .str(1, 'c2')
        .tag(6, 0)
        .raw(Buffer.from([0x82, 0x80, 0x80, 0x00]))
        .map(8, [
          [POD_UID, 'uid-a'],
          [CONTAINER_NAME, 'c'],
        ])
        .finish();
      const w3 = new PbWriter()
        .tag(1, 2)
        .raw(Buffer.from([0x80 | inner.length, 0x80, 0x00]))
        .raw(inner);
      assert.deepEqual(events(d.diff(Buffer.alloc(0), w3.finish())), [
        'ContainerRemoved uid-a/c1',
        'ContainerDied uid-a/c2',
      ]);
    });

    it('decodes fields the same in runtime order, in any other order and in longer shapes', () => {
      // The native decoder walks fields in the order runtimes write them and takes everything
      // else field by field: each variant must read as the runtime-order one.
      const labels: Array<[string, string]> = [
        [POD_UID, 'uid-a'],
        [POD_NAME, 'web'],
        [POD_NAMESPACE, 'prod'],
        [CONTAINER_NAME, 'c'],
      ];
      type Part = (w: PbWriter) => void;
      const parts = (state: number, imageRef: string, createdAt: bigint): Part[] => [
        (w) => w.str(1, 'c1'),
        (w) => w.str(2, 'sb1'),
        (w) => w.message(3, (m) => m.str(1, 'c').int(2, 1)),
        (w) => w.message(4, (m) => m.str(1, 'img')),
        (w) => w.str(5, imageRef),
        (w) => w.int(6, state),
        (w) => w.int(7, createdAt),
        (w) => w.map(8, labels),
        (w) =>
          w.map(9, [
            ['a', 'b'],
            ['c', 'd'],
          ]),
      ];
      const container = (ps: Part[]) => new PbWriter().message(1, (w) => ps.forEach((p) => p(w))).finish();
      const sandbox = (ps: Part[]) => new PbWriter().message(1, (w) => ps.forEach((p) => p(w))).finish();
      const sbParts: Part[] = [
        (w) => w.str(1, 's1'),
        (w) => w.message(2, (m) => m.str(1, 'web').str(2, 'uid-a').str(3, 'prod').int(4, 2)),
        (w) => w.int(4, 1_700_000_000_000_000_000n),
        (w) =>
          w.map(5, [
            [POD_UID, 'uid-a'],
            ['app', 'web'],
          ]),
        (w) => w.map(6, [['k', 'v']]),
        (w) => w.str(7, 'runc'),
      ];
      const runtimeOrder = parts(RUNNING, 'ref', 1_700_000_000_000_000_000n);
      const want = impl.create().diff(sandbox(sbParts), container(runtimeOrder));
      assert.deepEqual(events(want), ['ContainerStarted uid-a/c1', 'ContainerStarted uid-a/s1']);
      const variants: Array<[string, Buffer, Buffer]> = [
        ['reversed', sandbox([...sbParts].reverse()), container([...runtimeOrder].reverse())],
        ['labels first', sandbox([sbParts[3]!, ...sbParts]), container([runtimeOrder[7]!, ...runtimeOrder])],
        [
          'state twice, the last wins',
          sandbox(sbParts),
          container([...parts(EXITED, 'ref', 5n), (w) => w.int(6, RUNNING)]),
        ],
        [
          'a 3-byte length, a 10-byte varint',
          sandbox(sbParts),
          container(parts(RUNNING, 'r'.repeat(20_000), 2n ** 64n - 1n)),
        ],
        ['a 2-byte length, a 1-byte varint', sandbox(sbParts), container(parts(RUNNING, 'r'.repeat(300), 0x7fn))],
        [
          'the state as a 2-byte varint, metadata split in two',
          sandbox([
            sbParts[0]!,
            (w) => w.message(2, (m) => m.str(3, 'prod')),
            (w) => w.message(2, (m) => m.str(1, 'web')),
            ...sbParts.slice(2),
          ]),
          container([
            ...runtimeOrder.slice(0, 5),
            (w) => w.tag(6, 0).raw(Buffer.from([0x81, 0x00])),
            ...runtimeOrder.slice(6),
          ]),
        ],
      ];
      for (const [name, sb, ct] of variants) {
        if (impl.name === 'conventional' && name.includes('metadata split')) continue; // protobufjs replaces instead of merging
        const got = impl.create().diff(sb, ct);
        assert.deepEqual(
          { events: got.events, pods: [...got.pods], counts: got.counts },
          { events: want.events, pods: [...want.pods], counts: want.counts },
          name,
        );
      }
    });

    it('merges repeated sandbox metadata (proto3), the uid coming from the label only', () => {
      if (impl.name === 'conventional') return; // protobufjs replaces instead of merging
      const d = impl.create();
      const w = new PbWriter().message(1, (s) => {
        s.str(1, 's1');
        s.message(2, (m) => m.str(1, 'name-1').str(3, 'ns-1'));
        s.message(2, (m) => m.str(1, 'name-2').str(2, 'meta-uid'));
        s.map(5, [[POD_UID, 'uid-a']]);
      });
      const r = d.diff(w.finish(), Buffer.alloc(0));
      assert.deepEqual(r.pods.get('uid-a'), { uid: 'uid-a', name: 'name-2', namespace: 'ns-1' });
    });

    if (impl.name !== 'conventional') {
      it('throws KTS_ERR_CRI_REPLY naming the problem, and keeps its state', () => {
        const d = impl.create();
        diff(d, [sbx('s1', 0)], [ctr('c1', RUNNING)]);
        const good = encodeContainers([ctr('c1', EXITED)]);
        const bad = good.subarray(0, good.length - 3);
        assert.throws(
          () => d.diff(encodeSandboxes([sbx('s1', 0)]), bad),
          (err: unknown) =>
            err instanceof KubeletError &&
            err.code === 'KTS_ERR_CRI_REPLY' &&
            /^cannot decode ListContainersResponse: field 1: length \d+ past end \(\d+ bytes left\) at byte 0$/.test(
              err.message,
            ),
        );
        assert.deepEqual(events(d.diff(encodeSandboxes([sbx('s1', 0)]), good)), ['ContainerDied uid-a/c1']);
      });
    }
  });
}
