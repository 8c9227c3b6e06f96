/**
 * In-place pod resize in the runtime manager (upstream kuberuntime_manager.go
 * computePodResizeAction, doPodResizeAction, updatePodContainerResources): which running
 * containers need new cpu/memory, in which order, and the CRI UpdateContainerResources calls
 * around the pod cgroup update. `pod` is always the allocated pod (the kubelet's allocation
 * manager has put the admitted resources in its spec); "actuated" is what was last given to the
 * runtime for each container, kept by the allocation manager in its checkpoint.
 */
import type { Container, Pod, ResourceRequirements } from '../api/types.js';
import { formatPod, podUID } from '../api/pod.js';
import { podResourceConfig } from '../cm/index.js';
import type { PodContainerManager, ResourceConfig } from '../cm/types.js';
import type { RuntimeService } from '../cri/types.js';
import { runtimeMessage } from '../cri/errors.js';
import { KubeletError } from '../errors.js';
import { log } from '../util/log.js';
import { containerMemory, containerMilliCPU } from '../util/pod-resources.js';
import { linuxContainerResources } from './resources.js';
import type { ContainerRuntimeStatus } from './types.js';

export type ResizeResource = 'cpu' | 'memory';

/** upstream containerResources: milli-CPU and bytes; 0 means unset. */
export interface ContainerResourceValues {
  cpuRequest: number;
  cpuLimit: number;
  memoryRequest: number;
  memoryLimit: number;
}

/** upstream containerToUpdateInfo. */
export interface ContainerToUpdate {
  container: Container;
  containerId: string;
  desired: ContainerResourceValues;
  current: ContainerResourceValues;
}

export type ContainersToUpdate = Record<ResizeResource, ContainerToUpdate[]>;

/** The resources last given to the runtime, per pod and container (allocation manager's checkpoint). */
export interface ActuatedResources {
  getActuated(uid: string, containerName: string): ResourceRequirements | undefined;
  setActuated(uid: string, containerName: string, resources: ResourceRequirements): void;
}

/** upstream computeDesiredResources: a missing cpu request counts as its limit (the apiserver's default). */
export function resourceValues(resources: ResourceRequirements | undefined): ContainerResourceValues {
  const c: Container = { name: '', resources: resources ?? {} };
  const cpuLimit = containerMilliCPU(c, 'limits');
  const memoryLimit = containerMemory(c, 'limits');
  const cpuRequest = containerMilliCPU(c, 'requests') || cpuLimit;
  const memoryRequest = containerMemory(c, 'requests') || memoryLimit;
  return { cpuRequest, cpuLimit, memoryRequest, memoryLimit };
}

/** The container's resize policy for one resource; NotRequired when it names none (upstream's default). */
function restartRequired(container: Container, resource: ResizeResource): boolean {
  const policy = (container.resizePolicy ?? []).find((p) => p.resourceName === resource);
  return policy?.restartPolicy === 'RestartContainer';
}

/** What computePodResizeAction decided for one running container. */
export interface ResizeDecision {
  /** The resize policy asks for a restart: kill and start the container. */
  restart: boolean;
  /** Updates to make in place, by resource (empty when nothing changed). */
  update: Partial<Record<ResizeResource, ContainerToUpdate>>;
}

/**
 * upstream computePodResizeAction for one running container: compare the allocated resources
 * with the actuated ones (none recorded: zero values, so an update is idempotently re-sent) and
 * decide, per resource, an in-place update or a restart.
 */
export function computeContainerResize(
  container: Container,
  status: ContainerRuntimeStatus,
  actuated: ResourceRequirements | undefined,
): ResizeDecision {
  const desired = resourceValues(container.resources);
  const current = resourceValues(actuated);
  const memChanged = desired.memoryLimit !== current.memoryLimit || desired.memoryRequest !== current.memoryRequest;
  const cpuChanged = desired.cpuLimit !== current.cpuLimit || desired.cpuRequest !== current.cpuRequest;
  if ((memChanged && restartRequired(container, 'memory')) || (cpuChanged && restartRequired(container, 'cpu')))
    return { restart: true, update: {} };
  const info = { container, containerId: status.id, desired, current: { ...current } };
  const update: ResizeDecision['update'] = {};
  if (memChanged) update.memory = info;
  if (cpuChanged) update.cpu = info;
  return { restart: false, update };
}

/** Whether the update of this resource shrinks the container (decreases go first, upstream's order). */
export function isDecrease(u: ContainerToUpdate, resource: ResizeResource): boolean {
  if (resource === 'memory')
    return u.desired.memoryLimit !== u.current.memoryLimit
      ? u.desired.memoryLimit < u.current.memoryLimit
      : u.desired.memoryRequest < u.current.memoryRequest;
  return u.desired.cpuLimit !== u.current.cpuLimit
    ? u.desired.cpuLimit < u.current.cpuLimit
    : u.desired.cpuRequest < u.current.cpuRequest;
}

/** Adds an update in upstream's order: a decrease before every increase, increases appended. */
export function addUpdate(list: ContainerToUpdate[], u: ContainerToUpdate, resource: ResizeResource): void {
  if (isDecrease(u, resource)) list.unshift(u);
  else list.push(u);
}

export interface ResizeDeps {
  runtime: RuntimeService;
  podCgroups: PodContainerManager;
  memoryCapacity: number;
  actuated?: ActuatedResources | undefined;
}

