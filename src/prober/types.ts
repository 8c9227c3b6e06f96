/**
 * The prober's boundary (upstream pkg/kubelet/prober: Manager, results.Manager, the probers).
 * The kubelet tells the manager about each pod's latest status; one worker per container per
 * probe kind probes on its period and records results; result changes are announced so the
 * syncLoop syncs the pod (liveness/startup failures kill, readiness drives Ready).
 */
import type { ApiPodStatus, Pod } from '../api/types.js';

export type ProbeType = 'liveness' | 'readiness' | 'startup';

/** upstream probe.Result: warnings count as success, unknown is "no result / errored". */
export type ProbeOutcome = 'success' | 'warning' | 'failure' | 'unknown';

/** One probe's answer: the outcome and what to tell the user (event message). */
export interface ProbeReply {
  outcome: ProbeOutcome;
  output: string;
}

/** Where a probe goes: what the prober needs to know about the container and its pod. */
export interface ProbeTarget {
  pod: Pod;
  containerName: string;
  containerId: string;
  podIP: string;
}

/** One action kind (exec, httpGet, tcpSocket, grpc). */
export interface Prober {
  probe(target: ProbeTarget, timeoutMs: number): Promise<ProbeReply>;
}

/** The cached result of one probe kind (upstream results.Result: Success/Failure/Unknown). */
export type CachedResult = 'success' | 'failure' | 'unknown';

export interface ResultUpdate {
  containerId: string;
  result: CachedResult;
  podUid: string;
  probeType: ProbeType;
}

/** upstream results.Manager: results by container ID, and a stream of changes. */
export interface ResultsManager {
  get(containerId: string): CachedResult | undefined;
  /** Records a result; announces it when it differs from the one held. */
  set(containerId: string, result: CachedResult, podUid: string): void;
  remove(containerId: string): void;
  onUpdate(listener: (u: ResultUpdate) => void): void;
}

/** upstream prober.Manager, reduced to what the kubelet calls. */
export interface ProbeManager {
  /**
   * The pod's latest API status (after each sync): starts the workers of its probes on first
   * sight, and gives the workers the container IDs, states and pod IP they probe. A terminal pod
   * stops its workers.
   */
  updatePod(pod: Pod, status: ApiPodStatus, podIsTerminal: boolean): void;
  /** A terminating pod: no more liveness or startup kills (upstream StopLivenessAndStartup). */
  stopLivenessAndStartup(podUid: string): void;
  /** Stops every worker of a pod and forgets its results. */
  removePod(podUid: string): void;
  /** Housekeeping: stops workers of pods no longer desired (upstream CleanupPods). */
  cleanupPods(desired: ReadonlySet<string>): void;
  /** Called with a pod UID whenever a probe result of that pod changes. */
  onResultChange(listener: (podUid: string) => void): void;
  /** For the pod status (status.ProbeResults). */
  readiness(containerId: string): boolean | undefined;
  startup(containerId: string): boolean | undefined;
  /** For the runtime (kuberuntime ProbeFailure): a failed liveness or startup probe. */
  probeFailure(containerId: string): 'LivenessProbe' | 'StartupProbe' | undefined;
  startupProbeSucceeded(containerId: string): boolean | undefined;
  /** Stops every worker. */
  stop(): void;
}
