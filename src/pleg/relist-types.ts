/**
 * The relist diff hot path's contract (issue 4, item 2): the raw ListPodSandboxResponse and
 * ListContainersResponse bytes in, only the lifecycle events out, with the previous relist kept
 * as retained state inside the differ. Two implementations share this interface: the addon's
 * (native/src/pleg*.cc, wrapped by relist-diff-native.ts) and the TypeScript twin
 * (relist-differ-ts.ts over relist-decoder.ts). Both must agree exactly: events, pods, counts
 * and error messages (test/native/pleg-diff.test.ts). This file holds only the types and the
 * errors both throw, so users of the PLEG never import an implementation.
 *
 * Semantics (upstream GenericPLEG relist + generateEvents, seed 003):
 * - A container belongs to the pod of its `io.kubernetes.pod.uid` label and must also carry
 *   `io.kubernetes.container.name` (as kuberuntime/labels.ts getContainerInfoFromLabels); a
 *   sandbox needs `io.kubernetes.pod.uid`. Anything else is foreign and ignored.
 * - Sandboxes take part as containers of their pod: SANDBOX_READY (the proto3 default) is
 *   running, anything else exited. Containers: CONTAINER_RUNNING running, CONTAINER_EXITED
 *   exited, CREATED / UNKNOWN / other values unknown.
 * - Records are keyed by (pod uid, id), as upstream's per-pod records; within a pod the first
 *   container with an id wins and containers come before sandboxes (upstream getContainerState).
 * - Per record, old -> new: equal: nothing; running: ContainerStarted; exited: ContainerDied;
 *   unknown: ContainerChanged; gone: ContainerRemoved if it was exited, else ContainerDied then
 *   ContainerRemoved. Events are sorted by pod uid, container id (bytewise), emission order.
 * - `pods` holds each pod with events: name/namespace from its first sandbox of this relist
 *   (metadata, each field falling back to the io.kubernetes.pod.name/namespace labels), else
 *   from its first container's labels; a pod gone from this relist keeps its last known values.
 * - `counts`: labelled containers by CRI state; running pods = pods with a ready sandbox.
 * - Protobuf: proto3 merge rules (last scalar wins, repeated message fields merge, the last map
 *   entry for a key wins); enum values are the varint's low 32 bits. Groups (wire types 3/4),
 *   wire types 6/7, field number 0, tags above 32 bits, varints over 10 bytes and lengths past
 *   the end are errors, as is a decoded field with the wrong wire type. A malformed reply throws
 *   KubeletError('KTS_ERR_CRI_REPLY') and leaves the retained state unchanged.
 */
import { KubeletError } from '../errors.js';

export type RelistEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged';

export interface RelistEvent {
  /** Pod UID. */
  podId: string;
  /** Container or sandbox id. */
  containerId: string;
  type: RelistEventType;
}

export interface RelistPodInfo {
  uid: string;
  name: string;
  namespace: string;
}

export interface RelistCounts {
  /** Pods with at least one ready sandbox (kubelet_running_pods). */
  runningPods: number;
  /** Labelled containers by CRI state (kubelet_running_containers{container_state}). */
  containers: { created: number; running: number; exited: number; unknown: number };
}

export interface RelistResult {
  /** Only the changes since the previous diff, sorted by pod uid, container id, then order. */
  events: RelistEvent[];
  /** Each pod that has events, by uid. */
  pods: Map<string, RelistPodInfo>;
  counts: RelistCounts;
}

export interface RelistDiffer {
  /**
   * Decodes the two raw replies (serialized ListPodSandboxResponse, ListContainersResponse; an
   * empty buffer is an empty list) and diffs them against the previous relist, which they then
   * replace. Throws KubeletError('KTS_ERR_CRI_REPLY') on malformed bytes, state unchanged.
   */
  diff(sandboxes: Uint8Array, containers: Uint8Array): RelistResult;
  /** A pod of the last two relists or with events in the last diff. */
  podInfo(uid: string): RelistPodInfo | undefined;
  /**
   * Upstream does not update a pod's record when its inspection failed, so the next relist
   * reports its changes again: puts these pods' records back as they were before the last
   * diff(). Call between diffs; a pod without events in the last diff is left alone.
   */
  keepPrevious(uids: Iterable<string>): void;
  /** Forgets the retained state: the next diff reports every container as new. */
  reset(): void;
  /** Frees the retained state; diff() afterwards throws. Idempotent. */
  close(): void;
}

export type CreateRelistDiffer = () => RelistDiffer;

export const RELIST_EVENT_TYPES: readonly RelistEventType[] = [
  'ContainerStarted',
  'ContainerDied',
  'ContainerRemoved',
  'ContainerChanged',
];

/** The error both implementations throw for malformed bytes. */
export function relistDecodeError(message: string): KubeletError {
  return new KubeletError('KTS_ERR_CRI_REPLY', `cannot decode ${message}`);
}

export function closedError(): Error {
  return new Error('RelistDiffer is closed');
}
