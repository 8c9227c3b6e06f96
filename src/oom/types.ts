/**
 * The OOM watcher's boundary (upstream pkg/kubelet/oom): kernel OOM kills, from /dev/kmsg (a
 * native reader thread or its TypeScript twin) and from the cgroup oom_kill counters, one event
 * per kill, mapped from the victim's memory cgroup to a pod and container.
 */

/** One kill as parsed from the kernel log (both implementations give exactly this). */
export interface OomKillRecord {
  seq: number;
  /** Kernel monotonic timestamp of the record, µs. */
  tsUs: number;
  pid: number;
  comm: string;
  constraint: string;
  oomMemcg: string;
  taskMemcg: string;
}

export interface KmsgWatcher {
  /** Records lost because the kernel overwrote them before we read (EPIPE). */
  lost(): number;
  /** Stops reading; idempotent. */
  close(): void;
}

/** Opens `path` (normally /dev/kmsg) at its end and reports kills in batches. Throws if it cannot open. */
export type CreateKmsgWatcher = (path: string, onKills: (kills: OomKillRecord[]) => void) => KmsgWatcher;
/** The kmsg parser on a buffer of records (tests and fuzzing compare the two implementations). */
export type ParseKmsg = (buf: Buffer) => OomKillRecord[];

/** A kill as the kubelet sees it. */
export interface OomEvent {
  /** When we saw it. */
  time: Date;
  source: 'kmsg' | 'memory.events';
  pid?: number;
  comm?: string;
  /** Victim's memory cgroup, relative to the hierarchy root ('' when unknown). */
  memcg: string;
  /** From the memcg path: the pod (UID) and container (runtime id), when the kill was in a pod. */
  podUid?: string;
  containerId?: string;
  /** The kernel record's monotonic µs (kmsg source). */
  kernelTsUs?: number;
}

/** Counters of the second signal: a container's cgroup oom_kill as read in a stats pass. */
export interface OomCounterSample {
  memcg: string;
  podUid: string;
  containerId: string;
  oomKills: bigint;
}

export interface OomWatcher {
  /** Opens /dev/kmsg; without it (no permission, a user namespace) logs and relies on counters. */
  start(): void;
  /** Feeds the cgroup oom_kill counters of one stats pass (second signal, deduplicated). */
  observeCounters(samples: readonly OomCounterSample[]): void;
  /** True when the OOM watcher saw this container (runtime id) killed. */
  wasOomKilled(containerId: string): boolean;
  /** Whether /dev/kmsg is being read. */
  readonly kmsgActive: boolean;
  stop(): void;
}
