/**
 * The allocation manager (upstream pkg/kubelet/allocation): the resources the kubelet admitted
 * for each container (allocated) and those it last gave the runtime (actuated), both kept in
 * checkpoint files under the root directory (`allocated_pods_state`, `actuated_pods_state`) so
 * that an agent restart neither re-admits a resize nor forgets what it applied; and the resize
 * decisions (upstream handlePodResourcesResize / canResizePod) with the PodResizePending and
 * PodResizeInProgress conditions (upstream status manager) that report them.
 *
 * A resize is the pod spec's container resources differing from the allocation: it is
 *  - Infeasible when the pod is static, or asks for more cpu/memory than the node's allocatable;
 *  - Deferred when it does not fit beside the other pods' allocations now (re-evaluated on every
 *    sync of the pod, upstream's pending-resize retry);
 *  - else allocated: the runtime manager actuates it (kuberuntime/resize.ts), PodResizeInProgress
 *    stays until every running container runs with its allocation (reason Error on a failure).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Container, Pod, PodCondition, ResourceRequirements } from '../api/types.js';
import { formatPod, isStaticPod, podUID } from '../api/pod.js';
import { errorMessage } from '../errors.js';
import type { ActuatedResources } from '../kuberuntime/resize.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus } from '../kuberuntime/types.js';
import type { NodeInfo } from '../node/node-info.js';
import { log } from '../util/log.js';
import { podRequests } from '../util/pod-resources.js';
import { apiTime } from '../util/time.js';
import type { AdmitResult } from './admission.js';
import { resourceValues } from '../kuberuntime/resize.js';
import { actualResources } from './resize-status.js';

export const ALLOCATED_STATE_FILE = 'allocated_pods_state';
export const ACTUATED_STATE_FILE = 'actuated_pods_state';
export const PodResizePending = 'PodResizePending';
export const PodResizeInProgress = 'PodResizeInProgress';
export const ReasonInfeasible = 'Infeasible';
export const ReasonDeferred = 'Deferred';
export const ReasonError = 'Error';

type PodResources = Record<string, ResourceRequirements>;

/** One checkpoint file: pod UID → container name → resources, with a checksum of the data. */
class ResourceCheckpoint {
  readonly pods = new Map<string, PodResources>();
  constructor(private readonly path: string | undefined) {
    if (path) this.load(path);
  }

  private load(path: string): void {
    let raw: string;
    try {
      raw = readFileSync(path, 'utf8');
    } catch {
      return; // none yet
    }
    // upstream: a corrupt checkpoint is dropped; pods are re-admitted at their spec resources.
    const corrupt = (why: string) =>
      log('kubelet').warn({ path, err: why }, 'ignoring a corrupt allocation checkpoint');
    try {
      const parsed = JSON.parse(raw) as { data: string; checksum: string };
      if (checksum(parsed.data) !== parsed.checksum) return corrupt('checksum mismatch');
      for (const [uid, r] of Object.entries(JSON.parse(parsed.data) as Record<string, PodResources>))
        this.pods.set(uid, r);
    } catch (err) {
      corrupt(errorMessage(err));
    }
  }

  save(): void {
    if (!this.path) return;
    const data = JSON.stringify(Object.fromEntries(this.pods));
    try {
      writeFileSync(`${this.path}.tmp`, JSON.stringify({ data, checksum: checksum(data) }), { mode: 0o600 });
      renameSync(`${this.path}.tmp`, this.path);
    } catch (err) {
      log('kubelet').error({ path: this.path, err: errorMessage(err) }, 'cannot write the allocation checkpoint');
    }
  }
}

const checksum = (data: string) => createHash('sha256').update(data).digest('hex');

/** Equal cpu/memory requests and limits (quantities compared by value). */
function sameResources(a: ResourceRequirements | undefined, b: ResourceRequirements | undefined): boolean {
  const x = resourceValues(a);
  const y = resourceValues(b);
  return (
    x.cpuLimit === y.cpuLimit &&
    x.cpuRequest === y.cpuRequest &&
    x.memoryLimit === y.memoryLimit &&
    x.memoryRequest === y.memoryRequest
  );
}

/** The containers whose resources are allocated: regular ones and sidecars (upstream IsResizableContainer). */
function resizableContainers(pod: Pod): Container[] {
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  return [...(pod.spec?.containers ?? []), ...sidecars];
}

interface ResizeConditions {
  pending?: PodCondition;
  inProgress?: PodCondition;
}

