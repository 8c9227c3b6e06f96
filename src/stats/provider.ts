/**
 * The StatsProvider (upstream's cadvisor-backed stats provider, without cAdvisor): one batch
 * read of every node, pod and container cgroup per housekeeping pass, CPU rates from the
 * previous pass, filesystem usage from statfs and directory walks, pod network from the pod's
 * network namespace (/proc/<pid>/net/dev of a process in it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { podDir, podLogsDirName } from '../util/pod-identity.js';
import { log } from '../util/log.js';
import { F, FIELD_COUNT, NEED, field } from './cgroup-fields.js';
import type { CgroupLayout } from './cgroup-layout.js';
import { dirUsage, statfsStats } from './fs-stats.js';
import type {
  CgroupReader, CgroupSample, ContainerSample, FsStats, NetworkStats, NodeSample, PodSample, StatsPodInfo, StatsProvider, StatsSnapshot,
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
}

interface Prev { usage: bigint; at: bigint }

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

  constructor(private readonly deps: StatsProviderDeps) {
    this.boot = deps.bootTime ?? bootTime();
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

  /** `io`: the caller shows io counters (/metrics/cadvisor): passes read io.stat from now on, for a while. */
  async latest(want: { io?: boolean } = {}): Promise<StatsSnapshot> {
    if (want.io) this.ioWantedUntil = Date.now() + IO_WANTED_MS;
    if (this.last && (!want.io || this.lastHadIo)) return this.last;
    if (this.running) await this.running.catch(() => undefined);
    if (this.last && (!want.io || this.lastHadIo)) return this.last;
    return this.collect();
  }

  /** One pass; concurrent callers share it. */
  collect(): Promise<StatsSnapshot> {
    this.running ??= this.pass().finally(() => { this.running = undefined; });
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
    const podCgroups = this.deps.layout.podCgroups(this.deps.cgroupRoot);
    const names = ['/'];
    const podGroup = new Map<string, number>();
    for (const p of pods) {
      const cg = p.cgroup || podCgroups.get(p.uid) || '';
      p.cgroup = cg;
      if (!cg) continue;
      podGroup.set(p.uid, names.push(cg) - 1);
      for (const c of p.containers) names.push(`${cg}/${c.id}`);
    }
    this.readAll(names);
    const time = new Date();
    const at = process.hrtime.bigint();
    const seen = new Set<string>();
    const sample = (name: string, group: number): CgroupSample => {
      seen.add(name);
      return this.sample(name, group, time, at);
    };
    const node = this.nodeSample(sample('/', 0), time, imageFsPath);
    const podSamples: PodSample[] = [];
    for (const p of pods) {
      const g = podGroup.get(p.uid);
      if (g === undefined) continue;
      const containers: ContainerSample[] = p.containers.map((c, i) => ({
        ...sample(`${p.cgroup}/${c.id}`, g + 1 + i), id: c.id, name: c.name, image: c.image, startTime: c.createdAt, cgroup: `${p.cgroup}/${c.id}`,
      }));
      const startTime = p.containers.reduce((t, c) => (c.createdAt < t ? c.createdAt : t), time);
      podSamples.push({
        ...sample(p.cgroup, g), uid: p.uid, name: p.name, namespace: p.namespace, startTime, cgroup: p.cgroup, containers,
        network: this.network(p, time), ephemeralStorage: this.ephemeral(p, time),
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
   * over in between: same file set, same rows); io only while a consumer wants it.
   */
  private readAll(names: string[]): void {
    const key = names.join('\n');
    const changed = key !== this.filesKey;
    if (changed) {
      this.deps.reader.setFiles(names.flatMap((n, g) => this.deps.layout.files(n, g)));
      this.filesKey = key;
    }
    if (this.out.length !== names.length * FIELD_COUNT) this.out = new BigUint64Array(names.length * FIELD_COUNT);
    const limits = changed || ++this.passesSinceLimits >= LIMITS_EVERY_PASSES;
    if (limits) this.passesSinceLimits = 0;
    const io = Date.now() < this.ioWantedUntil;
    const kept = limits ? undefined : this.column(F.memLimit);
    this.deps.reader.read(this.out, NEED.usage | NEED.psi | (limits ? NEED.limits : 0) | (io ? NEED.io : 0));
    if (kept) kept.forEach((v, g) => { this.out[g * FIELD_COUNT + F.memLimit] = v; });
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
      if (prev && at > prev.at && usage >= prev.usage) usageNanoCores = ((usage - prev.usage) * NS_PER_S) / (at - prev.at);
      this.prev.set(name, { usage, at });
    }
    const memUsage = v(F.memUsage);
    const inactive = v(F.memInactiveFile) ?? 0n;
    const workingSet = memUsage === undefined ? undefined : memUsage > inactive ? memUsage - inactive : 0n;
    const limit = v(F.memLimit);
    return {
      cpu: { time, ...(usageNanoCores !== undefined ? { usageNanoCores } : {}), ...(usage !== undefined ? { usageCoreNanoSeconds: usage } : {}) },
      memory: dropUndefined({
        time, usageBytes: memUsage, workingSetBytes: workingSet, rssBytes: v(F.memRss), pageFaults: v(F.memPgfault), majorPageFaults: v(F.memPgmajfault),
        availableBytes: limit !== undefined && workingSet !== undefined ? (limit > workingSet ? limit - workingSet : 0n) : undefined,
      }),
      ...dropUndefined({
        memoryLimit: limit, cpuUserNs: v(F.cpuUserNs), cpuSystemNs: v(F.cpuSystemNs), memoryCache: v(F.memCache), memoryFailcnt: v(F.memFailcnt),
        oomKills: v(F.oomKill), pids: v(F.pids), ioReadBytes: v(F.ioRead), ioWriteBytes: v(F.ioWrite),
      }),
    };
  }

  private nodeSample(root: CgroupSample, time: Date, imageFsPath: string | undefined): NodeSample {
    const cap = this.deps.memoryCapacity;
    const memory = { ...root.memory };
    if (memory.workingSetBytes === undefined) Object.assign(memory, meminfoMemory(time));
    if (memory.workingSetBytes !== undefined) memory.availableBytes = cap > memory.workingSetBytes ? cap - memory.workingSetBytes : 0n;
    const fs = statfsStats(this.deps.rootDir, time);
    const imageFs = imageFsPath ? statfsStats(imageFsPath, time) : undefined;
    const { maxPid, curProc } = pidStats();
    return {
      ...root, memory, nodeName: this.deps.nodeName, startTime: this.boot,
      ...dropUndefined({ fs, imageFs, maxPid, curProc }),
    };
  }

  /** The pod's network namespace seen through one of its processes. */
  private network(p: StatsPodInfo, time: Date): NetworkStats | undefined {
    const root = this.deps.layout.memoryRoot;
    if (!root) return undefined;
    for (const c of p.containers) {
      try {
        const pid = readFileSync(join(root, p.cgroup, c.id, 'cgroup.procs'), 'latin1').split('\n')[0];
        if (pid) return parseNetDev(readFileSync(`/proc/${pid}/net/dev`, 'latin1'), time);
      } catch {
        // container gone between list and read: try the next one
      }
    }
    return undefined;
  }

  /** Logs + emptyDir volumes (container writable layers are not counted: see README). */
  private ephemeral(p: StatsPodInfo, time: Date): FsStats | undefined {
    let logDir: string;
    let volDir: string;
    try {
      logDir = join(this.deps.podLogsDir, podLogsDirName(p.namespace, p.name, p.uid));
      volDir = join(podDir(this.deps.rootDir, p.uid), 'volumes', 'kubernetes.io~empty-dir');
    } catch {
      return undefined; // runtime labels that are no path component: not a pod of ours, nothing to measure
    }
    const logs = dirUsage(logDir);
    const vols = dirUsage(volDir);
    if (!logs && !vols) return undefined;
    const fs = statfsStats(this.deps.rootDir, time);
    return dropUndefined({
      time, usedBytes: (logs?.bytes ?? 0n) + (vols?.bytes ?? 0n), inodesUsed: (logs?.inodes ?? 0n) + (vols?.inodes ?? 0n),
      availableBytes: fs?.availableBytes, capacityBytes: fs?.capacityBytes, inodesFree: fs?.inodesFree, inodes: fs?.inodes,
    }) as FsStats;
  }
}

function dropUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as { [K in keyof T]: Exclude<T[K], undefined> };
}