/** The pod as it was last actuated: each container's spec resources replaced by its actuated ones. */
function actuatedPod(pod: Pod, actuated: ActuatedResources | undefined): Pod {
  const uid = podUID(pod);
  const withActuated = (c: Container): Container => ({
    ...c,
    resources: actuated?.getActuated(uid, c.name) ?? c.resources,
  });
  return {
    ...pod,
    spec: {
      ...pod.spec!,
      containers: (pod.spec?.containers ?? []).map(withActuated),
      initContainers: (pod.spec?.initContainers ?? []).map(withActuated),
    },
  };
}

/** The container's resources with this resource desired and the other one as last actuated. */
function stepResources(u: ContainerToUpdate, resource: ResizeResource): ContainerResourceValues {
  return resource === 'memory'
    ? { ...u.current, memoryLimit: u.desired.memoryLimit, memoryRequest: u.desired.memoryRequest }
    : { ...u.current, cpuLimit: u.desired.cpuLimit, cpuRequest: u.desired.cpuRequest };
}

function toRequirements(v: ContainerResourceValues): ResourceRequirements {
  const list = (cpu: number, memory: number) => ({
    ...(cpu > 0 ? { cpu: `${cpu}m` } : {}),
    ...(memory > 0 ? { memory: String(memory) } : {}),
  });
  return { requests: list(v.cpuRequest, v.memoryRequest), limits: list(v.cpuLimit, v.memoryLimit) };
}

type List = Record<string, string>;

/**
 * The container's actuated resources once `resource` was applied: that resource as the
 * allocation spells it, the other as it was actuated before.
 */
function actuatedAfter(
  deps: ResizeDeps,
  pod: Pod,
  container: Container,
  resource: ResizeResource,
): ResourceRequirements {
  const before = deps.actuated?.getActuated(podUID(pod), container.name) ?? {};
  const out = { requests: { ...(before.requests as List) }, limits: { ...(before.limits as List) } };
  for (const kind of ['requests', 'limits'] as const) {
    const v = (container.resources?.[kind] as List | undefined)?.[resource];
    if (v === undefined) delete out[kind][resource];
    else out[kind][resource] = v;
  }
  return out;
}

/**
 * upstream updatePodContainerResources: one UpdateContainerResources per container, in order;
 * the first failure stops the rest (later syncs retry). What the runtime accepted is recorded as
 * actuated at once: the runtime's status may lag behind it.
 */
async function updateContainers(deps: ResizeDeps, pod: Pod, resource: ResizeResource, list: ContainerToUpdate[]) {
  for (const u of list) {
    const values = stepResources(u, resource);
    const resources = toRequirements(values);
    const linux = linuxContainerResources(pod, { ...u.container, resources }, deps.memoryCapacity);
    // Unset memory limit: 0 would mean "unchanged" to some runtimes; leave it out as on create.
    try {
      await deps.runtime.updateContainerResources(u.containerId, linux);
    } catch (err) {
      throw new KubeletError(
        'KTS_ERR_CRI_REPLY',
        `failed to update resources of container ${u.container.name} (${resource}): ${runtimeMessage(err)}`,
        { cause: err },
      );
    }
    u.current = values;
    deps.actuated?.setActuated(podUID(pod), u.container.name, actuatedAfter(deps, pod, u.container, resource));
    log('kuberuntime').info(
      { pod: formatPod(pod), container: u.container.name, resource, resources },
      'updated container resources in place',
    );
  }
}

/** The pod cgroup's limit and request values of one resource (quota or bytes; shares or 0). */
function podValues(r: ResourceConfig, resource: ResizeResource): { limit: number; request: number } {
  if (resource === 'memory') return { limit: r.memory ?? 0, request: 0 };
  return { limit: r.cpuQuota ?? -1, request: r.cpuShares ?? 0 };
}

/** Unlimited (0 or negative) compares as the largest value. */
const unlimitedLast = (v: number) => (v <= 0 ? Number.POSITIVE_INFINITY : v);

/**
 * upstream doPodResizeAction's resizeContainers for one resource: a pod cgroup that grows is
 * set before the containers, one that shrinks after them, so the sum of the container limits
 * never exceeds the pod's.
 */
async function resizeResource(deps: ResizeDeps, pod: Pod, resource: ResizeResource, list: ContainerToUpdate[]) {
  const cur = podValues(podResourceConfig(actuatedPod(pod, deps.actuated)), resource);
  const wanted = podResourceConfig(pod);
  const next = podValues(wanted, resource);
  const setPod = async (limit: boolean) => {
    if (!deps.podCgroups.enabled) return;
    if (resource === 'memory' && !limit) return; // memory requests are not written to cgroups
    const r: ResourceConfig =
      resource === 'memory'
        ? { memory: wanted.memory ?? 0 }
        : limit
          ? { cpuQuota: wanted.cpuQuota ?? -1, cpuPeriod: wanted.cpuPeriod }
          : { cpuShares: wanted.cpuShares };
    await deps.podCgroups.setPodCgroupConfig(pod, r);
  };
  if (unlimitedLast(next.limit) > unlimitedLast(cur.limit)) await setPod(true);
  if (next.request > cur.request) await setPod(false);
  await updateContainers(deps, pod, resource, list);
  if (next.request < cur.request) await setPod(false);
  if (unlimitedLast(next.limit) < unlimitedLast(cur.limit)) await setPod(true);
}

/** upstream doPodResizeAction: memory first, then cpu; an error stops it and is the resize's error. */
export async function doPodResizeAction(deps: ResizeDeps, pod: Pod, updates: ContainersToUpdate): Promise<void> {
  for (const resource of ['memory', 'cpu'] as const) {
    if (updates[resource].length === 0) continue;
    await resizeResource(deps, pod, resource, updates[resource]);
  }
}
