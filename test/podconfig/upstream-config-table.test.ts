/**
 * The merge of pod sources, case by case as upstream's
 * pkg/kubelet/config/config_test.go (incremental mode, the only one the kubelet uses): each
 * scenario sends updates from one source into PodStorage.merge and checks every update emitted,
 * in order. Each table row cites the upstream test it mirrors.
 *
 * Not mirrored: the Snapshot / SnapshotAndUpdates notification modes and PodConfig.Sync() (the
 * kubelet only ever uses PodConfigNotificationIncremental; we implement that mode only), and
 * TestPodRestore (checkpoints, removed upstream).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { ConfigSeenAnnotationKey, ConfigSourceAnnotationKey } from '../../src/api/types.js';
import { PodStorage } from '../../src/podconfig/pod-config.js';
import { createPodConfig, type PodOperation, type PodSource, type PodUpdate } from '../../src/podconfig/index.js';
import { captureLogger, testUID } from './helpers.js';

const TestSource = 'test';

/** upstream CreateValidPod(name, namespace): the UID is name+namespace, made a UUID here. */
function validPod(name: string, namespace: string): Pod {
  return {
    metadata: { uid: testUID(name + namespace), name, namespace },
    spec: {
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      containers: [{ name: 'ctr', image: 'image', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }],
    },
  } as Pod;
}

/** The container change upstream uses to turn an ADD into an UPDATE. */
function withBarContainer(p: Pod): Pod {
  return {
    ...p,
    spec: {
      ...p.spec,
      containers: [{ name: 'bar', image: 'test', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }],
    },
  } as Pod;
}
const withStatus = (p: Pod, message: string): Pod => ({ ...p, status: { message } });
const withContainerName = (p: Pod, name: string): Pod => ({
  ...p,
  spec: { ...p.spec!, containers: [{ ...p.spec!.containers[0]!, name }] },
});
const withMeta = (p: Pod, meta: Partial<NonNullable<Pod['metadata']>>): Pod => ({
  ...p,
  metadata: { ...p.metadata, ...meta },
});

/** An emitted update as [op, ["namespace/name", ...]]. */
type Shape = [string, string[]];
const shape = (u: PodUpdate): Shape => [u.op, u.pods.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)];

interface Step {
  send: [PodOperation, Pod[]];
  want: Shape[];
  /** Further checks on what this step emitted. */
  check?: (got: PodUpdate[]) => void;
}

interface Scenario {
  name: string;
  /** The upstream test it mirrors. */
  upstream: string;
  steps: Step[];
}

const foo = validPod('foo', 'new');
const specOf = (u: PodUpdate | undefined, i = 0) => u?.pods[i]?.spec?.containers.map((c) => c.name);

/** TestNewPodAddedSetReconciled's three pods; `touchStatus`/`touchSpec` change the first one. */
function reconcilePods(touchStatus: boolean, touchSpec: boolean): Pod[] {
  let first = validPod('changeable-pod-0', 'new');
  if (touchStatus) first = withStatus(first, 'touched');
  if (touchSpec) first = withContainerName(first, 'renamed');
  return [first, validPod('constant-pod-1', 'new'), validPod('constant-pod-2', 'new')];
}

function reconcileScenario(op: 'ADD' | 'SET'): Scenario {
  return {
    name: `status-only changes RECONCILE, spec changes UPDATE (op ${op})`,
    upstream: 'TestNewPodAddedSetReconciled',
    steps: [
      {
        send: ['SET', reconcilePods(false, false)],
        want: [['ADD', ['new/changeable-pod-0', 'new/constant-pod-1', 'new/constant-pod-2']]],
      },
      { send: [op, reconcilePods(false, false)], want: [] },
      {
        send: [op, reconcilePods(true, false)],
        want: [['RECONCILE', ['new/changeable-pod-0']]],
        check: (got) =>
          assert.equal(got[0]!.pods[0]!.status?.message, 'touched', 'the RECONCILE carries the new status'),
      },
      {
        send: [op, reconcilePods(true, true)],
        want: [['UPDATE', ['new/changeable-pod-0']]],
        check: (got) => assert.deepEqual(specOf(got[0]), ['renamed'], 'an update is not also reconciled'),
      },
    ],
  };
}

