/**
 * Fakes shared by the pod worker tests: pods, a recording PodSyncer whose calls can be held open,
 * and a pod workers instance on a cache that never makes a sync wait for a relist.
 */
import { after } from 'node:test';
import type { ApiPodStatus, Pod } from '../../src/api/types.js';
import type { PodRuntimeStatus, RunningPod } from '../../src/kuberuntime/types.js';
import {
  createPodWorkers,
  type PodSyncer,
  type PodWorkers,
  type SyncContext,
  type TerminationOptions,
  type UpdateType,
} from '../../src/podworkers/index.js';
import { createPodStatusCache } from '../../src/pleg/index.js';
import type { PodStatusCache } from '../../src/pleg/types.js';

export interface PodExtra {
  static?: boolean;
  name?: string;
  namespace?: string;
  phase?: string;
  deletionGrace?: number;
  labels?: Record<string, string>;
}

/** `grace: null` leaves spec.terminationGracePeriodSeconds unset. */
export function pod(uid: string, grace: number | null = 30, extra: PodExtra = {}): Pod {
  return {
    metadata: {
      name: extra.name ?? `p-${uid}`,
      namespace: extra.namespace ?? 'default',
      uid,
      ...(extra.static ? { annotations: { 'kubernetes.io/config.source': 'file' } } : {}),
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.deletionGrace !== undefined
        ? { deletionTimestamp: new Date(), deletionGracePeriodSeconds: extra.deletionGrace }
        : {}),
    },
    spec: {
      ...(grace !== null ? { terminationGracePeriodSeconds: grace } : {}),
      containers: [{ name: 'a', image: 'x' }],
    },
    ...(extra.phase ? { status: { phase: extra.phase } } : {}),
  } as Pod;
}

export const orphan = (uid: string): RunningPod => ({
  uid,
  name: `o-${uid}`,
  namespace: 'y',
  containers: [],
  sandboxes: [],
});

/** A runtime status with nothing running: what the PLEG caches for a pod whose containers all exited. */
export function stoppedStatus(uid: string, name = `p-${uid}`): PodRuntimeStatus {
  return {
    uid,
    name,
    namespace: 'default',
    ips: [],
    sandboxStatuses: [],
    containerStatuses: [],
    timestamp: new Date(),
  };
}

/** A promise with its resolve function, to hold a syncer call open. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/**
 * Records every call as `sync:<type>:<uid>`, `terminating:<uid>:<grace>`, `terminating-runtime:<uid>`
 * or `terminated:<uid>` (upstream's processed records), in one list and per UID.
 */
export class RecordingSyncer implements PodSyncer {
  calls: string[] = [];
  byUid = new Map<string, string[]>();
  /** The pods syncPod was handed, in order (which version of the spec each sync saw). */
  syncedPods: Pod[] = [];
  terminal = false;
  /** UIDs whose next syncs report the pod terminal (upstream terminalPhaseSync). */
  terminalUids = new Set<string>();
  syncGate: Promise<void> | undefined;
  /** Held open per kill call, in order. */
  killGates: Promise<void>[] = [];
  killSignals: AbortSignal[] = [];
  /** Held open per cleanup call, in order. */
  terminatedGates: Promise<void>[] = [];
  failKills = 0;
  failSyncs = 0;
  statusSeen: ApiPodStatus[] = [];
  syncStatuses: (PodRuntimeStatus | undefined)[] = [];
  terminatedStatuses: (PodRuntimeStatus | undefined)[] = [];
  terminatingStatuses: (PodRuntimeStatus | undefined)[] = [];
  /** What syncTerminatingPod resolves with (the status a kill reads after stopping everything). */
  stoppedStatus: PodRuntimeStatus | undefined;
  postSync: (() => void) | undefined;

  private record(uid: string, call: string): void {
    this.calls.push(call);
    this.byUid.set(uid, [...(this.byUid.get(uid) ?? []), call]);
  }

  of(uid: string): string[] {
    return this.byUid.get(uid) ?? [];
  }

  async syncPod(_ctx: SyncContext, t: UpdateType, p: Pod, s: PodRuntimeStatus | undefined) {
    this.record(p.metadata!.uid!, `sync:${t}:${p.metadata!.uid}`);
    this.syncedPods.push(p);
    this.syncStatuses.push(s);
    await this.syncGate;
    if (this.failSyncs > 0) {
      this.failSyncs--;
      throw new Error('sync failed');
    }
    const isTerminal = this.terminal || this.terminalUids.has(p.metadata!.uid!);
    return { isTerminal, ...(this.postSync ? { postSync: this.postSync } : {}) };
  }

  async syncTerminatingPod(
    ctx: SyncContext,
    p: Pod,
    s: PodRuntimeStatus | undefined,
    { gracePeriodSeconds: grace, statusFn }: TerminationOptions,
  ) {
    this.record(p.metadata!.uid!, `terminating:${p.metadata!.uid}:${grace}`);
    this.terminatingStatuses.push(s);
    this.killSignals.push(ctx.signal);
    if (statusFn) {
      const st: ApiPodStatus = { phase: 'Running' };
      statusFn(st);
      this.statusSeen.push(st);
    }
    const g = this.killGates.shift();
    if (g) await g;
    if (this.failKills > 0) {
      this.failKills--;
      throw new Error('kill failed');
    }
    return this.stoppedStatus;
  }

  async syncTerminatingRuntimePod(_ctx: SyncContext, r: RunningPod) {
    this.record(r.uid, `terminating-runtime:${r.uid}`);
  }

  async syncTerminatedPod(_ctx: SyncContext, p: Pod, s: PodRuntimeStatus | undefined) {
    this.record(p.metadata!.uid!, `terminated:${p.metadata!.uid}`);
    this.terminatedStatuses.push(s);
    const g = this.terminatedGates.shift();
    if (g) await g;
  }
}

export function setup(opts: { cache?: PodStatusCache; fresh?: boolean } = {}) {
  const cache = opts.cache ?? createPodStatusCache();
  const syncer = new RecordingSyncer();
  // A fresh cache time so getNewerThan never blocks in these tests.
  const tick = opts.fresh === false ? undefined : setInterval(() => cache.updateTime(Date.now()), 2);
  if (tick) relisters.add(tick);
  const workers = createPodWorkers({ syncer, cache, resyncIntervalMs: 60_000, backOffMs: 20, terminationRetryMs: 20 });
  return {
    syncer,
    workers,
    cache,
    done: () => {
      clearInterval(tick);
      relisters.delete(tick!);
    },
  };
}

/** The cache tickers still running: a test that failed before done() must not keep its file's process alive. */
const relisters = new Set<ReturnType<typeof setInterval>>();
after(() => {
  for (const t of relisters) clearInterval(t);
});

export const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `cond` holds (polled); rejects after a generous bound. */
export async function until(cond: () => boolean, what = 'condition', boundMs = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > boundMs) throw new Error(`timed out waiting for ${what}`);
    await tick(2);
  }
}

/** Every worker idle, including work kicked off by the last one to end. */
export async function settle(workers: PodWorkers) {
  await workers.idle();
  await tick(5);
  await workers.idle();
}
