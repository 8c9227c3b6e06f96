/**
 * The StatsProvider (upstream's cadvisor-backed stats provider, without cAdvisor): one batch
 * read of every node, pod and container cgroup per housekeeping pass, CPU rates from the
 * previous pass, filesystem usage from statfs and directory walks, pod network from the pod's
 * network namespace (/proc/<pid>/net/dev of a process in it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { metrics } from '../metrics/index.js';
import { podDir, podLogsDirName } from '../util/pod-identity.js';
import { TimeSlice } from '../util/time-slice.js';
import { log } from '../util/log.js';
import { F, FIELD_COUNT, NEED, field } from './cgroup-fields.js';
import type { CgroupLayout } from './cgroup-layout.js';
import { dirUsage, statfsStats } from './fs-stats.js';
import { nodeNetwork, parseNetDev } from './net-dev.js';
import { RuntimeProcessFinder, systemContainers } from './system-containers.js';
import { podVolumeStats, type MeasuredVolume } from './volume-stats.js';
import type {
  CgroupReader,
  CgroupSample,
  ContainerSample,
  FsStats,
  NetworkStats,
  NodeSample,
  PodSample,
  StatsPodInfo,
  StatsProvider,
  StatsSnapshot,
  SystemContainerSample,
  VolumeStats,
} from './types.js';

export interface StatsProviderDeps {
  nodeName: string;
  layout: CgroupLayout;
  reader: CgroupReader;
  /** Running pods and containers, from the runtime. */
  listPods(): Promise<StatsPodInfo[]>;
  cgroupRoot: string;
  /** The kubelet root dir: nodefs, and pods/<uid>/volumes for emptyDir usage. */
  rootDir: string;
  podLogsDir: string;
  /** The image filesystem's mount point (CRI ImageFsInfo); undefined when unknown. */
  imageFsPath?(): Promise<string | undefined>;
  memoryCapacity: bigint;
  housekeepingIntervalMs: number;
  /** Node start time (boot time). */
  bootTime?: Date;
  /** Writable layer usage by container ID (CRI ListContainerStats); absent: no container rootfs. */
  containerFs?(): Promise<ReadonlyMap<string, ContainerFsUsage>>;
  /** The CRI endpoint: the process listening on it is the `runtime` system container. */
  runtimeEndpoint?: string;
  /** The last stats of a pod's CSI volumes (CsiVolumeStatsCache.podVolumes: cached, never waits on a driver). */
  csiVolumes?(uid: string): VolumeStats[];
}

export interface ContainerFsUsage {
  usedBytes?: bigint;
  inodesUsed?: bigint;
}

interface Prev {
  usage: bigint;
  at: bigint;
}

const NS_PER_S = 1_000_000_000n;
/** Limits change only on a resize: re-read them every this many passes (and on a new file set). */
const LIMITS_EVERY_PASSES = 6;
/** After a consumer asked for io, passes keep reading it this long (a scraper's period and more). */
const IO_WANTED_MS = 120_000;
function bootTime(): Date {
  try {
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'latin1'))?.[1];
    if (btime) return new Date(Number(btime) * 1000);
  } catch {
    // not Linux /proc: fall through
  }
  return new Date();
}

export class CgroupStatsProvider implements StatsProvider {
  private out = new BigUint64Array(0);
  private filesKey = '';
  private passesSinceLimits = 0;
  private ioWantedUntil = 0;
  private lastHadIo = false;
  private prev = new Map<string, Prev>();
  private last: StatsSnapshot | undefined;
  private running: Promise<StatsSnapshot> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<(s: StatsSnapshot) => void> = [];
  private readonly boot: Date;
  private readonly runtimeProcess: RuntimeProcessFinder | undefined;

  constructor(private readonly deps: StatsProviderDeps) {
    this.boot = deps.bootTime ?? bootTime();
    this.runtimeProcess = deps.runtimeEndpoint ? new RuntimeProcessFinder(deps.runtimeEndpoint) : undefined;
  }

