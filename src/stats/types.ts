/**
 * The stats subsystem's boundary (upstream pkg/kubelet/stats + server/stats): cgroup readers,
 * the per-pass sample, and the StatsProvider the servers and the eviction manager read.
 * Interfaces and types only. Counters are exact uint64 (bigint).
 */
import type { CgroupFileSpec } from './cgroup-fields.js';

/** One batch reader of cgroup files (native: persistent fds + pread; TS twin: the same via fs). */
export interface CgroupReader {
  /** Replaces the file set; files still wanted keep their open fd. */
  setFiles(specs: readonly CgroupFileSpec[]): void;
  /**
   * Reads the files wanted by `mask` (NEED bits, default every file) into out (FIELD_COUNT slots
   * per group, MISSING first); returns files read.
   */
  read(out: BigUint64Array, mask?: number): number;
  /**
   * The same read without holding the event loop (the stats pass's: its ~3,000 files at 500
   * containers are 10+ ms of kernel time). Until it settles, out is the reader's, and setFiles,
   * read and readAsync throw; close waits for it.
   */
  readAsync(out: BigUint64Array, mask?: number): Promise<number>;
  close(): void;
}
export type CreateCgroupReader = () => CgroupReader;

/** cpu in the Summary API (stats/v1alpha1 CPUStats). */
export interface CpuStats {
  time: Date;
  usageNanoCores?: bigint;
  usageCoreNanoSeconds?: bigint;
}

/** memory in the Summary API (stats/v1alpha1 MemoryStats). */
export interface MemoryStats {
  time: Date;
  availableBytes?: bigint;
  usageBytes?: bigint;
  workingSetBytes?: bigint;
  rssBytes?: bigint;
  pageFaults?: bigint;
  majorPageFaults?: bigint;
}

export interface FsStats {
  time: Date;
  availableBytes?: bigint;
  capacityBytes?: bigint;
  usedBytes?: bigint;
  inodesFree?: bigint;
  inodes?: bigint;
  inodesUsed?: bigint;
}

export interface NetworkStats {
  time: Date;
  name: string;
  rxBytes?: bigint;
  rxErrors?: bigint;
  txBytes?: bigint;
  txErrors?: bigint;
  interfaces?: Array<{ name: string; rxBytes?: bigint; rxErrors?: bigint; txBytes?: bigint; txErrors?: bigint }>;
}

/** Everything one cgroup gave in a pass, plus what the provider derived. */
export interface CgroupSample {
  cpu: CpuStats;
  memory: MemoryStats;
  /** memory limit (bytes) when limited. */
  memoryLimit?: bigint;
  cpuUserNs?: bigint;
  cpuSystemNs?: bigint;
  memoryCache?: bigint;
  memoryFailcnt?: bigint;
  oomKills?: bigint;
  pids?: bigint;
  ioReadBytes?: bigint;
  ioWriteBytes?: bigint;
}

/** stats/v1alpha1 VolumeStats: FsStats of one pod volume, named as in the pod spec. */
export interface VolumeStats extends FsStats {
  name: string;
  /** The claim of a PVC-backed (or generic ephemeral) volume. */
  pvcRef?: { name: string; namespace: string };
  /** CSI VOLUME_CONDITION (CSIVolumeHealth gate). */
  volumeHealthStats?: { abnormal: boolean };
}

export interface ContainerSample extends CgroupSample {
  id: string;
  name: string;
  image: string;
  startTime: Date;
  /** The container's writable layer (CRI ContainerStats writable_layer) on the image filesystem. */
  rootfs?: FsStats;
  /** The container's log directory. */
  logs?: FsStats;
  /** Container cgroup path relative to the hierarchy root (e.g. /kubepods/besteffort/pod<uid>/<id>). */
  cgroup: string;
}

export interface PodSample extends CgroupSample {
  uid: string;
  name: string;
  namespace: string;
  startTime: Date;
  cgroup: string;
  containers: ContainerSample[];
  network?: NetworkStats;
  ephemeralStorage?: FsStats;
  volumes?: VolumeStats[];
}

/** A node system container (upstream kubelet, runtime, pods) with its cgroup's numbers. */
export interface SystemContainerSample extends CgroupSample {
  name: string;
  startTime: Date;
}

export interface NodeSample extends CgroupSample {
  nodeName: string;
  startTime: Date;
  fs?: FsStats;
  imageFs?: FsStats;
  systemContainers?: SystemContainerSample[];
  network?: NetworkStats;
  /** rlimit: pid_max and the number of processes running. */
  maxPid?: bigint;
  curProc?: bigint;
}

/** One housekeeping pass. */
export interface StatsSnapshot {
  time: Date;
  node: NodeSample;
  pods: PodSample[];
  /** Set when the last pass failed (resource_scrape_error). */
  error?: string;
}

/** What the servers and the eviction manager read (upstream server/stats.Provider, reduced). */
export interface StatsProvider {
  /**
   * The newest pass (running one now if none has completed yet, or if `io` is wanted and the
   * newest pass did not read io; io is then read in every pass for a while).
   */
  latest(want?: { io?: boolean }): Promise<StatsSnapshot>;
  /** Runs one pass now (tests, eviction's synchronize). */
  collect(): Promise<StatsSnapshot>;
  /** Called after every pass (the OOM watcher reads the oom_kill counters from it). */
  onPass(listener: (snapshot: StatsSnapshot) => void): void;
  start(): void;
  stop(): void;
}

/** A pod container as the runtime lists it, for naming cgroups. */
export interface StatsPodInfo {
  uid: string;
  name: string;
  namespace: string;
  /** Pod cgroup name in cgroupfs form (/kubepods/burstable/pod<uid>), '' when unknown. */
  cgroup: string;
  containers: Array<{ id: string; name: string; image: string; createdAt: Date }>;
  /** The pod's sandbox IDs: the pause process in <pod cgroup>/<id> shows the pod's network namespace. */
  sandboxIds?: string[];
}
