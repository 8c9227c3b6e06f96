/**
 * cgroup v1 hosts, as upstream 1.35: failCgroupV1 (default true) makes the agent refuse to start
 * on a host that is not in the unified (v2) mode, with upstream's validation message; with
 * failCgroupV1: false it starts and warns (log and a CgroupV1 Warning event on the Node, upstream
 * cm's CgroupV1MaintenanceModeWarning). A hybrid host (v1 controllers, an empty unified tree) is
 * cgroup v1 here as upstream: IsCgroup2UnifiedMode asks only whether /sys/fs/cgroup is cgroup2fs.
 */
import { statfsSync } from 'node:fs';

/** statfs f_type of a cgroup2 mount (linux/magic.h CGROUP2_SUPER_MAGIC). */
const CGROUP2_SUPER_MAGIC = 0x63677270;

/** Upstream's validation error (pkg/kubelet/apis/config/validation, Linux). */
export const CGROUP_V1_REFUSED =
  'kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release';

/** Upstream's warning (log line and event message) when it runs on cgroup v1. */
export const CGROUP_V1_WARNING = 'cgroup v1 support is in maintenance mode, please migrate to cgroup v2';

/** Upstream's event reason for that warning. */
export const CGROUP_V1_EVENT_REASON = 'CgroupV1';

/** Whether `root` (default /sys/fs/cgroup) is a cgroup2 mount: the unified mode. */
export function isCgroup2UnifiedMode(root = '/sys/fs/cgroup'): boolean {
  try {
    return Number(statfsSync(root).type) === CGROUP2_SUPER_MAGIC;
  } catch {
    return false;
  }
}

export type CgroupVersionVerdict = { kind: 'ok' } | { kind: 'refuse'; message: string } | { kind: 'warn' };

/** What to do at start: cgroup v2 is fine; v1 is refused unless failCgroupV1 is false, then warned about. */
export function cgroupVersionVerdict(failCgroupV1: boolean, unified: boolean): CgroupVersionVerdict {
  if (unified) return { kind: 'ok' };
  if (failCgroupV1)
    return {
      kind: 'refuse',
      message: `failed to validate kubelet configuration, error: ${CGROUP_V1_REFUSED} (set failCgroupV1: false or --fail-cgroupv1=false to run on this host)`,
    };
  return { kind: 'warn' };
}