const annotated = (value: Record<string, string>) => withMeta(validPod('foo2', 'new'), { annotations: value });
const labelled = (value: string) => withMeta(validPod('foo2', 'new'), { labels: { key: value } });
const deleted = (p: Pod, at: string, grace?: number) =>
  withMeta(p, {
    deletionTimestamp: new Date(at),
    ...(grace === undefined ? {} : { deletionGracePeriodSeconds: grace }),
  });

const scenarios: Scenario[] = [
  {
    name: 'a new pod is an ADD',
    upstream: 'TestNewPodAdded',
    steps: [{ send: ['ADD', [foo]], want: [['ADD', ['new/foo']]] }],
  },
  {
    name: 'the default namespace is like any other',
    upstream: 'TestNewPodAddedDefaultNamespace',
    steps: [{ send: ['ADD', [validPod('foo', 'default')]], want: [['ADD', ['default/foo']]] }],
  },
  {
    name: 'the same name in two namespaces is two pods',
    upstream: 'TestNewPodAddedDifferentNamespaces',
    steps: [
      { send: ['ADD', [validPod('foo', 'default')]], want: [['ADD', ['default/foo']]] },
      { send: ['ADD', [validPod('foo', 'new')]], want: [['ADD', ['new/foo']]] },
    ],
  },
  {
    // Deliberate difference: upstream's merge passes a pod with an empty namespace through (its
    // sources default it first); ours refuses any pod whose identity is not one the apiserver
    // would give, before a path is built from it (docs/differences.md).
    name: 'a pod without a namespace is refused (upstream passes it through)',
    upstream: 'TestNewPodAddedInvalidNamespace',
    steps: [{ send: ['ADD', [validPod('foo', '')]], want: [] }],
  },
  {
    name: 'an identical ADD, and an invalid pod, emit nothing',
    upstream: 'TestInvalidPodFiltered',
    steps: [
      { send: ['ADD', [foo]], want: [['ADD', ['new/foo']]] },
      { send: ['ADD', [validPod('foo', 'new')]], want: [] },
      { send: ['UPDATE', [{ metadata: { name: 'foo' } } as Pod]], want: [] },
    ],
  },
  {
    name: 'a changed container turns an ADD into an UPDATE',
    upstream: 'TestNewPodAddedSnapshotAndUpdates (its incremental half)',
    steps: [
      { send: ['ADD', [foo]], want: [['ADD', ['new/foo']]] },
      {
        send: ['ADD', [withBarContainer(foo)]],
        want: [['UPDATE', ['new/foo']]],
        check: (got) => assert.deepEqual(specOf(got[0]), ['bar']),
      },
    ],
  },
  {
    name: 'ADD, then ADD of a changed pod (UPDATE), then REMOVE carrying the stored pod',
    upstream: 'TestNewPodAddedUpdatedRemoved',
    steps: [
      { send: ['ADD', [foo]], want: [['ADD', ['new/foo']]] },
      { send: ['ADD', [withBarContainer(foo)]], want: [['UPDATE', ['new/foo']]] },
      {
        send: ['REMOVE', [validPod('foo', 'new')]],
        want: [['REMOVE', ['new/foo']]],
        check: (got) => assert.deepEqual(specOf(got[0]), ['bar'], 'the pod as last stored'),
      },
    ],
  },
  {
    name: 'a deletion timestamp is a graceful DELETE',
    upstream: 'TestNewPodAddedDelete',
    steps: [
      { send: ['ADD', [foo]], want: [['ADD', ['new/foo']]] },
      {
        send: ['DELETE', [deleted(foo, '2024-05-01T10:00:00Z')]],
        want: [['DELETE', ['new/foo']]],
        check: (got) =>
          assert.equal(got[0]!.pods[0]!.metadata!.deletionTimestamp!.getTime(), Date.parse('2024-05-01T10:00:00Z')),
      },
    ],
  },
  {
    name: 'a SET after ADDs is REMOVE, ADD, UPDATE',
    upstream: 'TestNewPodAddedUpdatedSet',
    steps: [
      {
        send: ['ADD', [foo, validPod('foo2', 'new'), validPod('foo3', 'new')]],
        want: [['ADD', ['new/foo', 'new/foo2', 'new/foo3']]],
      },
      {
        send: ['SET', [withBarContainer(validPod('foo2', 'new')), validPod('foo3', 'new'), validPod('foo4', 'new')]],
        want: [
          ['REMOVE', ['new/foo']],
          ['ADD', ['new/foo4']],
          ['UPDATE', ['new/foo2']],
        ],
      },
    ],
  },
  reconcileScenario('ADD'),
  reconcileScenario('SET'),
  {
    name: 'the first empty SET is one empty ADD, later empty SETs nothing',
    upstream: 'TestInitialEmptySet',
    steps: [
      { send: ['SET', []], want: [['ADD', []]] },
      { send: ['SET', []], want: [] },
      { send: ['ADD', [foo]], want: [['ADD', ['new/foo']]] },
    ],
  },
  {
    name: 'annotation changed, added, removed: UPDATE each time',
    upstream: 'TestPodUpdateAnnotations',
    steps: [
      {
        send: ['SET', [validPod('foo1', 'new'), annotated({ 'kubernetes.io/blah': 'blah' }), validPod('foo3', 'new')]],
        want: [['ADD', ['new/foo1', 'new/foo2', 'new/foo3']]],
      },
      {
        send: [
          'SET',
          [validPod('foo1', 'new'), annotated({ 'kubernetes.io/blah': 'superblah' }), validPod('foo3', 'new')],
        ],
        want: [['UPDATE', ['new/foo2']]],
      },
      {
        send: [
          'SET',
          [
            validPod('foo1', 'new'),
            annotated({ 'kubernetes.io/blah': 'superblah', 'kubernetes.io/otherblah': 'doh' }),
            validPod('foo3', 'new'),
          ],
        ],
        want: [['UPDATE', ['new/foo2']]],
      },
      {
        send: [
          'SET',
          [validPod('foo1', 'new'), annotated({ 'kubernetes.io/otherblah': 'doh' }), validPod('foo3', 'new')],
        ],
        want: [['UPDATE', ['new/foo2']]],
        check: (got) =>
          assert.deepEqual(
            Object.keys(got[0]!.pods[0]!.metadata!.annotations!).sort(),
            [ConfigSeenAnnotationKey, ConfigSourceAnnotationKey, 'kubernetes.io/otherblah'].sort(),
          ),
      },
    ],
  },
  {
    name: 'a label change is an UPDATE',
    upstream: 'TestPodUpdateLabels',
    steps: [
      { send: ['SET', [labelled('value')]], want: [['ADD', ['new/foo2']]] },
      {
        send: ['SET', [labelled('newValue')]],
        want: [['UPDATE', ['new/foo2']]],
        check: (got) => assert.deepEqual(got[0]!.pods[0]!.metadata!.labels, { key: 'newValue' }),
      },
    ],
  },
  // The rest mirror upstream config.go's rules that config_test.go does not spell out.
  {
    name: 'pods keep the order their source gave, within each update',
    upstream: 'config.go merge (pod ordering)',
    steps: [
      {
        send: ['SET', [validPod('c', 'ns'), validPod('a', 'ns'), validPod('b', 'ns')]],
        want: [['ADD', ['ns/c', 'ns/a', 'ns/b']]],
      },
      {
        send: ['SET', [validPod('c', 'ns'), validPod('z', 'ns'), validPod('y', 'ns')]],
        want: [
          ['REMOVE', ['ns/a', 'ns/b']],
          ['ADD', ['ns/z', 'ns/y']],
        ],
      },
    ],
  },
  {
    name: 'a shorter deletion grace period on a deleted pod is another DELETE; leaving the SET is a REMOVE',
    upstream: 'config.go checkAndUpdatePod (graceful deletion)',
    steps: [
      { send: ['SET', [foo]], want: [['ADD', ['new/foo']]] },
      { send: ['SET', [deleted(foo, '2024-05-01T10:00:30Z', 30)]], want: [['DELETE', ['new/foo']]] },
      { send: ['SET', [deleted(foo, '2024-05-01T10:00:30Z', 30)]], want: [] },
      {
        send: ['SET', [deleted(foo, '2024-05-01T10:00:05Z', 5)]],
        want: [['DELETE', ['new/foo']]],
        check: (got) => assert.equal(got[0]!.pods[0]!.metadata!.deletionGracePeriodSeconds, 5),
      },
      {
        send: ['SET', [withBarContainer(deleted(foo, '2024-05-01T10:00:05Z', 5))]],
        want: [['DELETE', ['new/foo']]],
        check: (got) => assert.deepEqual(specOf(got[0]), ['bar'], 'a deleted pod is never UPDATEd'),
      },
      { send: ['SET', []], want: [['REMOVE', ['new/foo']]] },
    ],
  },
  {
    name: 'a second pod with the same name in one update is dropped; the first stays',
    upstream: 'config.go filterInvalidPods',
    steps: [
      {
        send: ['SET', [foo, withMeta(validPod('foo', 'new'), { uid: testUID('other') })]],
        want: [['ADD', ['new/foo']]],
      },
    ],
  },
  {
    name: 'an unknown operation is ignored',
    upstream: 'config.go merge (default case)',
    steps: [{ send: ['RECONCILE', [foo]], want: [] }],
  },
];

