/**
 * CSI volume stats (upstream server/stats fsResourceAnalyzer + volumeStatCalculator with
 * pkg/volume/csi/csi_metrics.go): NodeGetVolumeStats of every mounted CSI volume, called in the
 * background every volumeStatsAggPeriod and cached, so that the Summary API and /metrics read
 * the last values and never wait for a driver. A driver that fails or stalls a call (each has a
 * deadline) keeps its volume's last good value and delays only that volume's next refresh.
 */
import { podUID, formatPod } from '../api/pod.js';
import type { Pod } from '../api/types.js';
import { errorMessage } from '../errors.js';
import { podEventRef, type EventRecorder } from '../events/index.js';
import { metrics } from '../metrics/index.js';
import type { MountedVolume, VolumeManager } from '../volume/index.js';
import { podVolumeClaim } from '../volume/csi/csi-expand.js';
import type { CsiDrivers, CsiMountedInfo } from '../volume/csi/csi-types.js';
import { CsiDriverAccess, type NodeCapabilities } from '../volume/csi/csi-drivers.js';
import { CSI_TIMEOUT_MS, type VolumeStats as CsiUsage } from '../volume/csi/node-client.js';
import { log } from '../util/log.js';
import type { VolumeStats } from './types.js';

/** upstream volumeStatsAggPeriod's default (the only value accepted: src/config/unacted-defaults.ts). */
export const VOLUME_STATS_AGG_PERIOD_MS = 60_000;

/** What the cache reads: the pods, what is mounted for them, and the drivers registered. */
export interface CsiVolumeStatsDeps {
  /** The pods whose volumes are measured (upstream GetPods: the pod manager's). */
  pods(): readonly Pod[];
  volumes: Pick<VolumeManager, 'getMountedVolumesForPod'>;
  drivers: CsiDrivers;
  /** Default VOLUME_STATS_AGG_PERIOD_MS. */
  periodMs?: number;
  /** Deadline of one driver call (default upstream csiTimeout, 2 minutes). */
  timeoutMs?: number;
  /** The CSIVolumeHealth gate: volume conditions into the stats, VolumeConditionAbnormal events. */
  volumeHealth?: boolean;
  recorder?: EventRecorder;
}

interface Entry {
  stats?: VolumeStats;
  inFlight: boolean;
  failing: boolean;
}

/** The PVCReference of a pod volume (upstream volume_stat_calculator.go): its claim, if any. */
export function pvcRefOf(pod: Pod, volumeName: string): { name: string; namespace: string } | undefined {
  const claim = podVolumeClaim(pod, volumeName);
  return claim && { name: claim.name, namespace: claim.namespace };
}

/** upstream parsePodVolumeStats: every FsStats field set (0 where the driver gave no unit). */
export function csiVolumeStats(name: string, usage: CsiUsage, time: Date, health: boolean): VolumeStats {
  const n = (x: number | undefined) => BigInt(Math.max(0, Math.trunc(x ?? 0)));
  return {
    time,
    name,
    availableBytes: n(usage.bytes?.available),
    capacityBytes: n(usage.bytes?.total),
    usedBytes: n(usage.bytes?.used),
    inodesFree: n(usage.inodes?.available),
    inodes: n(usage.inodes?.total),
    inodesUsed: n(usage.inodes?.used),
    ...(health && usage.condition ? { volumeHealthStats: { abnormal: usage.condition.abnormal } } : {}),
  };
}

