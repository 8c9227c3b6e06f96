/**
 * The eviction manager (upstream eviction_manager.go synchronize): every monitoring period it
 * takes a fresh stats pass, observes the signals, keeps node pressure conditions (held True
 * for evictionPressureTransitionPeriod after the last time a threshold was met), and when a
 * hard threshold is met, or a soft one has stayed met for its grace period, evicts the one pod
 * ranked first for that signal. It also refuses new pods under pressure (admit()).
 */
import type { Pod } from '../api/types.js';
import { podTerminationGracePeriodSeconds, klogRef } from '../api/pod.js';
import { podQOSClass } from '../util/pod-resources.js';
import type { EventRecorder } from '../events/types.js';
import { podEventRef } from '../events/refs.js';
import { errorMessage } from '../errors.js';
import { metrics } from '../metrics/index.js';
import type { StatsProvider } from '../stats/types.js';
import { log } from '../util/log.js';
import { evictionMessage } from './message.js';
import { rankForEviction } from './ranking.js';
import {
  byEvictionPriority,
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  observe,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
} from './thresholds.js';
import type {
  EvictionKubelet,
  EvictionManager,
  NodeConditionStatus,
  NodeConditionType,
  Observation,
  Threshold,
} from './types.js';

export interface EvictionManagerDeps {
  thresholds: Threshold[];
  stats: StatsProvider;
  kubelet: EvictionKubelet;
  recorder?: EventRecorder;
  memoryCapacity: bigint;
  pressureTransitionPeriodMs: number;
  maxPodGracePeriodSeconds: number;
  monitoringPeriodMs: number;
  now?: () => number;
}

const CONDITIONS: readonly NodeConditionType[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];
const REASONS: Record<NodeConditionType, [pressure: string, ok: string, msgTrue: string, msgFalse: string]> = {
  MemoryPressure: [
    'KubeletHasInsufficientMemory',
    'KubeletHasSufficientMemory',
    'kubelet has insufficient memory available',
    'kubelet has sufficient memory available',
  ],
  DiskPressure: [
    'KubeletHasDiskPressure',
    'KubeletHasNoDiskPressure',
    'kubelet has disk pressure',
    'kubelet has no disk pressure',
  ],
  PIDPressure: [
    'KubeletHasInsufficientPID',
    'KubeletHasSufficientPID',
    'kubelet has insufficient PID available',
    'kubelet has sufficient PID available',
  ],
};

/**
 * Pods the manager never evicts nor refuses: system-critical priority. Upstream also exempts
 * static and mirror pods (IsCriticalPod); in standalone mode every pod is static, so that would
 * turn eviction off entirely: here a static pod is exempt only with a critical priority.
 */
function isCritical(pod: Pod): boolean {
  return (pod.spec?.priority ?? 0) >= 2_000_000_000;
}

