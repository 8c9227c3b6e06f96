/**
 * What admission knows of this node (upstream: the Node object from getNodeAnyWay plus
 * NodeInfo's allocatable): its name, labels, capacity and allocatable.
 *
 * Allocatable is upstream's GetNodeAllocatableAbsolute: capacity minus systemReserved, minus
 * kubeReserved, minus the hard eviction threshold (memory.available for memory, as a quantity or
 * a percentage of capacity), never below zero.
 */
import { arch, cpus, totalmem } from 'node:os';
import { tryParseQuantity } from '../util/quantity.js';

/** Resource amounts in base units: milli-CPU, memory bytes, pods. */
export interface NodeResources {
  milliCPU: number;
  memory: number;
  pods: number;
}

export interface NodeInfo {
  name: string;
  labels: Readonly<Record<string, string>>;
  capacity: NodeResources;
  allocatable: NodeResources;
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

function quantityOf(map: Readonly<Record<string, string>> | undefined, name: string, milli: boolean): number {
  const raw = map?.[name];
  if (raw === undefined) return 0;
  const v = tryParseQuantity(raw) ?? 0;
  return milli ? Math.ceil(v * 1000) : Math.ceil(v);
}

/** A threshold ("100Mi" or "10%") in bytes of `capacity`; 0 when absent. */
export function thresholdBytes(threshold: string | undefined, capacity: number): number {
  if (threshold === undefined) return 0;
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(threshold);
  if (pct) return Math.ceil((Number(pct[1]) / 100) * capacity);
  return Math.ceil(tryParseQuantity(threshold) ?? 0);
}

export function computeNodeInfo(cfg: NodeInfoConfig): NodeInfo {
  const capacity: NodeResources = {
    milliCPU: cfg.capacity?.milliCPU ?? Math.max(1, cpus().length) * 1000,
    memory: cfg.capacity?.memory ?? totalmem(),
    pods: cfg.maxPods,
  };
  const reservedCPU = quantityOf(cfg.systemReserved, 'cpu', true) + quantityOf(cfg.kubeReserved, 'cpu', true);
  const reservedMemory =
    quantityOf(cfg.systemReserved, 'memory', false) +
    quantityOf(cfg.kubeReserved, 'memory', false) +
    thresholdBytes(cfg.evictionHard?.['memory.available'], capacity.memory);
  return {
    name: cfg.nodeName,
    labels: Object.freeze(nodeLabels(cfg.nodeName, cfg.nodeLabels)),
    capacity,
    allocatable: {
      milliCPU: Math.max(0, capacity.milliCPU - reservedCPU),
      memory: Math.max(0, capacity.memory - reservedMemory),
      pods: capacity.pods,
    },
  };
}
