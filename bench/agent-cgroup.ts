/**
 * A memory cgroup of the agent's own for the bench (issue 30): what the kernel charges the agent
 * and its working set as cAdvisor reports it (usage − inactive file), not just what its page
 * table maps. The bench makes one per agent at the root of the host's memory hierarchy (as
 * systemd gives a kubelet.service its own), moves the agent into it right after spawn and removes
 * it after the agent stopped.
 *
 *   v1 (the hybrid hosts here): memory.usage_in_bytes − total_inactive_file (memory.stat);
 *      memory.max_usage_in_bytes is the kernel's own high-water mark of usage (page cache included).
 *   v2: memory.current − inactive_file; memory.peak where the kernel has it.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cgroupfs, detectCgroupMounts } from '../src/cm/index.js';

const V1_ROOT = '/sys/fs/cgroup/memory';
const V2_MOUNTS = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup'];

export interface CgroupMemory {
  /** usage_in_bytes / memory.current. */
  usage: number;
  /** usage − inactive file: cAdvisor's container_memory_working_set_bytes. */
  workingSet: number;
}

export interface AgentCgroup {
  version: 'v1' | 'v2';
  path: string;
  read(): CgroupMemory | null;
  /** The kernel's high-water mark of usage since the last resetPeak(), when it keeps one. */
  peakUsage(): number | null;
  resetPeak(): void;
  /** Moves what is left in it to the root and removes it. */
  remove(): void;
}

const readNum = (file: string): number | null => {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return null;
  }
};

function statField(dir: string, field: string): number {
  const m = new RegExp(`^${field} (\\d+)$`, 'm').exec(readFileSync(join(dir, 'memory.stat'), 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** The cgroup2 mount whose root delegates the memory controller to its children, if any. */
function v2Root(): string | undefined {
  return V2_MOUNTS.find((m) => {
    try {
      return readFileSync(join(m, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('memory');
    } catch {
      return false;
    }
  });
}

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

function makeCgroup(version: 'v1' | 'v2', root: string, name: string): AgentCgroup {
  const path = join(root, name);
  mkdirSync(path);
  // v1 moves the charges of the pages a process already has when it moves (anonymous and mapped
  // file pages: 3); the agent moves within milliseconds of its exec, so there is little to move.
  if (version === 'v1') tryWrite(join(path, 'memory.move_charge_at_immigrate'), '3');
  const usageFile = join(path, version === 'v1' ? 'memory.usage_in_bytes' : 'memory.current');
  const peakFile = join(path, version === 'v1' ? 'memory.max_usage_in_bytes' : 'memory.peak');
  const inactive = version === 'v1' ? 'total_inactive_file' : 'inactive_file';
  return {
    version,
    path,
    read: () => {
      const usage = readNum(usageFile);
      if (usage === null) return null;
      return { usage, workingSet: Math.max(0, usage - statField(path, inactive)) };
    },
    peakUsage: () => readNum(peakFile),
    resetPeak: () => void tryWrite(peakFile, version === 'v1' ? '0' : 'reset'),
    remove: () => {
      if (!existsSync(path)) return;
      const pids = readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
      for (const pid of pids) tryWrite(join(root, 'cgroup.procs'), pid);
      rmdirSync(path);
    },
  };
}

/** A fresh memory cgroup holding `pid`, or why there is none (not root, no memory controller). */
export function agentCgroup(pid: number): AgentCgroup | { reason: string } {
  const name = `kubelet-ts-bench-${process.pid}-${pid}`;
  const v2 = v2Root();
  const version = existsSync(join(V1_ROOT, 'memory.usage_in_bytes')) ? 'v1' : v2 ? 'v2' : undefined;
  if (!version) return { reason: 'no memory cgroup hierarchy (v1 memory or a cgroup2 with memory delegated)' };
  let cg: AgentCgroup;
  try {
    cg = makeCgroup(version, version === 'v1' ? V1_ROOT : v2!, name);
  } catch (err) {
    return { reason: `cannot create a memory cgroup: ${(err as Error).message}` };
  }
  try {
    writeFileSync(join(cg.path, 'cgroup.procs'), String(pid));
  } catch (err) {
    cg.remove();
    return { reason: `cannot move the agent (pid ${pid}) into ${cg.path}: ${(err as Error).message}` };
  }
  return cg;
}

/**
 * A cgroup root of its own for one measured agent (its --cgroup-root): its pods' cgroups live
 * under it, so no other agent on the host lists or removes them (all agents otherwise share
 * /kubepods), and the cgroups it leaves behind go with it when the part ends, so the next part's
 * agent does not spend its measured minutes removing them (issue 30: ~0.4 CPU-s a minute).
 */
export function benchCgroupRoot(tag: string): { root: string; remove(): Promise<void> } {
  const root = `/kubelet-ts-bench-root-${process.pid}-${tag}`;
  // The agent's own removal (deepest first, in every hierarchy). A cgroup that still holds a
  // process is left for the operator: the bench removes its pods first.
  const remove = () => new Cgroupfs(detectCgroupMounts()).destroy(root).catch(() => undefined);
  return { root, remove };
}
