/**
 * The terminated reason reads OOMKilled when the OOM watcher saw the kernel kill the container,
 * even if the runtime reported Error (it misses kills on some cgroup setups: containerd #6323).
 */
import type { ApiPodStatus } from '../api/types.js';

const OOMKilled = 'OOMKilled';

export function markOomKilled(status: ApiPodStatus, wasOomKilled: (containerId: string) => boolean): void {
  const all = [status.containerStatuses, status.initContainerStatuses, status.ephemeralContainerStatuses];
  for (const s of all.flatMap((l) => l ?? [])) {
    for (const st of [s.state, s.lastState]) {
      const t = st?.terminated;
      if (!t || t.exitCode === 0 || t.reason === OOMKilled || !t.containerID) continue;
      const id = t.containerID.slice(t.containerID.indexOf('://') + 3);
      if (wasOomKilled(id)) t.reason = OOMKilled;
    }
  }
}
