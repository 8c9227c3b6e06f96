/** A tiny in-memory Runtime for unit tests of PLEG and the kubelet (no CRI, no containers). */
import type { Pod } from '../../src/api/types.js';
import type {
  PodRuntimeStatus,
  PodSyncResult,
  Runtime,
  RunningPod,
  RuntimeContainerState,
  RuntimeExitReport,
} from '../../src/kuberuntime/types.js';
import { patchPodStatus } from '../../src/kuberuntime/runtime-status.js';
import type { RuntimeCondition } from '../../src/cri/types.js';
import type { RawRelistSource } from '../../src/pleg/index.js';
import { createTsRelistDiffer } from '../../src/pleg/relist-differ-ts.js';
import {
  encodeContainers,
  encodeSandboxes,
  POD_UID,
  POD_NAME,
  POD_NAMESPACE,
  CONTAINER_NAME,
} from '../../bench/fixtures/relist-model.js';

const STATE_NUM: Record<RuntimeContainerState, number> = { created: 0, running: 1, exited: 2, unknown: 3 };

export class FakeRuntime implements Runtime, RawRelistSource {
  pods: RunningPod[] = [];
  synced: string[] = [];
  killed: { uid: string; grace?: number }[] = [];
  failStatus = new Set<string>();

  setContainer(uid: string, cid: string, state: RuntimeContainerState | undefined, name = cid): void {
    let pod = this.pods.find((p) => p.uid === uid);
    if (!pod) {
      pod = { uid, name: `pod-${uid}`, namespace: 'default', containers: [], sandboxes: [] };
      this.pods.push(pod);
    }
    pod.containers = pod.containers.filter((c) => c.id !== cid);
    if (state)
      pod.containers.push({
        id: cid,
        name,
        image: 'img',
        imageRef: 'sha256:x',
        hash: 'h',
        state,
        createdAt: 1n,
        podSandboxId: 's',
      });
  }

  /** The PLEG's raw list calls, encoded like containerd's replies. */
  async listRaw(): Promise<{ sandboxes: Buffer; containers: Buffer }> {
    const podLabels = (p: RunningPod): [string, string][] => [
      [POD_UID, p.uid],
      [POD_NAME, p.name],
      [POD_NAMESPACE, p.namespace],
    ];
    return {
      sandboxes: encodeSandboxes(
        this.pods.flatMap((p) =>
          p.sandboxes.map((s) => ({
            id: s.id,
            metadata: { name: p.name, uid: p.uid, namespace: p.namespace, attempt: s.attempt },
            state: s.ready ? 0 : 1,
            createdAt: s.createdAt,
            labels: podLabels(p),
            annotations: [],
            runtimeHandler: '',
          })),
        ),
      ),
      containers: encodeContainers(
        this.pods.flatMap((p) =>
          p.containers.map((c) => ({
            id: c.id,
            sandboxId: c.podSandboxId,
            name: c.name,
            attempt: 0,
            image: c.image,
            imageRef: c.imageRef,
            state: STATE_NUM[c.state],
            createdAt: c.createdAt,
            labels: [...podLabels(p), [CONTAINER_NAME, c.name] as [string, string]],
            annotations: [],
          })),
        ),
      ),
    };
  }

  /** PLEG options wired to this fake (the TS differ over its encoded replies). */
  plegOptions() {
    return { runtime: this, source: this, differ: createTsRelistDiffer() };
  }

  async version() {
    return { runtimeName: 'fake', runtimeVersion: '0', runtimeApiVersion: 'v1' };
  }
  /** The runtime's conditions; tests replace them (NetworkReady=false for a node without CNI). */
  conditions: RuntimeCondition[] = [
    { type: 'RuntimeReady', status: true, reason: '', message: '' },
    { type: 'NetworkReady', status: true, reason: '', message: '' },
  ];
  async status() {
    return { conditions: this.conditions, handlers: [] };
  }
  async getPods(): Promise<RunningPod[]> {
    return structuredClone(this.pods);
  }
  /** The real patch over this fake's statuses (the report's CRI statuses need our labels). */
  patchPodStatus(previous: PodRuntimeStatus, report: RuntimeExitReport): Promise<PodRuntimeStatus | undefined> {
    return patchPodStatus(previous, report, () => Date.now());
  }
  async getPodStatus(uid: string, name: string, namespace: string): Promise<PodRuntimeStatus> {
    if (this.failStatus.has(uid)) throw new Error(`status of ${uid} failed`);
    const pod = this.pods.find((p) => p.uid === uid);
    return {
      uid,
      name,
      namespace,
      ips: [],
      sandboxStatuses: [...(pod?.sandboxes ?? [])]
        .sort((a, b) => Number(b.createdAt - a.createdAt))
        .map((s) => ({ ...s, ip: '', additionalIps: [], hostNetwork: false })),
      timestamp: new Date(),
      containerStatuses: (pod?.containers ?? []).map((c) => ({
        id: c.id,
        name: c.name,
        state: c.state,
        createdAt: new Date(0),
        exitCode: 0,
        image: c.image,
        imageRef: c.imageRef,
        restartCount: 0,
        reason: '',
        message: '',
        hash: c.hash,
        podSandboxId: c.podSandboxId,
      })),
    };
  }
  async syncPod(pod: Pod): Promise<PodSyncResult> {
    this.synced.push(pod.metadata!.uid!);
    return { waiting: new Map() };
  }
  async killPod(pod: Pod | undefined, running: RunningPod, grace?: number): Promise<void> {
    this.killed.push({ uid: running.uid, grace });
  }
  async garbageCollect(): Promise<void> {}

  async cleanupOrphanedPodCgroups(_keep: (uid: string) => Promise<boolean>): Promise<void> {}
  /** The podContainerDeletor requests: [exited container ID, removeAll]. */
  deletions: Array<[string, boolean]> = [];
  deleteContainersInPod(exitedContainerId: string, _status: PodRuntimeStatus, removeAll: boolean): void {
    this.deletions.push([exitedContainerId, removeAll]);
  }

  /** A sandbox of the pod (created if absent), ready or not. */
  setSandbox(uid: string, sid: string, ready: boolean | undefined, attempt = 0): void {
    this.setContainer(uid, '__none__', undefined);
    const pod = this.pods.find((p) => p.uid === uid)!;
    pod.sandboxes = pod.sandboxes.filter((s) => s.id !== sid);
    if (ready !== undefined) pod.sandboxes.push({ id: sid, ready, attempt, createdAt: 1n });
  }
}