export class ThresholdEvictionManager implements EvictionManager {
  private readonly now: () => number;
  /** When each threshold now met was first seen met (soft grace periods). */
  private firstObservedAt = new Map<Threshold, number>();
  /** Last time a threshold of each condition was met. */
  private conditionsLastObservedAt = new Map<NodeConditionType, number>();
  private readonly transitions = new Map<NodeConditionType, { status: 'True' | 'False'; at: Date }>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly deps: EvictionManagerDeps) {
    this.now = deps.now ?? Date.now;
    const at = new Date(this.now());
    for (const c of CONDITIONS) this.transitions.set(c, { status: 'False', at });
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      this.synchronize()
        .catch((err: unknown) =>
          log('eviction').warn({ err: errorMessage(err) }, 'Eviction manager: synchronize failed'),
        )
        .finally(() => {
          this.busy = false;
        });
    }, this.deps.monitoringPeriodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  nodeConditions(): NodeConditionStatus[] {
    return CONDITIONS.map((type) => {
      const t = this.transitions.get(type)!;
      const [rTrue, rFalse, mTrue, mFalse] = REASONS[type];
      return {
        type,
        status: t.status,
        reason: t.status === 'True' ? rTrue : rFalse,
        message: t.status === 'True' ? mTrue : mFalse,
        lastTransitionTime: t.at,
      };
    });
  }

  isUnderMemoryPressure(): boolean {
    return this.transitions.get('MemoryPressure')!.status === 'True';
  }
  isUnderDiskPressure(): boolean {
    return this.transitions.get('DiskPressure')!.status === 'True';
  }
  isUnderPIDPressure(): boolean {
    return this.transitions.get('PIDPressure')!.status === 'True';
  }

  /** upstream eviction admitHandler: critical pods always; only MemoryPressure → BestEffort refused; any other pressure → all refused. */
  admit(pod: Pod): { admit: boolean; reason?: string; message?: string } {
    const active = this.nodeConditions()
      .filter((c) => c.status === 'True')
      .map((c) => c.type);
    if (active.length === 0 || isCritical(pod)) return { admit: true };
    if (active.length === 1 && active[0] === 'MemoryPressure' && podQOSClass(pod) !== 'BestEffort')
      return { admit: true };
    return { admit: false, reason: 'Evicted', message: `The node had condition: [${active.join(', ')}]. ` };
  }

  /** upstream synchronize, with its helpers (thresholds.ts) in upstream's order. */
  async synchronize(): Promise<Pod | undefined> {
    const snap = await this.deps.stats.collect();
    const obs = observe(snap, this.deps.memoryCapacity);
    const now = this.now();
    const met = thresholdsMet(this.deps.thresholds, obs);
    this.firstObservedAt = thresholdsFirstObservedAt(met, this.firstObservedAt, now);
    const observed = nodeConditions(met);
    this.conditionsLastObservedAt = nodeConditionsLastObservedAt(observed, this.conditionsLastObservedAt, now);
    // Ours: a condition met now is set even with a 0 transition period (upstream would never set it).
    const active = new Set([
      ...observed,
      ...nodeConditionsObservedSince(this.conditionsLastObservedAt, this.deps.pressureTransitionPeriodMs, now),
    ]);
    this.updateConditions(active, now);
    const due = byEvictionPriority(thresholdsMetGracePeriod(this.firstObservedAt, now))[0];
    if (!due) return undefined;
    return this.evictOne(due, obs.get(due.signal)!, snap.pods);
  }

  private updateConditions(active: ReadonlySet<NodeConditionType>, now: number): void {
    for (const c of CONDITIONS) {
      const status = active.has(c) ? 'True' : 'False';
      const cur = this.transitions.get(c)!;
      if (cur.status !== status) {
        this.transitions.set(c, { status, at: new Date(now) });
        log('eviction').info({ condition: c, status }, 'Node condition changed');
      }
    }
  }

  private async evictOne(
    t: Threshold,
    o: Observation,
    samples: Parameters<typeof rankForEviction>[1],
  ): Promise<Pod | undefined> {
    const ranked = rankForEviction(
      this.deps.kubelet.activePods().filter((p) => !isCritical(p)),
      samples,
      t.signal,
    );
    const victim = ranked[0];
    if (!victim) {
      log('eviction').warn({ signal: t.signal }, 'Eviction manager: threshold met but no pod to evict');
      return undefined;
    }
    const message = evictionMessage(t, o, victim);
    const pod = victim.pod;
    const podGrace = podTerminationGracePeriodSeconds(pod);
    const grace = t.hard
      ? 1
      : this.deps.maxPodGracePeriodSeconds > 0
        ? Math.min(podGrace, this.deps.maxPodGracePeriodSeconds)
        : podGrace;
    log('eviction').warn({ pod: klogRef(pod.metadata), signal: t.signal, message }, 'Eviction manager: evicting pod');
    metrics.evictions.inc({ eviction_signal: t.signal });
    this.deps.recorder?.event(podEventRef(pod), 'Warning', 'Evicted', message);
    await this.deps.kubelet.evictPod(pod, message, grace);
    return pod;
  }
}