export class CsiVolumeStatsCache {
  /** pod UID → pod volume name → its last stats. */
  private readonly cache = new Map<string, Map<string, Entry>>();
  /** One client per driver endpoint, its capabilities asked once (the CSI plugin's own access). */
  private readonly access: CsiDriverAccess;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: CsiVolumeStatsDeps) {
    this.access = new CsiDriverAccess(deps.timeoutMs ?? CSI_TIMEOUT_MS);
  }

  start(): void {
    if (this.timer) return;
    const pass = () =>
      void this.refresh().catch((err: unknown) =>
        log('stats').warn({ err: errorMessage(err) }, 'CSI volume stats pass failed'),
      );
    pass();
    this.timer = setInterval(pass, this.deps.periodMs ?? VOLUME_STATS_AGG_PERIOD_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.access.close();
  }

  /**
   * The last stats of the pod's CSI volumes (for the Summary API); [] when none yet. A volume
   * mounted since the last pass is measured now, in the background (upstream starts a pod's
   * calculator on its first request), rather than at the next period.
   */
  podVolumes(uid: string): VolumeStats[] {
    const mounted = this.deps.volumes.getMountedVolumesForPod(uid).mounted;
    const known = this.cache.get(uid);
    if ([...mounted].some(([name, m]) => m.csi && !known?.has(name))) {
      const pod = this.deps.pods().find((p) => podUID(p) === uid);
      if (pod) void Promise.all(this.measurePod(pod) ?? []).catch(() => undefined);
    }
    const out: VolumeStats[] = [];
    for (const e of this.cache.get(uid)?.values() ?? []) if (e.stats) out.push(e.stats);
    return out;
  }

  /** Every pod's last CSI volume stats (the kubelet_volume_stats_* collector). */
  all(): VolumeStats[] {
    return [...this.cache.keys()].flatMap((uid) => this.podVolumes(uid));
  }

  /**
   * One pass: starts a call for each mounted CSI volume that has none in flight, and resolves
   * when the calls started have ended (a stalled one at its deadline). Pods gone are dropped.
   */
  async refresh(): Promise<void> {
    const calls: Promise<void>[] = [];
    const seen = new Set<string>();
    for (const pod of this.deps.pods()) {
      const started = this.measurePod(pod);
      if (started) seen.add(podUID(pod));
      calls.push(...(started ?? []));
    }
    for (const uid of this.cache.keys()) if (!seen.has(uid)) this.cache.delete(uid);
    await Promise.all(calls);
  }

  /** Starts a call for each mounted CSI volume of the pod with none in flight; undefined: it has none. */
  private measurePod(pod: Pod): Promise<void>[] | undefined {
    const uid = podUID(pod);
    const csi = [...this.deps.volumes.getMountedVolumesForPod(uid).mounted].filter(
      (e): e is [string, MountedVolume & { csi: CsiMountedInfo }] => e[1].csi !== undefined,
    );
    if (csi.length === 0) return undefined;
    const entries = this.cache.get(uid) ?? new Map<string, Entry>();
    this.cache.set(uid, entries);
    for (const name of entries.keys()) if (!csi.some(([n]) => n === name)) entries.delete(name);
    const calls: Promise<void>[] = [];
    for (const [name, mounted] of csi) {
      const entry = entries.get(name) ?? { inFlight: false, failing: false };
      entries.set(name, entry);
      if (!entry.inFlight) calls.push(this.measure(pod, name, mounted.csi, entry));
    }
    return calls;
  }

  /** upstream metricsCsi.GetMetrics, then parsePodVolumeStats; a failure keeps the last value. */
  private async measure(pod: Pod, name: string, csi: CsiMountedInfo, entry: Entry): Promise<void> {
    entry.inFlight = true;
    try {
      const usage = await this.nodeStats(csi);
      if (!usage) return; // the driver has no GET_VOLUME_STATS: upstream's NotSupported, not an error
      const ref = pvcRefOf(pod, name);
      const health = this.deps.volumeHealth ?? false;
      entry.stats = { ...csiVolumeStats(name, usage, new Date(), health), ...(ref ? { pvcRef: ref } : {}) };
      if (entry.failing) log('stats').info({ pod: formatPod(pod), volume: name }, 'CSI volume stats recovered');
      entry.failing = false;
      if (health && usage.condition?.abnormal) this.abnormal(pod, name, usage.condition.message);
    } catch (err) {
      // Logged once per failing spell; the last good value stays in the Summary and /metrics.
      const level = entry.failing ? 'debug' : 'warn';
      log('stats')[level](
        { pod: formatPod(pod), volume: name, err: errorMessage(err) },
        'Failed to calculate volume metrics',
      );
      entry.failing = true;
    } finally {
      entry.inFlight = false;
    }
  }

  /** upstream GetMetrics: timed (kubelet_volume_metric_collection_duration_seconds) whatever the outcome. */
  private async nodeStats(csi: CsiMountedInfo): Promise<CsiUsage | undefined> {
    const start = performance.now();
    try {
      return await this.callDriver(csi);
    } finally {
      metrics.volumeMetricCollectionDuration.observe({ metric_source: csi.driver }, (performance.now() - start) / 1000);
    }
  }

  private async callDriver(csi: CsiMountedInfo): Promise<CsiUsage | undefined> {
    const client = this.access.client(this.deps.drivers, csi.driver);
    try {
      const caps = await this.access.nodeCapabilities(client);
      if (!caps.has('GET_VOLUME_STATS')) return undefined;
      return withCondition(
        await client.nodeGetVolumeStats(csi.volumeHandle, csi.targetPath, csi.stagingPath ?? ''),
        caps,
      );
    } catch (err) {
      this.access.forgetIfUnreachable(client, err);
      throw err;
    }
  }

  /** upstream: a Warning VolumeConditionAbnormal event on the pod, each pass the volume is abnormal. */
  private abnormal(pod: Pod, name: string, message: string): void {
    this.deps.recorder?.event(podEventRef(pod), 'Warning', 'VolumeConditionAbnormal', `Volume ${name}: ${message}`);
  }
}

/** upstream asks for the condition only with VOLUME_CONDITION; a driver answering one anyway is not believed. */
function withCondition(usage: CsiUsage, caps: NodeCapabilities): CsiUsage {
  if (!caps.has('VOLUME_CONDITION')) delete usage.condition;
  return usage;
}
