/**
 * The eviction manager's boundary (upstream pkg/kubelet/eviction): signals observed from the
 * stats, thresholds, node pressure conditions, and the pod it evicts. Interfaces and types only.
 */
import type { Pod } from '../api/types.js';

export type Signal =
  | 'memory.available'
  | 'nodefs.available'
  | 'nodefs.inodesFree'
  | 'imagefs.available'
  | 'imagefs.inodesFree'
  | 'pid.available';
export type NodeConditionType = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

export interface Threshold {
  signal: Signal;
  /** Exactly one of quantity (bytes / inodes / pids) and percentage (0..1 of capacity). */
  quantity?: bigint;
  percentage?: number;
  /** 0 for hard thresholds. */
  gracePeriodMs: number;
  hard: boolean;
}

export interface Observation {
  available: bigint;
  capacity: bigint;
}

export interface NodeConditionStatus {
  type: NodeConditionType;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime: Date;
}

/** The read-only view the node status and admission need (upstream eviction.Manager). */
export interface NodePressure {
  nodeConditions(): NodeConditionStatus[];
  isUnderMemoryPressure(): boolean;
  isUnderDiskPressure(): boolean;
  isUnderPIDPressure(): boolean;
}

export interface EvictionManager extends NodePressure {
  /** One monitoring pass (upstream synchronize): observe, update conditions, evict at most one pod. Returns the evicted pod. */
  synchronize(): Promise<Pod | undefined>;
  start(): void;
  stop(): void;
}

/** What the manager needs from the kubelet. */
export interface EvictionKubelet {
  activePods(): Pod[];
  /** Stop the pod, phase Failed reason Evicted with message; resolves when its containers stopped. */
  evictPod(pod: Pod, message: string, gracePeriodSeconds?: number): Promise<void>;
}
