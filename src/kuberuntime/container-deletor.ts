/**
 * upstream podContainerDeletor (pkg/kubelet/pod_container_deletor.go): when a container dies, the
 * syncLoop asks for the pod's dead containers beyond the newest `containersToKeep` of that name
 * to go at once, instead of waiting for the minute's container GC; when the pod's content may go
 * (evicted, or deleted and terminated), every dead container goes. Requests are queued and run
 * one at a time off the syncLoop; a full queue drops the request (GC will get to it), as
 * upstream's buffered channel does.
 */
import { log } from '../util/log.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus } from './types.js';

/** upstream containerDeletorBufferLimit. */
export const CONTAINER_DELETOR_BUFFER = 50;
/** upstream minDeadContainerInPod: at least this many dead containers per name stay (logs --previous). */
export const MIN_DEAD_CONTAINERS_IN_POD = 1;

/**
 * upstream getContainersToDeleteInPod: the exited containers of the filter container's name (all
 * names when the filter is empty), newest first, past the first `keep`. A filter naming no
 * container of the pod selects nothing.
 */
export function containersToDeleteInPod(
  filterContainerId: string,
  status: PodRuntimeStatus,
  keep: number,
): ContainerRuntimeStatus[] {
  const matched = filterContainerId ? status.containerStatuses.find((c) => c.id === filterContainerId) : undefined;
  if (filterContainerId && !matched) return [];
  const candidates = status.containerStatuses.filter(
    (c) => c.state === 'exited' && (!matched || c.name === matched.name),
  );
  if (candidates.length <= keep) return [];
  return [...candidates].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).slice(keep);
}

export class PodContainerDeletor {
  private readonly queue: string[] = [];
  private running = false;
  private inFlight: string | undefined;

  constructor(
    private readonly remove: (containerId: string) => Promise<void>,
    private readonly containersToKeep: number,
  ) {}

  /** upstream deleteContainersInPod: removeAll keeps none and ignores the filter. */
  deleteContainersInPod(filterContainerId: string, status: PodRuntimeStatus, removeAll: boolean): void {
    const keep = removeAll ? 0 : this.containersToKeep;
    for (const c of containersToDeleteInPod(removeAll ? '' : filterContainerId, status, keep)) {
      if (this.queue.includes(c.id) || this.inFlight === c.id) continue;
      if (this.queue.length >= CONTAINER_DELETOR_BUFFER) {
        log('kuberuntime').info({ containerId: c.id }, 'Failed to issue the request to remove container: queue full');
        continue;
      }
      this.queue.push(c.id);
    }
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let id = this.queue.shift(); id !== undefined; id = this.queue.shift()) {
        this.inFlight = id;
        await this.remove(id).catch((err: unknown) =>
          log('kuberuntime').error({ containerId: id, err }, 'failed to remove container'),
        );
      }
    } finally {
      this.running = false;
      this.inFlight = undefined;
    }
  }
}
