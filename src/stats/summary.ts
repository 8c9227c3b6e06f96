/**
 * The Summary API (stats/v1alpha1, GET /stats/summary) from a StatsSnapshot: upstream key names,
 * unset fields omitted, uint64 counters written as exact JSON integers.
 */
import type {
  ContainerSample,
  CpuStats,
  FsStats,
  MemoryStats,
  NetworkStats,
  PodSample,
  StatsSnapshot,
  SystemContainerSample,
  VolumeStats,
} from './types.js';

/** metav1.Time: RFC 3339 in UTC, whole seconds. */
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

type Json = string | number | boolean | null | bigint | Date | Json[] | { [k: string]: Json | undefined };

/** JSON with bigints as exact integers and Dates as metav1.Time; undefined members are left out. */
export function stringifyExact(value: unknown): string {
  const marks: string[] = [];
  const text = JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    const raw = this[key];
    if (typeof raw === 'bigint') {
      marks.push(raw.toString());
      return `\u0000${marks.length - 1}\u0000`;
    }
    if (raw instanceof Date) return rfc3339(raw);
    return v;
  });
  return text.replace(/"\\u0000(\d+)\\u0000"/g, (_, i: string) => marks[Number(i)]!);
}

const cpu = (c: CpuStats): Json => ({
  time: c.time,
  usageNanoCores: c.usageNanoCores,
  usageCoreNanoSeconds: c.usageCoreNanoSeconds,
});
const memory = (m: MemoryStats): Json => ({
  time: m.time,
  availableBytes: m.availableBytes,
  usageBytes: m.usageBytes,
  workingSetBytes: m.workingSetBytes,
  rssBytes: m.rssBytes,
  pageFaults: m.pageFaults,
  majorPageFaults: m.majorPageFaults,
});
const fs = (f: FsStats | undefined): Json | undefined =>
  f && {
    time: f.time,
    availableBytes: f.availableBytes,
    capacityBytes: f.capacityBytes,
    usedBytes: f.usedBytes,
    inodesFree: f.inodesFree,
    inodes: f.inodes,
    inodesUsed: f.inodesUsed,
  };
const network = (n: NetworkStats | undefined): Json | undefined =>
  n && {
    time: n.time,
    name: n.name,
    rxBytes: n.rxBytes,
    rxErrors: n.rxErrors,
    txBytes: n.txBytes,
    txErrors: n.txErrors,
    interfaces: n.interfaces?.map((i) => ({
      name: i.name,
      rxBytes: i.rxBytes,
      rxErrors: i.rxErrors,
      txBytes: i.txBytes,
      txErrors: i.txErrors,
    })),
  };

const volume = (v: VolumeStats): Json => ({
  ...(fs(v) as Record<string, Json>),
  name: v.name,
  pvcRef: v.pvcRef && { name: v.pvcRef.name, namespace: v.pvcRef.namespace },
  volumeHealthStats: v.volumeHealthStats && { abnormal: v.volumeHealthStats.abnormal },
});

/** rootfs and logs are left out of ?only_cpu_and_memory=true, as upstream. */
const container = (c: ContainerSample, onlyCpuMem: boolean): Json => ({
  name: c.name,
  startTime: c.startTime,
  cpu: cpu(c.cpu),
  memory: memory(c.memory),
  ...(onlyCpuMem ? {} : { rootfs: fs(c.rootfs), logs: fs(c.logs) }),
});

const systemContainer = (c: SystemContainerSample): Json => ({
  name: c.name,
  startTime: c.startTime,
  cpu: cpu(c.cpu),
  memory: memory(c.memory),
});

function pod(p: PodSample, onlyCpuMem: boolean): Json {
  const base: Record<string, Json | undefined> = {
    podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
    startTime: p.startTime,
    containers: p.containers.map((c) => container(c, onlyCpuMem)),
    cpu: cpu(p.cpu),
    memory: memory(p.memory),
  };
  if (onlyCpuMem) return base;
  return {
    ...base,
    network: network(p.network),
    volume: p.volumes?.map(volume),
    'ephemeral-storage': fs(p.ephemeralStorage),
    ...(p.pids !== undefined ? { process_stats: { process_count: p.pids } } : {}),
  };
}

/** The Summary object; onlyCpuAndMemory is upstream's ?only_cpu_and_memory=true. */
export function buildSummary(s: StatsSnapshot, onlyCpuAndMemory = false): Json {
  const n = s.node;
  const node: Record<string, Json | undefined> = {
    nodeName: n.nodeName,
    systemContainers: n.systemContainers?.map(systemContainer),
    startTime: n.startTime,
    cpu: cpu(n.cpu),
    memory: memory(n.memory),
  };
  if (!onlyCpuAndMemory) {
    node['network'] = network(n.network);
    node['fs'] = fs(n.fs);
    node['runtime'] = n.imageFs ? { imageFs: fs(n.imageFs) } : undefined;
    node['rlimit'] = n.maxPid !== undefined ? { time: s.time, maxpid: n.maxPid, curproc: n.curProc } : undefined;
  }
  return { node, pods: s.pods.map((p) => pod(p, onlyCpuAndMemory)) };
}