  onPass(listener: (s: StatsSnapshot) => void): void {
    this.listeners.push(listener);
  }

  start(): void {
    if (this.timer) return;
    void this.collect().catch(() => undefined);
    this.timer = setInterval(() => void this.collect().catch(() => undefined), this.deps.housekeepingIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.deps.reader.close();
  }

  /**
   * `io`: the caller is /metrics/cadvisor: passes read its own files (io, and on v1 cpu user/system
   * and failcnt: NEED.cadvisor) from now on, for a while.
   */
  async latest(want: { io?: boolean } = {}): Promise<StatsSnapshot> {
    if (want.io) this.ioWantedUntil = Date.now() + IO_WANTED_MS;
    if (this.last && (!want.io || this.lastHadIo)) return this.last;
    if (this.running) await this.running.catch(() => undefined);
    if (this.last && (!want.io || this.lastHadIo)) return this.last;
    return this.collect();
  }

  /** One pass; concurrent callers share it. */
  collect(): Promise<StatsSnapshot> {
    const started = performance.now();
    this.running ??= this.pass().finally(() => {
      metrics.statsPassDuration.observe((performance.now() - started) / 1000);
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<StatsSnapshot> {
    let pods: StatsPodInfo[] = [];
    let error: string | undefined;
    try {
      pods = await this.deps.listPods();
    } catch (err) {
      error = `listing pods: ${errorMessage(err)}`;
      log('stats').warn({ err: error }, 'Stats pass without pods');
    }
    const imageFsPath = await this.deps.imageFsPath?.().catch(() => undefined);
    const writable = await this.deps.containerFs?.().catch((err: unknown) => {
      log('stats').debug({ err: errorMessage(err) }, 'no container writable layer stats this pass');
      return undefined;
    });
    const podCgroups = this.deps.layout.podCgroups(this.deps.cgroupRoot);
    const system = systemContainers({
      mode: this.deps.layout.mode,
      memoryRoot: this.deps.layout.memoryRoot,
      kubepods: this.deps.layout.kubepods(this.deps.cgroupRoot),
      runtime: this.runtimeProcess,
    });
    const names: Array<string | { name: string; byController?: ReadonlyMap<string, string> }> = [
      '/',
      ...system.map((c) => ({ name: c.cgroup, byController: c.byController })),
    ];
    const podGroup = new Map<string, number>();
    const containerCgroups = new Map<string, string[]>();
    for (const p of pods) {
      const cg = p.cgroup || podCgroups.get(p.uid) || '';
      p.cgroup = cg;
      if (!cg) continue;
      podGroup.set(p.uid, names.push(cg) - 1);
      const cgroups = p.containers.map((c) => this.deps.layout.containerCgroup(cg, c.id));
      containerCgroups.set(p.uid, cgroups);
      names.push(...cgroups);
    }
    await this.readAll(names);
    const time = new Date();
    const at = process.hrtime.bigint();
    const seen = new Set<string>();
    const sample = (name: string, group: number): CgroupSample => {
      seen.add(name);
      return this.sample(name, group, time, at);
    };
    const node = this.nodeSample(sample('/', 0), time, imageFsPath);
    // Keyed apart from pods: the agent may share a cgroup with something else (even the root).
    const systemSamples = system.map((c, i): SystemContainerSample => ({
      ...sample(`system:${c.name}:${c.cgroup}`, 1 + i),
      name: c.name,
      startTime: c.startTime,
    }));
    if (systemSamples.length > 0) node.systemContainers = systemSamples;
    const imageFs = node.imageFs;
    const podSamples: PodSample[] = [];
    // The walks below are synchronous (log and volume dirs, net/dev): ~1.8 ms a pod on a quiet
    // machine, 3-5x that on a busy one. Held for more than a slice, they made a relist whose reply
    // arrived meanwhile wait: 5 pods a slice gave relist p99 22.75 ms at 250 pods on a quiet
    // machine and 85 ms on a slow one (issue 30, scale part). A slice in time bounds that wait.
    const slice = new TimeSlice();
    for (const p of pods) {
      if (slice.due()) await slice.next();
      const g = podGroup.get(p.uid);
      if (g === undefined) continue;
      const logsDir = this.podLogsDir(p);
      const cgroups = containerCgroups.get(p.uid)!;
      const containers: ContainerSample[] = p.containers.map((c, i) => ({
        ...sample(cgroups[i]!, g + 1 + i),
        id: c.id,
        name: c.name,
        image: c.image,
        startTime: c.createdAt,
        cgroup: cgroups[i]!,
        ...dropUndefined({
          rootfs: rootfsStats(writable?.get(c.id), imageFs, time),
          logs: logsDir ? dirFsStats(join(logsDir, c.name), time) : undefined,
        }),
      }));
      const startTime = p.containers.reduce((t, c) => (c.createdAt < t ? c.createdAt : t), time);
      const volumes = this.volumes(p, time);
      podSamples.push({
        ...sample(p.cgroup, g),
        uid: p.uid,
        name: p.name,
        namespace: p.namespace,
        startTime,
        cgroup: p.cgroup,
        containers,
        ...dropUndefined({
          network: this.network(p, time),
          ephemeralStorage: this.ephemeral(containers, logsDir, volumes, time),
          volumes: volumes.length > 0 ? volumes.map(({ ephemeral: _, ...v }): VolumeStats => v) : undefined,
        }),
      });
    }
    for (const k of this.prev.keys()) if (!seen.has(k)) this.prev.delete(k);
    const snap: StatsSnapshot = { time, node, pods: podSamples, ...(error ? { error } : {}) };
    this.last = snap;
    for (const l of this.listeners) {
      try {
        l(snap);
      } catch (err) {
        log('stats').warn({ err: errorMessage(err) }, 'stats listener failed');
      }
    }
    return snap;
  }

  /**
   * The one batch read of the pass; the file set is replaced only when the cgroups changed.
   * Usage files every pass; limits on a new file set and every LIMITS_EVERY_PASSES (carried
   * over in between: same file set, same rows); /metrics/cadvisor's own files (io, v1 cpu
   * user/system, failcnt) only while it is scraped.
   */
  private async readAll(
    names: ReadonlyArray<string | { name: string; byController?: ReadonlyMap<string, string> }>,
  ): Promise<void> {
    const key = names
      .map((n) => (typeof n === 'string' ? n : `${n.name}|${[...(n.byController ?? [])].join(',')}`))
      .join('\n');
    const changed = key !== this.filesKey;
    if (changed) {
      this.deps.reader.setFiles(
        names.flatMap((n, g) =>
          typeof n === 'string' ? this.deps.layout.files(n, g) : this.deps.layout.files(n.name, g, n.byController),
        ),
      );
      this.filesKey = key;
    }
    if (this.out.length !== names.length * FIELD_COUNT) this.out = new BigUint64Array(names.length * FIELD_COUNT);
    const limits = changed || ++this.passesSinceLimits >= LIMITS_EVERY_PASSES;
    if (limits) this.passesSinceLimits = 0;
    const io = Date.now() < this.ioWantedUntil;
    const kept = limits ? undefined : this.column(F.memLimit);
    // Off the event loop (native: the libuv pool; the twin: time slices): 3,000 files at 500
    // containers are 10+ ms of kernel time.
    await this.deps.reader.readAsync(
      this.out,
      NEED.usage | NEED.psi | (limits ? NEED.limits : 0) | (io ? NEED.cadvisor : 0),
    );
    if (kept)
      kept.forEach((v, g) => {
        this.out[g * FIELD_COUNT + F.memLimit] = v;
      });
    this.lastHadIo = io;
  }

  private column(f: number): bigint[] {
    const out: bigint[] = [];
    for (let i = f; i < this.out.length; i += FIELD_COUNT) out.push(this.out[i]!);
    return out;
  }

  private sample(name: string, g: number, time: Date, at: bigint): CgroupSample {
    const v = (f: number) => field(this.out, g, f);
    const usage = v(F.cpuUsageNs);
    let usageNanoCores: bigint | undefined;
    const prev = this.prev.get(name);
    if (usage !== undefined) {
      if (prev && at > prev.at && usage >= prev.usage)
        usageNanoCores = ((usage - prev.usage) * NS_PER_S) / (at - prev.at);
      this.prev.set(name, { usage, at });
    }
    const memUsage = v(F.memUsage);
    const inactive = v(F.memInactiveFile) ?? 0n;
    const workingSet = memUsage === undefined ? undefined : memUsage > inactive ? memUsage - inactive : 0n;
    const limit = v(F.memLimit);
    return {
      cpu: {
        time,
        ...(usageNanoCores !== undefined ? { usageNanoCores } : {}),
        ...(usage !== undefined ? { usageCoreNanoSeconds: usage } : {}),
      },
      memory: dropUndefined({
        time,
        usageBytes: memUsage,
        workingSetBytes: workingSet,
        rssBytes: v(F.memRss),
        pageFaults: v(F.memPgfault),
        majorPageFaults: v(F.memPgmajfault),
        availableBytes:
          limit !== undefined && workingSet !== undefined ? (limit > workingSet ? limit - workingSet : 0n) : undefined,
      }),
      ...dropUndefined({
        memoryLimit: limit,
        cpuUserNs: v(F.cpuUserNs),
        cpuSystemNs: v(F.cpuSystemNs),
        memoryCache: v(F.memCache),
        memoryFailcnt: v(F.memFailcnt),
        oomKills: v(F.oomKill),
        pids: v(F.pids),
        ioReadBytes: v(F.ioRead),
        ioWriteBytes: v(F.ioWrite),
      }),
    };
  }

  private nodeSample(root: CgroupSample, time: Date, imageFsPath: string | undefined): NodeSample {
    const cap = this.deps.memoryCapacity;
    const memory = { ...root.memory };
    if (memory.workingSetBytes === undefined) Object.assign(memory, meminfoMemory(time));
    if (memory.workingSetBytes !== undefined)
      memory.availableBytes = cap > memory.workingSetBytes ? cap - memory.workingSetBytes : 0n;
    const fs = statfsStats(this.deps.rootDir, time);
    const imageFs = imageFsPath ? statfsStats(imageFsPath, time) : undefined;
    const { maxPid, curProc } = pidStats();
    return {
      ...root,
      memory,
      nodeName: this.deps.nodeName,
      startTime: this.boot,
      ...dropUndefined({ fs, imageFs, maxPid, curProc, network: nodeNetwork(time) }),
    };
  }

  /**
   * The pod's network namespace seen through one of its processes: the sandbox's pause process
   * first (it lives as long as the namespace), else any container's.
   */
  private network(p: StatsPodInfo, time: Date): NetworkStats | undefined {
    const root = this.deps.layout.memoryRoot;
    if (!root) return undefined;
    for (const id of [...(p.sandboxIds ?? []), ...p.containers.map((c) => c.id)]) {
      try {
        const pid = readFileSync(
          join(root, this.deps.layout.containerCgroup(p.cgroup, id), 'cgroup.procs'),
          'latin1',
        ).split('\n')[0];
        if (pid) return parseNetDev(readFileSync(`/proc/${pid}/net/dev`, 'latin1'), time);
      } catch {
        // sandbox or container gone between list and read: try the next one
      }
    }
    return undefined;
  }

  /** The pod's log directory, or undefined for runtime labels that are no path component (not a pod of ours). */
  private podLogsDir(p: StatsPodInfo): string | undefined {
    try {
      return join(this.deps.podLogsDir, podLogsDirName(p));
    } catch {
      return undefined;
    }
  }

  private volumes(p: StatsPodInfo, time: Date): MeasuredVolume[] {
    // CSI volumes are never local ephemeral storage (upstream IsLocalEphemeralVolume).
    const csi = (this.deps.csiVolumes?.(p.uid) ?? []).map((v) => ({ ...v, ephemeral: false }));
    try {
      return [...podVolumeStats(join(podDir(this.deps.rootDir, p.uid), 'volumes'), time), ...csi];
    } catch {
      return csi; // a UID that is no path component: no directories of ours to walk
    }
  }

  /**
   * upstream calcEphemeralStorage: every container's writable layer and logs, the pod's
   * disk-backed local volumes (emptyDir, configMap, downwardAPI), and the pod's log directory
   * beyond its containers' (nothing else lives there today).
   */
  private ephemeral(
    containers: readonly ContainerSample[],
    logsDir: string | undefined,
    volumes: readonly MeasuredVolume[],
    time: Date,
  ): FsStats | undefined {
    let bytes = 0n;
    let inodes = 0n;
    let any = false;
    const addUsage = (u: { usedBytes?: bigint; inodesUsed?: bigint } | undefined) => {
      if (!u) return;
      any = true;
      bytes += u.usedBytes ?? 0n;
      inodes += u.inodesUsed ?? 0n;
    };
    for (const c of containers) addUsage(c.rootfs);
    // The pod log dir holds every container's logs (and nothing else): one walk counts them all.
    const logs = logsDir ? dirUsage(logsDir) : undefined;
    addUsage(logs && { usedBytes: logs.bytes, inodesUsed: logs.inodes });
    for (const v of volumes) if (v.ephemeral) addUsage(v);
    return any
      ? usageOn({ usedBytes: bytes, inodesUsed: inodes }, statfsStats(this.deps.rootDir, time), time)
      : undefined;
  }
}

/** Usage of one thing with the capacity numbers of the filesystem holding it (upstream's FsStats). */
function usageOn(used: ContainerFsUsage, fs: FsStats | undefined, time: Date): FsStats {
  return dropUndefined({
    time,
    usedBytes: used.usedBytes,
    inodesUsed: used.inodesUsed,
    availableBytes: fs?.availableBytes,
    capacityBytes: fs?.capacityBytes,
    inodesFree: fs?.inodesFree,
    inodes: fs?.inodes,
  }) as FsStats;
}

/** A directory's usage with the numbers of the filesystem holding it (container logs). */
function dirFsStats(dir: string, time: Date): FsStats | undefined {
  const used = dirUsage(dir);
  return used && usageOn({ usedBytes: used.bytes, inodesUsed: used.inodes }, statfsStats(dir, time), time);
}

/** upstream: a container's rootfs is its writable layer's usage, on the image filesystem's numbers. */
function rootfsStats(
  layer: ContainerFsUsage | undefined,
  imageFs: FsStats | undefined,
  time: Date,
): FsStats | undefined {
  return layer && usageOn(layer, imageFs, time);
}

function dropUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as { [K in keyof T]: Exclude<T[K], undefined> };
}

/** Node memory from /proc/meminfo where the root cgroup has no memory files (cgroup v2). */
function meminfoMemory(time: Date): { usageBytes?: bigint; workingSetBytes?: bigint; time: Date } {
  try {
    const kb = (k: string) =>
      BigInt(new RegExp(`^${k}:\\s+(\\d+) kB$`, 'm').exec(readFileSync('/proc/meminfo', 'latin1'))?.[1] ?? '0') * 1024n;
    const usage = kb('MemTotal') - kb('MemFree');
    const inactive = kb('Inactive\\(file\\)');
    return { time, usageBytes: usage, workingSetBytes: usage > inactive ? usage - inactive : 0n };
  } catch {
    return { time };
  }
}

function pidStats(): { maxPid?: bigint; curProc?: bigint } {
  try {
    const maxPid = BigInt(readFileSync('/proc/sys/kernel/pid_max', 'latin1').trim());
    const total = /\/(\d+)/.exec(readFileSync('/proc/loadavg', 'latin1'))?.[1];
    return { maxPid, ...(total ? { curProc: BigInt(total) } : {}) };
  } catch {
    return {};
  }
}