export interface AllocationManagerOptions {
  /** upstream --root-dir; absent: in memory only (tests). */
  rootDir?: string | undefined;
  now: () => number;
}

/** Admission of the resized pod beside the others (Kubelet.canAdmitPod). */
export type FitCheck = (pod: Pod, otherPods: readonly Pod[]) => AdmitResult;

export class AllocationManager implements ActuatedResources {
  private readonly allocated: ResourceCheckpoint;
  private readonly actuated: ResourceCheckpoint;
  private readonly conditions = new Map<string, ResizeConditions>();

  constructor(private readonly opts: AllocationManagerOptions) {
    if (opts.rootDir) mkdirSync(opts.rootDir, { recursive: true });
    this.allocated = new ResourceCheckpoint(opts.rootDir && join(opts.rootDir, ALLOCATED_STATE_FILE));
    this.actuated = new ResourceCheckpoint(opts.rootDir && join(opts.rootDir, ACTUATED_STATE_FILE));
  }

  getActuated(uid: string, containerName: string): ResourceRequirements | undefined {
    return this.actuated.pods.get(uid)?.[containerName];
  }

  setActuated(uid: string, containerName: string, resources: ResourceRequirements): void {
    const pod = this.actuated.pods.get(uid) ?? {};
    if (pod[containerName] && sameResources(pod[containerName], resources)) return;
    this.actuated.pods.set(uid, { ...pod, [containerName]: structuredClone(resources) });
    this.actuated.save();
  }

  getAllocated(uid: string, containerName: string): ResourceRequirements | undefined {
    return this.allocated.pods.get(uid)?.[containerName];
  }

  /** upstream AddPod's checkpoint: an admitted pod's resources are its allocation (kept across restarts). */
  addPod(pod: Pod): void {
    if (this.allocated.pods.has(podUID(pod))) return;
    this.setAllocated(pod);
  }

  private setAllocated(pod: Pod): void {
    const r: PodResources = {};
    for (const c of resizableContainers(pod)) r[c.name] = structuredClone(c.resources ?? {});
    this.allocated.pods.set(podUID(pod), r);
    this.allocated.save();
  }

  /** upstream UpdatePodFromAllocation: the pod with its containers' allocated resources. */
  updatePodFromAllocation(pod: Pod): { pod: Pod; updated: boolean } {
    const alloc = this.allocated.pods.get(podUID(pod));
    if (!alloc || !pod.spec) return { pod, updated: false };
    let updated = false;
    const swap = (c: Container): Container => {
      const a = alloc[c.name];
      if (!a || sameResources(a, c.resources)) return c;
      updated = true;
      return { ...c, resources: structuredClone(a) };
    };
    const spec = {
      ...pod.spec,
      containers: pod.spec.containers.map(swap),
      ...(pod.spec.initContainers ? { initContainers: pod.spec.initContainers.map(swap) } : {}),
    };
    return updated ? { pod: { ...pod, spec }, updated } : { pod, updated };
  }

  /**
   * upstream handlePodResourcesResize: decide a pending resize of `pod` (the spec from the
   * source) and return the pod to run, with its allocated resources.
   */
  /** `otherPods` is asked only when a resize is pending: a pod synced with none costs no walk over the node's pods. */
  handlePodResourcesResize(pod: Pod, otherPods: () => readonly Pod[], node: NodeInfo, fits: FitCheck): Pod {
    const uid = podUID(pod);
    const { pod: allocatedPod, updated } = this.updatePodFromAllocation(pod);
    if (!updated) {
      this.clearCondition(uid, 'pending');
      return pod;
    }
    const verdict = canResizePod(
      pod,
      otherPods().map((p) => this.updatePodFromAllocation(p).pod),
      node,
      fits,
    );
    if (verdict.fit) {
      this.setAllocated(pod);
      this.clearCondition(uid, 'pending');
      // A new resize clears the error of the previous one.
      this.clearCondition(uid, 'inProgress');
      this.setCondition(uid, 'inProgress', { type: PodResizeInProgress, status: 'True' });
      log('kubelet').info({ pod: formatPod(pod) }, 'pod resize allocated');
      return pod;
    }
    this.setCondition(uid, 'pending', {
      type: PodResizePending,
      status: 'True',
      reason: verdict.reason,
      message: verdict.message,
    });
    return allocatedPod;
  }

