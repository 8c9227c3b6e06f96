/**
 * Graceful node shutdown (upstream pkg/kubelet/nodeshutdown): when the node is about to go down,
 * terminate pods in priority order within shutdownGracePeriod. Interfaces only.
 */
import type { Pod } from '../api/types.js';

/** Tells the manager that the node is going down (upstream: a logind PrepareForShutdown signal). */
export interface ShutdownTrigger {
  /** `cb` is called once, the first time the node is announced to be going down. */
  start(cb: (why: string) => void): void;
  stop(): void;
}

export interface NodeShutdownManager {
  start(): void;
  stop(): void;
  /** True once a shutdown was announced (admission rejects new pods, node status not ready). */
  shuttingDown(): boolean;
  /** Admission while shutting down (upstream's admit handler): rejected with reason NodeShutdown. */
  admit(pod: Pod): { admit: boolean; reason?: string; message?: string };
  /** Runs the shutdown now: resolves when every group was killed or ran out of its budget. */
  processShutdownEvent(why: string): Promise<void>;
}

/** Kills one pod with this grace period and status message; resolves once its containers stopped. */
export type KillPodForShutdown = (pod: Pod, gracePeriodSeconds: number, message: string) => Promise<void>;
