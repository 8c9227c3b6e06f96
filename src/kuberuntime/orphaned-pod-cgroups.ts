/**
 * upstream cleanupOrphanedPodCgroups (kubelet_pods.go), run by every housekeeping pass: the pod
 * cgroups of pods that can no longer run anything are removed, so a deleted pod's cgroup (its
 * slice under the systemd driver) goes within a housekeeping period (2 s), not at the next
 * container GC (every minute).
 *
 * The caller's `keep` holds the pods that may still run (a worker syncing or terminating them,
 * or the runtime showing them running) and those whose volumes are still there: upstream keeps
 * the cgroup until then, so that a memory-backed volume stays charged to the pod.
 */
import type { PodContainerManager } from '../cm/types.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';

export class OrphanedPodCgroups {
  /** Pods whose cgroup could not be removed: warned once, then retried quietly every pass. */
  private readonly failing = new Set<string>();

  constructor(private readonly pcm: PodContainerManager) {}

  async cleanup(keep: (uid: string) => Promise<boolean>): Promise<void> {
    if (!this.pcm.enabled) return;
    const found = await this.pcm.getAllPodsFromCgroups();
    for (const uid of this.failing) if (!found.has(uid)) this.failing.delete(uid);
    for (const [uid, cgroup] of found) {
      if (await keep(uid)) {
        this.failing.delete(uid); // the pod runs again (a static pod restored): a later refusal is news
        continue;
      }
      try {
        await this.pcm.destroy(cgroup);
        this.failing.delete(uid);
      } catch (err) {
        // The kernel refuses to remove a cgroup that still holds processes: the next pass retries.
        const level = this.failing.has(uid) ? 'debug' : 'warn';
        this.failing.add(uid);
        log('kuberuntime')[level]({ err: errorMessage(err), uid, cgroup }, 'failed to remove pod cgroup; will retry');
      }
    }
  }
}
