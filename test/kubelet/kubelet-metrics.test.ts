// What the Kubelet itself counts on /metrics: PLEG events discarded past upstream's channel
// capacity (kubelet_pleg_discard_events), runtime pods no worker knew
// (kubelet_orphaned_runtime_pods_total), and the desired/active pod gauges by static.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import type { PodUpdate } from '../../src/podconfig/types.js';
import type { PodLifecycleEvent, PodLifecycleEventGenerator } from '../../src/pleg/types.js';
import type { RunningPod } from '../../src/kuberuntime/types.js';
import { Kubelet, PLEG_CHANNEL_CAPACITY } from '../../src/kubelet/kubelet.js';
import { computeNodeInfo } from '../../src/node/node-info.js';
import { createPodStatusCache } from '../../src/pleg/index.js';
import { createStatusManager } from '../../src/status/index.js';
import { registry } from '../../src/metrics/index.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';
import { FakePLEG } from './fake-pleg.js';
import { testTempDir } from '../support/temp-dir.js';
import { volumeRoot } from './volume-root.js';

/** A metric's value for the labels given (0 when it has no such series yet). */
async function value(name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  const v = m.values.find((s) => Object.entries(labels).every(([k, want]) => s.labels[k] === want));
  return v?.value ?? 0;
}

/** The shared fake, whose getPods lists every pod: a killed pod leaves the list, as it leaves getPods(false). */
class StoppingRuntime extends FakeRuntime {
  override async killPod(p: Pod | undefined, running: RunningPod, grace?: number): Promise<void> {
    await super.killPod(p, running, grace);
    this.pods = this.pods.filter((rp) => rp.uid !== running.uid);
  }
}

/** A PLEG that is unhealthy (so the syncLoop takes nothing from its inbox) and emits on demand. */
class StalledPLEG implements PodLifecycleEventGenerator {
  listener: ((e: PodLifecycleEvent) => void) | undefined;
  start(): void {}
  stop(): void {}
  watch(l: (e: PodLifecycleEvent) => void): () => void {
    this.listener = l;
    return () => {
      this.listener = undefined;
    };
  }
  healthy() {
    return { ok: false, message: 'stalled for the test' };
  }
  async relist(): Promise<void> {}
}

class NoUpdates implements AsyncIterable<PodUpdate> {
  [Symbol.asyncIterator](): AsyncIterator<PodUpdate> {
    return { next: () => new Promise<IteratorResult<PodUpdate>>(() => undefined) };
  }
}

function kubeletWith(pleg: PodLifecycleEventGenerator, runtime = new FakeRuntime(), cache = createPodStatusCache()) {
  return new Kubelet({
    nodeName: 'n',
    hostIP: '192.0.2.1',
    ...volumeRoot(testTempDir('kts-kmetrics-')),
    maxPods: 110,
    syncFrequencyMs: 60_000,
    node: computeNodeInfo({ nodeName: 'n', maxPods: 110, capacity: { milliCPU: 2000, memory: 2 ** 32 } }),
    runtime,
    pleg,
    cache,
    statusManager: createStatusManager(),
    sources: new Set(['file']),
    housekeepingPeriodMs: 30,
    syncPeriodMs: 20,
  });
}

async function until(what: string, fn: () => Promise<boolean> | boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('PLEG events beyond the channel capacity (upstream plegChannelCapacity 1000) are discarded and counted', async () => {
  const pleg = new StalledPLEG();
  const kubelet = kubeletWith(pleg);
  const done = kubelet.run(new NoUpdates());
  await until('watching', () => pleg.listener !== undefined);
  const before = await value('kubelet_pleg_discard_events');
  for (let i = 0; i < PLEG_CHANNEL_CAPACITY + 5; i++)
    pleg.listener!({ id: `uid-${i}`, type: 'ContainerStarted', data: 'c' });
  assert.equal(await value('kubelet_pleg_discard_events'), before + 5);
  kubelet.stop();
  await done;
});

test('housekeeping counts an orphaned runtime pod once and sets desired/active pods by static', async () => {
  const runtime = new StoppingRuntime();
  const cache = createPodStatusCache();
  const kubelet = kubeletWith(new FakePLEG(runtime, cache), runtime, cache);
  runtime.setContainer('orphan', 'c9', 'running');
  const updates: PodUpdate[] = [];
  let wake: (() => void) | undefined;
  const source: AsyncIterable<PodUpdate> = {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (updates.length) yield updates.shift()!;
        await new Promise<void>((r) => {
          wake = r;
        });
      }
    },
  };
  const before = await value('kubelet_orphaned_runtime_pods_total');
  const done = kubelet.run(source);
  try {
    const pod = {
      metadata: {
        name: 'p',
        namespace: 'default',
        uid: 'static-1',
        annotations: { 'kubernetes.io/config.source': 'file' },
      },
      spec: { containers: [{ name: 'a', image: 'x' }] },
    } as Pod;
    updates.push({ op: 'ADD', pods: [pod], source: 'file' });
    wake?.();
    await until('orphan killed', () => runtime.killed.some((k) => k.uid === 'orphan'));
    await until('gauges set', async () => (await value('kubelet_desired_pods', { static: 'true' })) === 1);
    await new Promise((r) => setTimeout(r, 100)); // a few more housekeeping passes
    assert.equal(await value('kubelet_orphaned_runtime_pods_total'), before + 1, 'counted once, not at every pass');
    assert.equal(await value('kubelet_desired_pods', { static: '' }), 0);
    assert.equal(await value('kubelet_active_pods', { static: 'true' }), 1);
  } finally {
    kubelet.stop();
    await done;
    await kubelet.podWorkers.idle();
  }
});
