/**
 * The Pod Lifecycle Event Generator boundary (upstream pleg.PodLifecycleEventGenerator).
 */
import type { PodRuntimeStatus } from '../kuberuntime/types.js';

export type PodLifecycleEventType =
  'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged' | 'PodSync';

export interface PodLifecycleEvent {
  /** Pod UID. */
  id: string;
  type: PodLifecycleEventType;
  /** Container (or sandbox) id the event concerns. */
  data: string;
}

export interface PodLifecycleEventGenerator {
  start(): void;
  stop(): void;
  /** Subscribe to events; returns an unsubscribe function. */
  watch(listener: (event: PodLifecycleEvent) => void): () => void;
  /** Healthy while relists keep completing (upstream: within 3 minutes). */
  healthy(): { ok: boolean; message?: string };
  /** One relist iteration; public so tests (and event-driven triggers) can call it. */
  relist(): Promise<void>;
  /** How CRI container events are used; undefined when the PLEG was not given a subscription. */
  criEventsState?(): CriEventsState | undefined;
  /**
   * The kubelet is about to stop this pod's containers itself (a kill): their exits need no
   * confirmation calls, since the runtime has recorded an exit by the time StopContainer returns.
   * Every call is ended by one podStopped.
   */
  expectPodStop?(uid: string): void;
  /**
   * The kill ended. With the pod's status read after it (upstream UpdateCache): the status is
   * cached as a pod relist's, and ContainerDied sent for its containers that were running.
   * Without one (the kill failed or was superseded), the exits seen meanwhile are confirmed as usual.
   */
  podStopped?(uid: string, stopped?: { status: PodRuntimeStatus; observed: number }): void;
}

/** 'unsupported': the runtime answered Unimplemented (containerd 1.6); 'retrying': stream failed, resubscribing. */
export type CriEventsState = 'connecting' | 'active' | 'unsupported' | 'retrying' | 'stopped';

export interface CachedPodStatus {
  status: PodRuntimeStatus | undefined;
  error: Error | undefined;
  /** When the status was observed. */
  modified: number;
}

/** Pod status cache filled by the PLEG and read by the pod workers (upstream kubecontainer.Cache). */
export interface PodStatusCache {
  get(uid: string): CachedPodStatus | undefined;
  /** Resolves with a status observed after `minTime` (ms), waiting for the next relist if needed. */
  getNewerThan(uid: string, minTime: number, signal?: AbortSignal): Promise<CachedPodStatus>;
  /** What getNewerThan would resolve with at once; undefined when it would wait for a relist. */
  newerThan(uid: string, minTime: number): CachedPodStatus | undefined;
  set(uid: string, status: PodRuntimeStatus | undefined, error: Error | undefined, observed: number): void;
  delete(uid: string): void;
  /** Every entry is at least as new as `time`: a relist saw no change for them. */
  updateTime(time: number): void;
}
