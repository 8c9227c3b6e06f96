/**
 * The Node object's content (upstream initialNode + nodestatus setters): labels, taints,
 * capacity/allocatable, addresses, daemon endpoints, nodeInfo, images and conditions.
 * Pure functions of their inputs, so tests can compare shapes without an apiserver.
 */
import { readFileSync } from 'node:fs';
import { release } from 'node:os';
import type { V1NodeAddress, V1NodeStatus } from '@kubernetes/client-node';
import type { RuntimeFeatures, RuntimeHandler } from '../cri/types.js';
import { goArch, thresholdBytes } from '../node/node-info.js';
import { binaryQuantity } from '../node/hugepages.js';
import { fsCapacity } from '../node/allocatable.js';
import { tryParseQuantity } from '../util/quantity.js';
import { isExtendedResourceName } from '../util/resource-names.js';
import type { ApiNode, ContainerImage, NodeCondition, NodeStatusDeps } from './types.js';

/** Upstream caps the images in the node status at 50 (nodeStatusMaxImages). */
const MAX_IMAGES = 50;

function readTrim(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function osImage(): string {
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readTrim('/etc/os-release'));
  return m?.[1] ?? 'Linux';
}

const cpuQuantity = (milli: number) => (milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`);
const bytesQuantity = (b: number) => (b % 1024 === 0 ? `${b / 1024}Ki` : String(b));

/** Counts as DecimalSI quantities. */
const counts = (m: Readonly<Record<string, number>> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [k, String(v)]));

function capacityAndAllocatable(
  deps: Pick<NodeStatusDeps, 'node' | 'rootDir' | 'reserved' | 'extendedResources'>,
): Pick<V1NodeStatus, 'capacity' | 'allocatable'> {
  const extended = deps.extendedResources?.();
  const { node, reserved } = deps;
  const storage = fsCapacity(deps.rootDir);
  const reservedStorage =
    ['systemReserved', 'kubeReserved'].reduce(
      (sum, k) =>
        sum +
        Math.ceil(
          tryParseQuantity(
            (reserved as Record<string, Record<string, string> | undefined> | undefined)?.[k]?.['ephemeral-storage'] ??
              '0',
          ) ?? 0,
        ),
      0,
    ) + thresholdBytes(reserved?.evictionHard?.['nodefs.available'], storage);
  // The host's huge page pools (none listed when the kernel has no hugetlb support).
  const huge = (m: Readonly<Record<string, number>>) =>
    Object.fromEntries(Object.entries(m).map(([k, v]) => [k, binaryQuantity(v)]));
  return {
    capacity: {
      cpu: cpuQuantity(node.capacity.milliCPU),
      memory: bytesQuantity(node.capacity.memory),
      pods: String(node.capacity.pods),
      'ephemeral-storage': bytesQuantity(storage),
      ...huge(node.capacity.hugePages),
      ...counts(extended?.capacity),
    },
    allocatable: {
      cpu: cpuQuantity(node.allocatable.milliCPU),
      memory: bytesQuantity(node.allocatable.memory),
      pods: String(node.allocatable.pods),
      'ephemeral-storage': String(Math.max(0, storage - reservedStorage)),
      ...huge(node.allocatable.hugePages),
      // upstream: allocatable from capacity, then the device plugins' healthy counts over it.
      ...counts(extended?.allocatable),
    },
  };
}

/** Upstream's default pressure conditions while no eviction manager reports. */
export function defaultPressureConditions(): NodeCondition[] {
  return [
    {
      type: 'MemoryPressure',
      status: 'False',
      reason: 'KubeletHasSufficientMemory',
      message: 'kubelet has sufficient memory available',
    },
    {
      type: 'DiskPressure',
      status: 'False',
      reason: 'KubeletHasNoDiskPressure',
      message: 'kubelet has no disk pressure',
    },
    {
      type: 'PIDPressure',
      status: 'False',
      reason: 'KubeletHasSufficientPID',
      message: 'kubelet has sufficient PID available',
    },
  ];
}

function readyCondition(errors: readonly string[]): NodeCondition {
  return errors.length === 0
    ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }
    : { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: aggregateMessage(errors) };
}

/**
 * upstream utilerrors.Aggregate.Error(), which the Ready setter reports: duplicates dropped, one
 * message as is, several as "[a, b]".
 */
export function aggregateMessage(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

/**
 * Conditions with times: lastHeartbeatTime is now; lastTransitionTime is kept from `previous`
 * while the status stays the same (upstream's condition setters).
 */
function stampConditions(
  conds: NodeCondition[],
  previous: readonly NodeCondition[] | undefined,
  now: Date,
): NodeCondition[] {
  return conds.map((c) => {
    const old = previous?.find((p) => p.type === c.type);
    const transition = old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now;
    return { ...c, lastHeartbeatTime: now, lastTransitionTime: transition };
  });
}

function imagesOf(images: ContainerImage[]): ContainerImage[] {
  return [...images].sort((a, b) => (b.sizeBytes ?? 0) - (a.sizeBytes ?? 0)).slice(0, MAX_IMAGES);
}

export interface NodeStatusInput {
  deps: NodeStatusDeps;
  runtimeVersion: string | undefined;
  images: ContainerImage[];
  previous: ApiNode | undefined;
  /** An ApiTime (whole seconds on the wire). */
  now: Date;
}

export function nodeStatus(input: NodeStatusInput): V1NodeStatus {
  const { deps } = input;
  const pressure = deps.pressureConditions?.() ?? defaultPressureConditions();
  const conditions = stampConditions(
    [...pressure, readyCondition(deps.readinessErrors())],
    input.previous?.status?.conditions,
    input.now,
  );
  return {
    ...capacityAndAllocatable(deps),
    conditions,
    addresses: nodeAddresses(deps.nodeIPs, deps.node.name),
    daemonEndpoints: { kubeletEndpoint: { Port: deps.kubeletPort } },
    nodeInfo: {
      machineID: readTrim('/etc/machine-id'),
      systemUUID: readTrim('/sys/class/dmi/id/product_uuid'),
      bootID: readTrim('/proc/sys/kernel/random/boot_id'),
      kernelVersion: release(),
      osImage: osImage(),
      containerRuntimeVersion: input.runtimeVersion ?? input.previous?.status?.nodeInfo?.containerRuntimeVersion ?? '',
      kubeletVersion: deps.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: goArch(),
    },
    images: imagesOf(input.images),
    ...runtimeHandlersStatus(deps.runtimeHandlers?.() ?? []),
    ...featuresStatus(deps.runtimeFeatures?.()),
    ...volumesInUseStatus(deps.volumesInUse?.()),
  };
}

/**
 * upstream VolumesInUse setter: the volume manager's list, sorted (its GetVolumesInUse sorts),
 * once it has synced; before that (undefined) the field is left out of the patch, so the
 * Node keeps what it had and the attach/detach controller detaches nothing still mounted. An
 * empty list is sent as [] so that the last volume released is cleared from the Node.
 */
export function volumesInUseStatus(inUse: readonly string[] | undefined): Pick<V1NodeStatus, 'volumesInUse'> {
  return inUse === undefined ? {} : { volumesInUse: [...new Set(inUse)].sort() };
}

/**
 * upstream NodeAddress without a cloud provider: every node IP as an InternalIP (the primary
 * first, then the other family's), then the Hostname.
 */
export function nodeAddresses(nodeIPs: readonly string[], hostname: string): V1NodeAddress[] {
  return [...nodeIPs.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: hostname }];
}

/** upstream RuntimeHandlers setter: each handler with both features; none reported, no field. */
export function runtimeHandlersStatus(handlers: readonly RuntimeHandler[]): Pick<V1NodeStatus, 'runtimeHandlers'> {
  if (handlers.length === 0) return {};
  return {
    runtimeHandlers: handlers.map((h) => ({
      name: h.name,
      features: {
        recursiveReadOnlyMounts: h.supportsRecursiveReadOnlyMounts,
        userNamespaces: h.supportsUserNamespaces,
      },
    })),
  };
}

/**
 * upstream NodeFeatures setter (SupplementalGroupsPolicy is GA and locked on): unset while the
 * runtime sends no features (containerd 1.x), else what it says.
 */
export function featuresStatus(features: RuntimeFeatures | undefined): Pick<V1NodeStatus, 'features'> {
  return features ? { features: { supplementalGroupsPolicy: features.supplementalGroupsPolicy } } : {};
}

/**
 * NodeStatus.addresses is tagged patchStrategy=merge on `type`, which cannot hold two
 * InternalIPs: like upstream's fixupPatchForNodeStatusAddresses, the patch replaces the list.
 */
export function statusPatch(status: V1NodeStatus, current?: ApiNode): Record<string, unknown> {
  const patch: Record<string, unknown> = {
    status: { ...status, addresses: [...(status.addresses ?? []), { $patch: 'replace' }] },
  };
  // upstream NodeAddress: without a cloud provider a stale provided-node-ip annotation (a node
  // taken over from a kubelet that had one) is removed; status patches may change metadata.
  if (current?.metadata?.annotations?.[PROVIDED_NODE_IP] !== undefined)
    patch.metadata = { annotations: { [PROVIDED_NODE_IP]: null } };
  return patch;
}

/** cloudproviderapi.AnnotationAlphaProvidedIPAddr. */
export const PROVIDED_NODE_IP = 'alpha.kubernetes.io/provided-node-ip';

/**
 * upstream ControllerManagedAttachAnnotation: with enableControllerAttachDetach (the only value
 * accepted here) the attach/detach controller attaches and detaches this node's volumes, and the
 * kubelet waits for them in status.volumesAttached.
 */
export const CONTROLLER_MANAGED_ATTACH_DETACH = 'volumes.kubernetes.io/controller-managed-attach-detach';

/** The Node to register: labels, taints and the first status (upstream initialNode). */
export function initialNode(input: NodeStatusInput): ApiNode {
  const { deps } = input;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: deps.node.name,
      labels: { ...deps.node.labels },
      annotations: { [CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' },
    },
    spec: deps.taints.length > 0 ? { taints: deps.taints } : {},
    status: nodeStatus(input),
  };
}

/**
 * upstream reconcileExtendedResource: on a recreated node (no device checkpoint) every extended
 * resource of the existing Node is set to 0 until its plugin reports again; undefined: no change.
 */
export function zeroedExtendedResources(existing: ApiNode): Pick<V1NodeStatus, 'capacity' | 'allocatable'> | undefined {
  const names = Object.keys(existing.status?.capacity ?? {}).filter(isExtendedResourceName);
  if (names.length === 0) return undefined;
  const zero = Object.fromEntries(names.map((n) => [n, '0']));
  return { capacity: zero, allocatable: { ...zero } };
}

/** Status without heartbeat times: what "changed" means for nodeStatusReportFrequency. */
export function statusFingerprint(s: V1NodeStatus | undefined): string {
  if (!s) return '';
  const conditions = (s.conditions ?? []).map((c) => ({ ...c, lastHeartbeatTime: undefined }));
  return JSON.stringify({ ...s, conditions });
}

/** --register-with-taints: key[=value]:Effect, comma separated. */
export function parseTaints(raw: string): {
  taints: { key: string; value?: string; effect: string }[];
  problems: string[];
} {
  const taints: { key: string; value?: string; effect: string }[] = [];
  const problems: string[] = [];
  for (const part of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9][-A-Za-z0-9_./]*)(?:=([-A-Za-z0-9_.]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(
      part,
    );
    if (!m)
      problems.push(
        `--register-with-taints: "${part}" must look like key[=value]:NoSchedule|PreferNoSchedule|NoExecute`,
      );
    else taints.push({ key: m[1]!, ...(m[2] !== undefined ? { value: m[2] } : {}), effect: m[3]! });
  }
  return { taints, problems };
}
