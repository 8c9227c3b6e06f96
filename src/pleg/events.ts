/**
 * The relist diff (upstream generateEvents): container states of the previous and the current
 * relist in, lifecycle events out. Sandboxes take part as containers, as upstream.
 */
import type { PodLifecycleEvent } from './types.js';

export type PlegContainerState = 'running' | 'exited' | 'unknown' | 'non-existent';

export function generateEvents(podId: string, cid: string, oldState: PlegContainerState, newState: PlegContainerState): PodLifecycleEvent[] {
  if (oldState === newState) return [];
  switch (newState) {
    case 'running':
      return [{ id: podId, type: 'ContainerStarted', data: cid }];
    case 'exited':
      return [{ id: podId, type: 'ContainerDied', data: cid }];
    case 'unknown':
      return [{ id: podId, type: 'ContainerChanged', data: cid }];
    case 'non-existent':
      // A container that vanished while running died first: report both so the worker sees the death.
      return oldState === 'exited'
        ? [{ id: podId, type: 'ContainerRemoved', data: cid }]
        : [{ id: podId, type: 'ContainerDied', data: cid }, { id: podId, type: 'ContainerRemoved', data: cid }];
  }
}