  /**
   * After a sync: PodResizeInProgress while a running container's actuated resources differ
   * from its allocation (reason Error with the message when the actuation failed), else cleared.
   */
  updateResizeInProgress(allocatedPod: Pod, status: PodRuntimeStatus, resizeError: string | undefined): void {
    const uid = podUID(allocatedPod);
    if (resizeError !== undefined) {
      this.setCondition(uid, 'inProgress', {
        type: PodResizeInProgress,
        status: 'True',
        reason: ReasonError,
        message: resizeError,
      });
      return;
    }
    const inProgress = resizableContainers(allocatedPod).some((c) => {
      const s = status.containerStatuses.find((x) => x.name === c.name);
      if (!s || s.state !== 'running') return false;
      return !sameResources(c.resources, this.getActuated(uid, c.name) ?? c.resources);
    });
    if (inProgress) {
      if (!this.conditions.get(uid)?.inProgress?.reason)
        this.setCondition(uid, 'inProgress', { type: PodResizeInProgress, status: 'True' });
    } else this.clearCondition(uid, 'inProgress');
  }

  /** The pod's resize conditions, for its status. */
  resizeConditions(uid: string): PodCondition[] {
    const c = this.conditions.get(uid);
    return [c?.pending, c?.inProgress].filter((x): x is PodCondition => x !== undefined);
  }

  /** status.containerStatuses[].allocatedResources and .resources (upstream convertContainerStatusResources). */
  containerResources(
    uid: string,
    container: Container,
    running: ContainerRuntimeStatus | undefined,
  ): { allocatedResources?: Record<string, string>; resources?: ResourceRequirements } {
    const alloc = this.getAllocated(uid, container.name) ?? container.resources ?? {};
    const out: { allocatedResources?: Record<string, string>; resources?: ResourceRequirements } = {};
    const requests = alloc.requests as Record<string, string> | undefined;
    if (requests && Object.keys(requests).length > 0) out.allocatedResources = { ...requests };
    if (running?.state === 'running')
      out.resources = actualResources(alloc, running.resources, this.getActuated(uid, container.name));
    return out;
  }

  /** upstream RemoveOrphanedPods: forget the pods that are gone. */
  removeOrphanedPods(keep: ReadonlySet<string>): void {
    for (const store of [this.allocated, this.actuated]) {
      let changed = false;
      for (const uid of [...store.pods.keys()])
        if (!keep.has(uid)) {
          store.pods.delete(uid);
          changed = true;
        }
      if (changed) store.save();
    }
    for (const uid of [...this.conditions.keys()]) if (!keep.has(uid)) this.conditions.delete(uid);
  }

  private setCondition(uid: string, which: keyof ResizeConditions, c: PodCondition): void {
    const all = this.conditions.get(uid) ?? {};
    const old = all[which];
    if (old && old.reason === c.reason && old.message === c.message) return;
    const now = apiTime(new Date(this.opts.now()));
    all[which] = { ...c, lastProbeTime: now, lastTransitionTime: now } as PodCondition;
    this.conditions.set(uid, all);
  }

  private clearCondition(uid: string, which: keyof ResizeConditions): void {
    const all = this.conditions.get(uid);
    if (all) delete all[which];
  }
}

export interface ResizeVerdict {
  fit: boolean;
  reason?: string;
  message?: string;
}

/**
 * upstream canResizePod (with IsInPlacePodVerticalScalingAllowed): Infeasible for a static pod
 * or for more than the node's allocatable; Deferred when the admission check beside the other
 * pods' allocations fails, with its message.
 */
export function canResizePod(pod: Pod, otherPods: readonly Pod[], node: NodeInfo, fits: FitCheck): ResizeVerdict {
  if (isStaticPod(pod))
    return { fit: false, reason: ReasonInfeasible, message: 'In-place resize of static-pods is not supported' };
  const req = podRequests(pod);
  const cpuAvailable = node.allocatable.milliCPU;
  const memAvailable = node.allocatable.memory;
  if (req.memory > memAvailable)
    return {
      fit: false,
      reason: ReasonInfeasible,
      message: `Node didn't have enough capacity: memory, requested: ${req.memory}, capacity: ${memAvailable}`,
    };
  if (req.cpu > cpuAvailable)
    return {
      fit: false,
      reason: ReasonInfeasible,
      message: `Node didn't have enough capacity: cpu, requested: ${req.cpu}, capacity: ${cpuAvailable}`,
    };
  const others = otherPods.filter((p) => podUID(p) !== podUID(pod));
  const r = fits(pod, others);
  if (!r.admit) return { fit: false, reason: ReasonDeferred, message: r.message ?? '' };
  return { fit: true };
}