describe('podStorage.merge, as upstream config_test.go', () => {
  for (const sc of scenarios) {
    // upstream pkg/kubelet/config/config_test.go (see `upstream` of each row)
    it(`${sc.name} [${sc.upstream}]`, () => {
      const s = new PodStorage({ logger: captureLogger().logger });
      sc.steps.forEach((step, i) => {
        const got = s.merge(TestSource, { op: step.send[0], pods: step.send[1] });
        assert.deepEqual(got.map(shape), step.want, `step ${i}`);
        for (const u of got) assert.equal(u.source, TestSource);
        step.check?.(got);
      });
    });
  }

  it("updates never alias the caller's pods or each other", () => {
    // upstream copyPods: every update carries deep copies.
    const s = new PodStorage({ logger: captureLogger().logger });
    const input = validPod('foo', 'new');
    const [add] = s.merge(TestSource, { op: 'ADD', pods: [input] });
    add!.pods[0]!.spec!.containers[0]!.name = 'mutated';
    assert.equal(input.spec!.containers[0]!.name, 'ctr');
    assert.deepEqual(s.merge(TestSource, { op: 'ADD', pods: [validPod('foo', 'new')] }), []);
  });
});

class FakeSource implements PodSource {
  push?: (u: PodUpdate) => void;
  start(push: (u: PodUpdate) => void): void {
    this.push = push;
  }
  stop(): void {}
}

describe('PodConfig.seenAllSources, as upstream', () => {
  // upstream pkg/kubelet/config/config_test.go TestPodConfigRace (sources registered while
  // SeenAllSources is asked) and config.go SeenAllSources: every configured source is expected
  // and has sent a SET.
  it('holds once every registered source sent its first SET, however many sources there are', () => {
    const cfg = createPodConfig(new Map(), { logger: captureLogger().logger });
    const sources: FakeSource[] = [];
    for (let i = 0; i < 100; i++) {
      const src = new FakeSource();
      sources.push(src);
      cfg.addSource(String(i), src);
      assert.equal(cfg.seenAllSources(new Set([TestSource])), false);
    }
    const all = new Set(sources.map((_, i) => String(i)));
    sources.forEach((src, i) => {
      assert.equal(cfg.seenAllSources(all), false, `before source ${i} sent SET`);
      src.push!({ op: 'SET', pods: [], source: String(i) });
    });
    assert.equal(cfg.seenAllSources(all), true);
    cfg.stop();
  });
});
