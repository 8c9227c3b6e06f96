/**
 * A running container's actual resources for status.containerStatuses[].resources (upstream
 * convertContainerStatusResources): cpu and memory limits and the cpu request from what the
 * runtime reports it applied (CRI ContainerStatus.resources: quota/period, memory limit, shares)
 * when it reports them, else from what the agent last applied (actuated), else the allocation;
 * the memory request is the allocation's (cgroups do not hold it). Values that the runtime's
 * numbers round-trip to are shown as the allocation spells them.
 */
import type { ResourceRequirements } from '../api/types.js';
import { milliCPUToQuota, milliCPUToShares, QUOTA_PERIOD, SHARES_PER_CPU } from '../cm/index.js';
import type { LinuxContainerResources } from '../cri/types.js';
import { tryParseQuantity } from '../util/quantity.js';

type List = Record<string, string>;

/** A milli-CPU amount as the API prints it (DecimalSI): whole cores without a suffix. */
export function formatMilliCPU(m: number): string {
  return m % 1000 === 0 ? String(m / 1000) : `${m}m`;
}

/** Bytes as the API prints them (BinarySI): the largest binary suffix that divides them. */
export function formatBytes(b: number): string {
  const units = ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'];
  for (const [i, u] of units.entries()) {
    const f = 1024 ** (units.length - i);
    if (b >= f && b % f === 0) return `${b / f}${u}`;
  }
  return String(b);
}

function milli(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  const v = tryParseQuantity(q);
  return v === undefined ? undefined : Math.round(v * 1000);
}

/** upstream sharesToMilliCPU. */
function sharesToMilliCPU(shares: number): number {
  return shares >= 2 ? Math.ceil((shares * 1000) / SHARES_PER_CPU) : 0;
}

/** upstream quotaToMilliCPU. */
function quotaToMilliCPU(quota: number, period: number): number {
  return quota <= 0 ? 0 : Math.floor((quota * 1000) / (period || QUOTA_PERIOD));
}

function cpuLimit(alloc: List | undefined, cri: LinuxContainerResources | undefined): string | undefined {
  const quota = cri?.cpuQuota;
  if (quota === undefined || quota <= 0) return alloc?.cpu;
  const a = milli(alloc?.cpu);
  const period = cri?.cpuPeriod || QUOTA_PERIOD;
  if (a !== undefined && milliCPUToQuota(a, period) === quota) return alloc!.cpu;
  return formatMilliCPU(quotaToMilliCPU(quota, period));
}

function cpuRequest(alloc: List | undefined, cri: LinuxContainerResources | undefined): string | undefined {
  const shares = cri?.cpuShares;
  if (shares === undefined || shares === 0) return alloc?.cpu;
  const a = milli(alloc?.cpu);
  if (a !== undefined && milliCPUToShares(a) === shares) return alloc!.cpu;
  return formatMilliCPU(sharesToMilliCPU(shares));
}

function memoryLimit(alloc: List | undefined, cri: LinuxContainerResources | undefined): string | undefined {
  const bytes = cri?.memoryLimitInBytes;
  if (bytes === undefined || bytes <= 0) return alloc?.memory;
  const a = alloc?.memory !== undefined ? tryParseQuantity(alloc.memory) : undefined;
  return a === bytes ? alloc!.memory : formatBytes(bytes);
}

function setIf(list: List, key: string, v: string | undefined): void {
  if (v !== undefined) list[key] = v;
}

/**
 * The actual resources of a running container. `allocated` is its allocation; `actuated` what the
 * agent last applied (used when the runtime reports nothing).
 */
export function actualResources(
  allocated: ResourceRequirements,
  cri: LinuxContainerResources | undefined,
  actuated: ResourceRequirements | undefined,
): ResourceRequirements {
  const base = (actuated ?? allocated) as { requests?: List; limits?: List };
  const allocLimits = allocated.limits as List | undefined;
  const allocRequests = allocated.requests as List | undefined;
  const out: ResourceRequirements = {};
  if (allocLimits && Object.keys(allocLimits).length > 0) {
    const limits: List = { ...allocLimits };
    setIf(limits, 'cpu', cri ? cpuLimit(base.limits, cri) : base.limits?.cpu);
    setIf(limits, 'memory', cri ? memoryLimit(base.limits, cri) : base.limits?.memory);
    if (!base.limits?.cpu && !(cri?.cpuQuota && cri.cpuQuota > 0)) delete limits.cpu;
    if (!base.limits?.memory && !(cri?.memoryLimitInBytes && cri.memoryLimitInBytes > 0)) delete limits.memory;
    out.limits = limits;
  }
  if (allocRequests && Object.keys(allocRequests).length > 0) {
    const requests: List = { ...allocRequests };
    setIf(requests, 'cpu', cri ? cpuRequest(base.requests, cri) : base.requests?.cpu);
    out.requests = requests;
  }
  return out;
}
