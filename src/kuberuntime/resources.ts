/**
 * Container requests/limits → CRI LinuxContainerResources, and the QoS-based OOM score, as
 * upstream computes them (kuberuntime_container_linux.go calculateLinuxResources,
 * qos.GetContainerOOMScoreAdjust). The cgroup arithmetic (shares, quota) lives in the container
 * manager (src/cm), which the pod cgroups share; quantities and the QoS class in
 * util/pod-resources.ts.
 */
import type { Container, Pod } from '../api/types.js';
import { milliCPUToQuota, milliCPUToShares, QUOTA_PERIOD } from '../cm/index.js';
import type { HugepageLimit, LinuxContainerResources } from '../cri/types.js';
import {
  containerHugePages,
  hostHugePageSizes,
  hugePageSizeFromResourceName,
  hugePageSizeName,
} from '../node/hugepages.js';
import { tryParseQuantity } from '../util/quantity.js';
import { isMirrorPod, isRestartableInitContainer, isStaticPod } from '../api/pod.js';
import { containerMemory, containerMilliCPU, podQOSClass } from '../util/pod-resources.js';

export {
  MIN_SHARES,
  MAX_SHARES,
  SHARES_PER_CPU,
  MILLI_CPU_TO_CPU,
  QUOTA_PERIOD,
  MIN_QUOTA_PERIOD,
  milliCPUToShares,
  milliCPUToQuota,
} from '../cm/index.js';

const GUARANTEED_OOM_SCORE_ADJ = -997;
const BESTEFFORT_OOM_SCORE_ADJ = 1000;
/** upstream schedulerutil.DefaultMemoryRequest: what a container without a memory request counts as. */
const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;
const SYSTEM_NODE_CRITICAL = 'system-node-critical';
/** upstream scheduling.SystemCriticalPriority. */
const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/**
 * upstream calculateLinuxResources with cpuCFSQuota on: shares from the cpu request (the limit
 * when there is no request, as the apiserver would have defaulted), quota from the cpu limit over
 * a 100 ms period, the memory limit in bytes when set, and the OOM score for the pod's QoS.
 */
export function linuxContainerResources(
  pod: Pod,
  container: Container,
  memoryCapacity: number,
): LinuxContainerResources {
  const cpuRequest = containerMilliCPU(container, 'requests');
  const cpuLimit = containerMilliCPU(container, 'limits');
  const memoryLimit = containerMemory(container, 'limits');
  const r: LinuxContainerResources = {
    cpuShares: milliCPUToShares(cpuRequest === 0 && cpuLimit !== 0 ? cpuLimit : cpuRequest),
    cpuPeriod: QUOTA_PERIOD,
    cpuQuota: milliCPUToQuota(cpuLimit, QUOTA_PERIOD),
    oomScoreAdj: containerOOMScoreAdjust(pod, container, memoryCapacity),
  };
  if (memoryLimit !== 0) r.memoryLimitInBytes = memoryLimit;
  r.hugepageLimits = containerHugepageLimits(pod, container);
  return r;
}

/**
 * upstream GetHugepageLimitsFromResources: every page size of the host, 0 unless the container
 * (or, when it names none of that size, the pod level spec.resources) asks for it.
 */
export function containerHugepageLimits(
  pod: Pod,
  container: Container,
  pageSizes: readonly number[] = hostHugePageSizes(),
): HugepageLimit[] {
  const wanted = new Map<number, number>();
  const podLevel = pod.spec?.resources?.limits as Record<string, string> | undefined;
  for (const [name, raw] of Object.entries(podLevel ?? {})) {
    const size = hugePageSizeFromResourceName(name);
    if (size !== undefined) wanted.set(size, Math.ceil(tryParseQuantity(raw) ?? 0));
  }
  for (const [name, bytes] of Object.entries(containerHugePages(container))) {
    const size = hugePageSizeFromResourceName(name);
    if (size !== undefined) wanted.set(size, bytes);
  }
  return pageSizes.map((size) => ({ pageSize: hugePageSizeName(size), limit: wanted.get(size) ?? 0 }));
}

/** upstream types.IsNodeCriticalPod: a critical pod (static, mirror or system priority) of class system-node-critical. */
function isNodeCriticalPod(pod: Pod): boolean {
  const staticOrMirror = isStaticPod(pod) || isMirrorPod(pod);
  const critical = staticOrMirror || (pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
  return critical && pod.spec?.priorityClassName === SYSTEM_NODE_CRITICAL;
}

function memoryRequestOrDefault(c: Container): number {
  const req = containerMemory(c, 'requests');
  return req > 0 ? req : DEFAULT_MEMORY_REQUEST;
}

/**
 * upstream qos.GetContainerOOMScoreAdjust: node-critical and Guaranteed -997, BestEffort 1000,
 * Burstable 1000 - 1000*memoryRequest/capacity clamped to [3, 999] so it stays between the two.
 * A sidecar scores from the smaller of its request and the smallest regular container's (a
 * missing request counting as 200 MiB), plus one when its own request is not the larger, so that
 * it is killed before the containers it serves.
 */
export function containerOOMScoreAdjust(pod: Pod, container: Container, memoryCapacity: number): number {
  if (isNodeCriticalPod(pod)) return GUARANTEED_OOM_SCORE_ADJ;
  const qos = podQOSClass(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BESTEFFORT_OOM_SCORE_ADJ;
  const score = (request: number) => (memoryCapacity > 0 ? 1000 - Math.trunc((1000 * request) / memoryCapacity) : 1000);
  let adj = score(containerMemory(container, 'requests'));
  const isSidecar =
    (pod.spec?.initContainers ?? []).some((c) => c.name === container.name) && isRestartableInitContainer(container);
  if (isSidecar) {
    const regular = (pod.spec?.containers ?? []).map(memoryRequestOrDefault);
    const own = memoryRequestOrDefault(container);
    const min = Math.min(own, ...regular);
    adj = score(min);
    if (min <= containerMemory(container, 'requests')) adj += 1;
  }
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}
