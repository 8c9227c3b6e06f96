/**
 * One syncLoop iteration (upstream syncLoopIteration): route one input to the SyncHandler.
 * Config updates go by operation; a PLEG event, a probe result change or a due resync syncs the
 * pod it names (if it is still desired: housekeeping deals with the rest); the housekeeping
 * tick runs HandlePodCleanups. As upstream, ContainerRemoved is not worth a sync (the container
 * was already dead), and ContainerDied also asks for the pod's surplus dead containers to go.
 */
import type { Pod } from '../api/types.js';
import type { PodLifecycleEvent } from '../pleg/types.js';
import type { SyncHandler, SyncLoopInput, SyncLoopView } from './types.js';

/** upstream isSyncPodWorthy. */
export function isSyncPodWorthy(e: PodLifecycleEvent): boolean {
  return e.type !== 'ContainerRemoved';
}

export async function syncLoopIteration(input: SyncLoopInput, handler: SyncHandler, view: SyncLoopView): Promise<void> {
  switch (input.kind) {
    case 'config': {
      const { op, pods } = input.update;
      switch (op) {
        case 'ADD':
          return handler.handlePodAdditions(pods);
        case 'UPDATE':
        case 'DELETE':
          return handler.handlePodUpdates(pods);
        case 'REMOVE':
          return handler.handlePodRemoves(pods);
        case 'RECONCILE':
          return handler.handlePodReconcile(pods);
        case 'SET':
          return; // PodConfig turns SETs into the operations above.
      }
      return;
    }
    case 'pleg': {
      const e = input.event;
      if (isSyncPodWorthy(e)) syncDesired([e.id], handler, view);
      if (e.type === 'ContainerDied' && e.data) view.cleanUpContainersInPod(e.id, e.data);
      return;
    }
    case 'probe':
      return syncDesired([input.podUid], handler, view);
    case 'sync':
      return syncDesired(view.podsDueForSync(), handler, view);
    case 'housekeeping':
      return handler.handlePodCleanups();
  }
}

function syncDesired(uids: readonly string[], handler: SyncHandler, view: SyncLoopView): void {
  const pods = uids.map((uid) => view.getPodByUID(uid)).filter((p): p is Pod => p !== undefined);
  if (pods.length > 0) handler.handlePodSyncs(pods);
}
