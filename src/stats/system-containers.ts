/**
 * The node's system containers in the Summary API (upstream cm.GetSystemContainers): `kubelet`
 * (this agent's own cgroup, from /proc/self/cgroup), `runtime` (the cgroup of the process that
 * listens on the CRI socket) and `pods` (the kubepods cgroup).
 */
import { existsSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface SystemContainer {
  /** upstream's names: kubelet, runtime, pods. */
  name: 'kubelet' | 'runtime' | 'pods';
  /** cgroup path relative to the hierarchy root. */
  cgroup: string;
  /** The path in each v1 controller ('' = unified) where it differs from `cgroup`. */
  byController?: ReadonlyMap<string, string>;
  startTime: Date;
}

/** A process's cgroups from its /proc/<pid>/cgroup text: the path per v1 controller ('' = unified). */
export function parseProcCgroup(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') out.set('', m[3]!);
    else for (const c of m[2]!.split(',')) if (c && !c.startsWith('name=')) out.set(c, m[3]!);
  }
  return out;
}

/**
 * The cgroup that names a process: the memory controller's path on a v1 or hybrid host (the
 * stats layout finds memory there), else the unified (0::) one.
 */
export function cgroupOfProcess(paths: ReadonlyMap<string, string>, mode: 'v1' | 'v2'): string | undefined {
  return mode === 'v1' ? (paths.get('memory') ?? paths.get('')) : paths.get('');
}

/** Socket inodes listening on `path` in a /proc/net/unix text. */
export function listeningSocketInodes(text: string, path: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    // Num RefCount Protocol Flags Type St Inode Path; Flags 00010000 = __SO_ACCEPTCON (listening).
    if (f.length >= 8 && f[7] === path && (parseInt(f[3]!, 16) & 0x10000) !== 0) out.add(f[6]!);
  }
  return out;
}

/** The pid whose open fds include one of the socket inodes (one walk of /proc). */
function pidHoldingSocket(inodes: ReadonlySet<string>): number | undefined {
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1]!)) return Number(entry);
    }
  }
  return undefined;
}

/** The socket path of a CRI endpoint (`unix:///run/x.sock` or a bare path). */
export function socketPath(endpoint: string): string {
  return endpoint.replace(/^unix:\/\//, '').replace(/^unix:/, '');
}

/**
 * Finds the runtime's process once and keeps it while it lives: the walk of /proc costs a
 * readlink per open fd on the node, too much for every stats pass.
 */
export class RuntimeProcessFinder {
  private pid: number | undefined;
  /** When the last walk found nothing: the next one waits a minute (a runtime we cannot see stays unseen). */
  private missedAt = -Infinity;
  constructor(
    private readonly endpoint: string,
    private readonly now: () => number = Date.now,
  ) {}

  find(): number | undefined {
    if (this.pid !== undefined && alive(this.pid)) return this.pid;
    if (this.now() - this.missedAt < 60_000) return undefined;
    this.walk();
    if (this.pid === undefined) this.missedAt = this.now();
    return this.pid;
  }

  private walk(): void {
    try {
      this.pid = pidHoldingSocket(
        listeningSocketInodes(readFileSync('/proc/net/unix', 'latin1'), socketPath(this.endpoint)),
      );
    } catch {
      this.pid = undefined;
    }
  }
}

function alive(pid: number): boolean {
  try {
    statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/** When a process started: its /proc entry is created with it. */
export function processStartTime(pid: number | 'self'): Date | undefined {
  try {
    return statSync(`/proc/${pid}`).ctime;
  } catch {
    return undefined;
  }
}

/** The system containers found on this host (each one absent when it cannot be read). */
export function systemContainers(opts: {
  mode: 'v1' | 'v2';
  memoryRoot: string | undefined;
  /** The kubepods cgroup in the driver's path form. */
  kubepods: string;
  runtime?: RuntimeProcessFinder;
}): SystemContainer[] {
  const out: SystemContainer[] = [];
  const add = (name: SystemContainer['name'], pid: number | 'self') => {
    try {
      const byController = parseProcCgroup(readFileSync(`/proc/${pid}/cgroup`, 'latin1'));
      const cgroup = cgroupOfProcess(byController, opts.mode);
      const startTime = processStartTime(pid);
      // Only a cgroup the stats layout can read (not one of another cgroup namespace's view).
      if (cgroup && startTime && opts.memoryRoot && existsSync(join(opts.memoryRoot, cgroup)))
        out.push({ name, cgroup, byController, startTime });
    } catch {
      // process gone or unreadable: that system container is left out
    }
  };
  add('kubelet', 'self');
  const runtimePid = opts.runtime?.find();
  if (runtimePid !== undefined) add('runtime', runtimePid);
  if (opts.memoryRoot) {
    const pods = opts.kubepods;
    try {
      out.push({ name: 'pods', cgroup: pods, startTime: statSync(join(opts.memoryRoot, pods)).ctime });
    } catch {
      // no kubepods cgroup (cgroups per QoS off): no pods container
    }
  }
  return out;
}
