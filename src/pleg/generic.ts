/**
 * Generic PLEG (upstream GenericPLEG): relist the runtime every period, diff each container's
 * state against the previous relist, inspect only pods that changed (or whose last inspection
 * failed), update the status cache, and emit events.
 */
import { metrics } from '../metrics/index.js';
import type { Runtime, RunningPod, RuntimeContainerState } from '../kuberuntime/types.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import { errorMessage } from '../errors.js';
import { generateEvents, type PlegContainerState } from './events.js';
import type { PodLifecycleEvent, PodLifecycleEventGenerator, PodStatusCache } from './types.js';

/** Upstream's relistThreshold: a relist older than this makes the PLEG unhealthy. */
export const RELIST_THRESHOLD_MS = 3 * 60_000;

export interface GenericPlegOptions {
  runtime: Runtime;
  cache: PodStatusCache;
  relistPeriodMs?: number;
  clock?: Clock;
}

function plegState(s: RuntimeContainerState): PlegContainerState {
  if (s === 'running') return 'running';
  if (s === 'exited') return 'exited';
  return 'unknown';
}

/** Container id → state for one pod, sandboxes included. */
function containerStates(pod: RunningPod | undefined): Map<string, PlegContainerState> {
  const m = new Map<string, PlegContainerState>();
  if (!pod) return m;
  for (const s of pod.sandboxes) m.set(s.id, s.ready ? 'running' : 'exited');
  for (const c of pod.containers) m.set(c.id, plegState(c.state));
  return m;
}

class GenericPLEG implements PodLifecycleEventGenerator {
  private readonly runtime: Runtime;
  private readonly cache: PodStatusCache;
  private readonly period: number;
  private readonly clock: Clock;
  private readonly listeners = new Set<(e: PodLifecycleEvent) => void>();
  private old = new Map<string, RunningPod>();
  private needsReinspection = new Set<string>();
  private lastRelistStart = 0;
  private lastRelistDone: number;
  private timer: { cancel(): void } | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(opts: GenericPlegOptions) {
    this.runtime = opts.runtime;
    this.cache = opts.cache;
    this.period = opts.relistPeriodMs ?? 1000;
    this.clock = opts.clock ?? realClock;
    this.lastRelistDone = this.clock.now();
  }

  start(): void {
    this.stopped = false;
    this.lastRelistDone = this.clock.now();
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  watch(listener: (e: PodLifecycleEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  healthy(): { ok: boolean; message?: string } {
    const age = this.clock.now() - this.lastRelistDone;
    if (age > RELIST_THRESHOLD_MS) return { ok: false, message: `pleg was last seen active ${Math.round(age / 1000)}s ago; threshold is ${RELIST_THRESHOLD_MS / 1000}s` };
    return { ok: true };
  }

  /** Relists are serialised; a request during a relist runs one more right after it. */
  relist(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.doRelist().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.relist();
      }
    });
    return this.running;
  }

  private tick(): void {
    if (this.stopped) return;
    void this.relist().finally(() => {
      if (!this.stopped) this.timer = this.clock.setTimeout(() => this.tick(), this.period);
    });
  }

  private async doRelist(): Promise<void> {
    const start = this.clock.now();
    if (this.lastRelistStart) metrics.plegRelistInterval.observe((start - this.lastRelistStart) / 1000);
    this.lastRelistStart = start;
    let pods: RunningPod[];
    try {
      pods = await this.runtime.getPods(true);
    } catch (err) {
      log('pleg').error({ err: errorMessage(err) }, 'GenericPLEG: unable to retrieve pods');
      return;
    }
    this.updateRunningMetrics(pods);
    const current = new Map(pods.map((p) => [p.uid, p]));
    const events = new Map<string, PodLifecycleEvent[]>();
    for (const uid of new Set([...this.old.keys(), ...current.keys()])) {
      const before = containerStates(this.old.get(uid));
      const after = containerStates(current.get(uid));
      const podEvents: PodLifecycleEvent[] = [];
      for (const cid of new Set([...before.keys(), ...after.keys()])) {
        podEvents.push(...generateEvents(uid, cid, before.get(cid) ?? 'non-existent', after.get(cid) ?? 'non-existent'));
      }
      if (podEvents.length > 0) events.set(uid, podEvents);
    }
    const toInspect = new Set([...events.keys(), ...this.needsReinspection]);
    this.needsReinspection = new Set();
    await Promise.all([...toInspect].map((uid) => this.inspect(uid, current.get(uid) ?? this.old.get(uid), start)));
    this.old = current;
    this.cache.updateTime(start);
    this.lastRelistDone = this.clock.now();
    metrics.plegRelistDuration.observe((this.lastRelistDone - start) / 1000);
    for (const list of events.values()) {
      for (const e of list) if (e.type !== 'ContainerChanged') this.emit(e);
    }
  }

  private async inspect(uid: string, pod: RunningPod | undefined, observed: number): Promise<void> {
    if (!pod) return;
    try {
      const status = await this.runtime.getPodStatus(uid, pod.name, pod.namespace);
      this.cache.set(uid, status, undefined, observed);
    } catch (err) {
      this.needsReinspection.add(uid);
      this.cache.set(uid, undefined, err as Error, observed);
      log('pleg').warn({ pod: `${pod.namespace}/${pod.name}`, err: errorMessage(err) }, 'PLEG: pod status inspection failed; will retry next relist');
    }
  }

  private updateRunningMetrics(pods: RunningPod[]): void {
    const counts: Record<string, number> = { running: 0, exited: 0, created: 0, unknown: 0 };
    let runningPods = 0;
    for (const p of pods) {
      if (p.sandboxes.some((s) => s.ready)) runningPods++;
      for (const c of p.containers) counts[c.state] = (counts[c.state] ?? 0) + 1;
    }
    metrics.runningPods.set(runningPods);
    for (const [state, n] of Object.entries(counts)) metrics.runningContainers.set({ container_state: state }, n);
  }

  private emit(e: PodLifecycleEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        log('pleg').error({ err: errorMessage(err) }, 'PLEG listener threw');
      }
    }
  }
}

export function createGenericPLEG(opts: GenericPlegOptions): PodLifecycleEventGenerator {
  return new GenericPLEG(opts);
}
