/**
 * Which files describe one cgroup on this host. cgroup v1 controllers (also on hybrid hosts,
 * where the unified tree has no controllers) come first; a pure v2 host reads the unified tree.
 * PSI files (opt-in: nothing consumes them yet, and they cost 3 more reads per cgroup) are read
 * from the unified tree when present (hybrid hosts have them there too).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CgroupMounts } from '../cm/types.js';
import { cgroupNaming, qosCgroupNames, type CgroupNaming } from '../cm/cgroup-name.js';
import { F, K, NEED, type CgroupFileSpec, type FileKind } from './cgroup-fields.js';

export interface CgroupLayout {
  /** 'v1' when v1 controllers are mounted (v1 or hybrid host), else 'v2'. */
  mode: 'v1' | 'v2';
  /**
   * Specs for cgroup `name` (relative to each hierarchy's root, e.g. /kubepods/pod<uid>/<id>) as
   * row `group`. `byController`: a process's own path per v1 controller, where they differ (a
   * process's cpu and memory cgroups need not be the same on a v1 host).
   */
  files(name: string, group: number, byController?: ReadonlyMap<string, string>): CgroupFileSpec[];
  /** Where the memory controller's tree is (the v1 memory mount, or the unified root). */
  memoryRoot?: string;
  /** Pod cgroups present, by pod UID (name relative to the hierarchy root). */
  podCgroups(cgroupRoot: string): Map<string, string>;
  /** The kubepods cgroup (relative to the hierarchy root). */
  kubepods(cgroupRoot: string): string;
  /** A container's cgroup below its pod's (the driver and the runtime name its last element). */
  containerCgroup(podCgroup: string, containerId: string): string;
}

type FileRow = readonly [file: string, kind: FileKind, slot: number, need?: number];

const V1: Record<string, readonly FileRow[]> = {
  cpuacct: [
    ['cpuacct.usage', K.single, F.cpuUsageNs],
    ['cpuacct.usage_user', K.single, F.cpuUserNs, NEED.cadvisor],
    ['cpuacct.usage_sys', K.single, F.cpuSystemNs, NEED.cadvisor],
  ],
  cpu: [['cpu.stat', K.cpuStatV1, 0, NEED.throttling]],
  memory: [
    ['memory.usage_in_bytes', K.single, F.memUsage],
    ['memory.limit_in_bytes', K.limitV1, F.memLimit, NEED.limits],
    ['memory.stat', K.memStatV1, 0],
    ['memory.failcnt', K.single, F.memFailcnt, NEED.cadvisor],
    ['memory.oom_control', K.oomControlV1, 0],
  ],
  pids: [['pids.current', K.single, F.pids]],
  blkio: [['blkio.throttle.io_service_bytes', K.blkioV1, 0, NEED.cadvisor]],
};
const V2: readonly FileRow[] = [
  ['cpu.stat', K.cpuStatV2, 0],
  ['memory.current', K.single, F.memUsage],
  ['memory.max', K.single, F.memLimit, NEED.limits],
  ['memory.stat', K.memStatV2, 0],
  ['memory.events', K.memEventsV2, 0],
  ['pids.current', K.single, F.pids],
  ['io.stat', K.ioStatV2, 0, NEED.cadvisor],
];
const PSI: readonly FileRow[] = [
  ['cpu.pressure', K.psi, F.psiCpuSome, NEED.psi],
  ['memory.pressure', K.psi, F.psiMemSome, NEED.psi],
  ['io.pressure', K.psi, F.psiIoSome, NEED.psi],
];

export function createCgroupLayout(
  mounts: CgroupMounts,
  psi = false,
  naming: CgroupNaming = cgroupNaming('cgroupfs'),
): CgroupLayout {
  const v1Roots = new Map<string, string>();
  for (const [mount, controllers] of mounts.v1) for (const c of controllers) if (c in V1) v1Roots.set(c, mount);
  const mode = v1Roots.has('memory') || v1Roots.has('cpuacct') ? 'v1' : 'v2';
  const unified = mounts.unified;
  const psiOn = psi && unified !== undefined && existsSync(join(unified, 'cpu.pressure'));
  const memoryRoot = mode === 'v1' ? v1Roots.get('memory') : unified;
  return {
    mode,
    memoryRoot,
    files(name: string, group: number, byController?: ReadonlyMap<string, string>): CgroupFileSpec[] {
      const out: CgroupFileSpec[] = [];
      const add = (root: string, rows: readonly FileRow[], path = name) => {
        for (const [file, kind, slot, need = NEED.usage] of rows)
          out.push({ path: join(root, path, file), kind, group, slot, need });
      };
      if (mode === 'v1') for (const [c, root] of v1Roots) add(root, V1[c]!, byController?.get(c));
      else if (unified) add(unified, V2);
      if (psiOn) add(unified!, PSI, byController?.get('') ?? name);
      return out;
    },
    podCgroups(cgroupRoot: string): Map<string, string> {
      const out = new Map<string, string>();
      if (!memoryRoot) return out;
      for (const qos of Object.values(qosCgroupNames(naming.parse(cgroupRoot)))) {
        const rel = naming.path(qos);
        let entries: string[];
        try {
          entries = readdirSync(join(memoryRoot, rel));
        } catch {
          continue;
        }
        for (const e of entries) {
          const uid = naming.podUidOfLeaf(e);
          if (uid) out.set(uid, join(rel, e));
        }
      }
      return out;
    },
    kubepods: (cgroupRoot) => naming.path(qosCgroupNames(naming.parse(cgroupRoot)).kubepods),
    containerCgroup(podCgroup: string, containerId: string): string {
      const leaves = naming.containerLeaves(containerId);
      // One spelling under cgroupfs; under systemd the runtime's scope name, found once per pass.
      const found =
        leaves.length > 1 && memoryRoot ? leaves.find((l) => existsSync(join(memoryRoot, podCgroup, l))) : undefined;
      return `${podCgroup}/${found ?? leaves[0]}`;
    },
  };
}
