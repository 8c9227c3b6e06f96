/**
 * What admission knows of this node (upstream: the Node object from getNodeAnyWay plus
 * NodeInfo's allocatable): its name, labels, capacity and allocatable.
 *
 * Allocatable is what the node status reports (upstream GetNodeAllocatableReservation subtracted
 * from the capacity, allocatable.ts): capacity minus systemReserved, minus kubeReserved, minus the
 * hard eviction threshold (memory.available for memory, as a quantity or a percentage of
 * capacity), never below zero. Huge pages are the host's pools (hugepages.ts).
 */
import { arch, cpus, totalmem } from 'node:os';
import { allocatableForScheduling, resourceList, thresholdQuantity } from './allocatable.js';
import { hostHugePages, hugePageResourceName, type HostHugePages } from './hugepages.js';

/** Resource amounts in base units: milli-CPU, memory bytes, pods, hugepages-<size> bytes. */
export interface NodeResources {
  milliCPU: number;
  memory: number;
  pods: number;
  /** hugepages-<size> → bytes, one entry per page size of the host (0 when no pages are set aside). */
  hugePages: Readonly<Record<string, number>>;
}

export interface NodeInfo {
  name: string;
  labels: Readonly<Record<string, string>>;
  capacity: NodeResources;
  allocatable: NodeResources;
  /** upstream node.status.features: what the runtime's CRI Status reported; absent: nothing. */
  features?: { supplementalGroupsPolicy?: boolean };
}

export interface NodeInfoConfig {
  nodeName: string;
  maxPods: number;
  systemReserved?: Readonly<Record<string, string>>;
  kubeReserved?: Readonly<Record<string, string>>;
  evictionHard?: Readonly<Record<string, string>>;
  /** --node-labels. */
  nodeLabels?: Readonly<Record<string, string>>;
  /** Default: os.cpus().length * 1000 and os.totalmem() (cAdvisor's MachineInfo). */
  capacity?: { milliCPU: number; memory: number };
  /** Default: the host's pools under /sys/kernel/mm/hugepages. */
  hugePages?: readonly HostHugePages[];
}

/** Node's GOARCH as upstream labels it (Node's process.arch names differ). */
export function goArch(nodeArch: string = arch()): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    ia32: '386',
    arm64: 'arm64',
    arm: 'arm',
    ppc64: 'ppc64le',
    s390x: 's390x',
    riscv64: 'riscv64',
    loong64: 'loong64',
    mips: 'mips',
    mipsel: 'mipsle',
  };
  return map[nodeArch] ?? nodeArch;
}

/**
 * Upstream's initial node labels (kubelet_node_status.go initialNode): hostname, os and arch in
 * their stable and beta forms; --node-labels are applied over them.
 */
function nodeLabels(nodeName: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': goArch(),
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': goArch(),
    ...extra,
  };
}

/** A threshold ("100Mi" or "10%") in bytes of `capacity`; 0 when absent. */
export function thresholdBytes(threshold: string | undefined, capacity: number): number {
  return threshold === undefined ? 0 : thresholdQuantity(threshold, capacity);
}

function hugePagesCapacity(pools: readonly HostHugePages[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of pools) out[hugePageResourceName(p.pageSize)] = p.pageSize * p.pages;
  return out;
}

export function computeNodeInfo(cfg: NodeInfoConfig): NodeInfo {
  const capacity: NodeResources = {
    milliCPU: cfg.capacity?.milliCPU ?? Math.max(1, cpus().length) * 1000,
    memory: cfg.capacity?.memory ?? totalmem(),
    pods: cfg.maxPods,
    hugePages: hugePagesCapacity(cfg.hugePages ?? hostHugePages()),
  };
  const alloc = allocatableForScheduling({
    capacity: { cpu: capacity.milliCPU, memory: capacity.memory, ...capacity.hugePages },
    systemReserved: resourceList(cfg.systemReserved),
    kubeReserved: resourceList(cfg.kubeReserved),
    evictionHard: cfg.evictionHard,
  });
  const hugePages = Object.fromEntries(Object.keys(capacity.hugePages).map((k) => [k, alloc[k] ?? 0]));
  return {
    name: cfg.nodeName,
    labels: Object.freeze(nodeLabels(cfg.nodeName, cfg.nodeLabels)),
    capacity,
    allocatable: { milliCPU: alloc.cpu ?? 0, memory: alloc.memory ?? 0, pods: capacity.pods, hugePages },
  };
}
