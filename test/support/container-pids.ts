/**
 * The processes of a running container, found through its cgroup (the v1 memory hierarchy or
 * the unified one, under kubepods, a few levels deep): for tests and benches that kill a
 * container's processes from outside, as a crash or the OOM killer would.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOTS = ['/sys/fs/cgroup/memory', '/sys/fs/cgroup/unified', '/sys/fs/cgroup'];

/** The first directory whose name contains `id`, at most `depth` levels below dir. */
function findDir(dir: string, id: string, depth: number): string | undefined {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  const hit = entries.find((e) => e.isDirectory() && e.name.includes(id));
  if (hit) return join(dir, hit.name);
  if (depth === 0) return undefined;
  for (const e of entries) {
    const found = e.isDirectory() ? findDir(join(dir, e.name), id, depth - 1) : undefined;
    if (found) return found;
  }
  return undefined;
}

/** PIDs in the cgroup of container `id` (a CRI id, without the runtime:// prefix); [] when not found. */
export function containerPids(id: string): number[] {
  for (const root of ROOTS) {
    for (const top of ['kubepods', 'kubepods.slice']) {
      const dir = findDir(join(root, top), id, 3);
      if (dir) return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    }
  }
  return [];
}

/** SIGKILLs every process of container `id`; returns how many there were. */
export function killContainerProcesses(id: string): number {
  const pids = containerPids(id);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
  return pids.length;
}

/** A file of container `id`'s cgroup in one v1 controller (e.g. `cpu`, `memory`); undefined when not found. */
export function containerCgroupFile(controller: string, id: string, file: string): string | undefined {
  const dir = findDir(join('/sys/fs/cgroup', controller, 'kubepods'), id, 3);
  return dir ? readFileSync(join(dir, file), 'utf8').trim() : undefined;
}