/** Node memory from /proc/meminfo where the root cgroup has no memory files (cgroup v2). */
function meminfoMemory(time: Date): { usageBytes?: bigint; workingSetBytes?: bigint; time: Date } {
  try {
    const kb = (k: string) => BigInt(new RegExp(`^${k}:\\s+(\\d+) kB$`, 'm').exec(readFileSync('/proc/meminfo', 'latin1'))?.[1] ?? '0') * 1024n;
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

/** /proc/<pid>/net/dev: every interface but lo; the summary's top level is eth0 (upstream's default). */
function parseNetDev(text: string, time: Date): NetworkStats | undefined {
  const interfaces: NonNullable<NetworkStats['interfaces']> = [];
  for (const line of text.split('\n').slice(2)) {
    const m = /^\s*([^:\s]+):\s*(.*)$/.exec(line);
    if (!m || m[1] === 'lo') continue;
    const n = m[2]!.trim().split(/\s+/);
    if (n.length < 16) continue;
    interfaces.push({ name: m[1]!, rxBytes: BigInt(n[0]!), rxErrors: BigInt(n[2]!), txBytes: BigInt(n[8]!), txErrors: BigInt(n[10]!) });
  }
  if (interfaces.length === 0) return undefined;
  const def = interfaces.find((i) => i.name === 'eth0') ?? interfaces[0]!;
  return { time, ...def, interfaces };
}
