/**
 * Conversions between the proto-loader objects (camelCase, int64 as protobufjs Long values from
 * the agent's client and as decimal strings from LOADER_OPTIONS, enums as
 * names, every field present) and the types in ./types.ts (int64 as bigint). Requests mostly
 * share the proto's field names already; `toWire` only turns bigints into strings, because the
 * protobuf encoder does not take bigint.
 */
import type {
  Container,
  ContainerEvent,
  ContainerEventType,
  ContainerMetadata,
  ContainerState,
  ContainerStats,
  ContainerStatus,
  CpuUsage,
  FilesystemUsage,
  Image,
  Labels,
  LinuxContainerResources,
  LinuxContainerUser,
  MemoryUsage,
  Mount,
  NamespaceMode,
  PodSandbox,
  PodSandboxMetadata,
  PodSandboxState,
  PodSandboxStatus,
  RuntimeStatus,
  VersionResponse,
} from './types.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- proto-loader's messages are untyped; Wire is where they enter
type Wire = any;

/** int64/uint64 as proto-loader gives it (string with longs: String; number or Long otherwise). */
export function toBigInt(v: unknown): bigint {
  if (v === null || v === undefined || v === '') return 0n;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string') return BigInt(v);
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  if (typeof v === 'object' && v !== null && 'low' in v && 'high' in v) {
    const l = v as { low: number; high: number; unsigned?: boolean };
    const big = (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0);
    return l.unsigned ? big : BigInt.asIntN(64, big);
  }
  return BigInt(String(v));
}

/** A UInt64Value/Int64Value wrapper: undefined when the runtime left it unset. */
export function wrappedBigInt(v: { value?: unknown } | null | undefined): bigint | undefined {
  return v ? toBigInt(v.value) : undefined;
}

/** int64 that the API keeps as a JS number (resources): exact up to 2^53. */
function toNumber(v: unknown): number {
  return Number(toBigInt(v));
}

/** Deep copy of a request with every bigint turned into its decimal string. */
export function toWire<T>(v: T): T {
  if (typeof v === 'bigint') return v.toString() as unknown as T;
  if (Array.isArray(v)) return v.map((x) => toWire(x)) as unknown as T;
  if (v && typeof v === 'object' && !Buffer.isBuffer(v) && !(v instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = toWire(x);
    return out as T;
  }
  return v;
}

function labels(v: unknown): Labels {
  return v && typeof v === 'object' ? { ...(v as Labels) } : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** An enum as its name. proto-loader gives names; a number means a value newer than our .proto. */
function enumName<T extends string>(v: unknown, names: readonly T[], fallback: T): T {
  if (typeof v === 'string' && (names as readonly string[]).includes(v)) return v as T;
  if (typeof v === 'number' && names[v] !== undefined) return names[v]!;
  return fallback;
}

const NAMESPACE_MODES = ['POD', 'CONTAINER', 'NODE', 'TARGET'] as const;
const SANDBOX_STATES = ['SANDBOX_READY', 'SANDBOX_NOTREADY'] as const;
const CONTAINER_STATES = ['CONTAINER_CREATED', 'CONTAINER_RUNNING', 'CONTAINER_EXITED', 'CONTAINER_UNKNOWN'] as const;
const EVENT_TYPES = [
  'CONTAINER_CREATED_EVENT',
  'CONTAINER_STARTED_EVENT',
  'CONTAINER_STOPPED_EVENT',
  'CONTAINER_DELETED_EVENT',
] as const;

export function namespaceMode(v: unknown): NamespaceMode {
  return enumName(v, NAMESPACE_MODES, 'POD');
}
export function sandboxState(v: unknown): PodSandboxState {
  // Unknown values are treated as not ready: never report a sandbox ready by accident.
  return enumName(v, SANDBOX_STATES, 'SANDBOX_NOTREADY');
}
export function containerState(v: unknown): ContainerState {
  return enumName(v, CONTAINER_STATES, 'CONTAINER_UNKNOWN');
}

export function versionFromWire(w: Wire): VersionResponse {
  return {
    version: str(w?.version),
    runtimeName: str(w?.runtimeName),
    runtimeVersion: str(w?.runtimeVersion),
    runtimeApiVersion: str(w?.runtimeApiVersion),
  };
}

/**
 * upstream toKubeRuntimeStatus: `status` is StatusResponse.status; handlers and features come
 * from the response itself. A handler without features supports none of them.
 */
export function runtimeStatusFromWire(w: Wire, response?: Wire): RuntimeStatus {
  const features: Wire = response?.features;
  return {
    conditions: (w?.conditions ?? []).map((c: Wire) => ({
      type: str(c?.type),
      status: c?.status === true,
      reason: str(c?.reason),
      message: str(c?.message),
    })),
    handlers: (response?.runtimeHandlers ?? []).map((h: Wire) => ({
      name: str(h?.name),
      supportsRecursiveReadOnlyMounts: h?.features?.recursiveReadOnlyMounts === true,
      supportsUserNamespaces: h?.features?.userNamespaces === true,
    })),
    ...(features ? { features: { supplementalGroupsPolicy: features.supplementalGroupsPolicy === true } } : {}),
  };
}

function sandboxMetadataFromWire(w: Wire): PodSandboxMetadata {
  return { name: str(w?.name), uid: str(w?.uid), namespace: str(w?.namespace), attempt: Number(w?.attempt ?? 0) };
}

function containerMetadataFromWire(w: Wire): ContainerMetadata {
  return { name: str(w?.name), attempt: Number(w?.attempt ?? 0) };
}

export function podSandboxFromWire(w: Wire): PodSandbox {
  return {
    id: str(w?.id),
    metadata: sandboxMetadataFromWire(w?.metadata),
    state: sandboxState(w?.state),
    createdAt: toBigInt(w?.createdAt),
    labels: labels(w?.labels),
    annotations: labels(w?.annotations),
    runtimeHandler: str(w?.runtimeHandler),
  };
}

export function podSandboxStatusFromWire(w: Wire): PodSandboxStatus {
  const out: PodSandboxStatus = {
    id: str(w?.id),
    metadata: sandboxMetadataFromWire(w?.metadata),
    state: sandboxState(w?.state),
    createdAt: toBigInt(w?.createdAt),
    network: {
      ip: str(w?.network?.ip),
      additionalIps: (w?.network?.additionalIps ?? []).map((p: Wire) => str(p?.ip)).filter((ip: string) => ip !== ''),
    },
    networkNamespaceMode: namespaceMode(w?.linux?.namespaces?.options?.network),
    labels: labels(w?.labels),
    annotations: labels(w?.annotations),
  };
  if (w?.runtimeHandler) out.runtimeHandler = str(w.runtimeHandler);
  return out;
}

export function containerFromWire(w: Wire): Container {
  const out: Container = {
    id: str(w?.id),
    podSandboxId: str(w?.podSandboxId),
    metadata: containerMetadataFromWire(w?.metadata),
    image: str(w?.image?.image),
    imageRef: str(w?.imageRef),
    state: containerState(w?.state),
    createdAt: toBigInt(w?.createdAt),
    labels: labels(w?.labels),
    annotations: labels(w?.annotations),
  };
  if (w?.imageId) out.imageId = str(w.imageId);
  return out;
}

function resourcesFromWire(w: Wire): LinuxContainerResources | undefined {
  if (!w) return undefined;
  return {
    cpuPeriod: toNumber(w.cpuPeriod),
    cpuQuota: toNumber(w.cpuQuota),
    cpuShares: toNumber(w.cpuShares),
    memoryLimitInBytes: toNumber(w.memoryLimitInBytes),
    oomScoreAdj: toNumber(w.oomScoreAdj),
  };
}

export function containerStatusFromWire(w: Wire): ContainerStatus {
  const out: ContainerStatus = {
    id: str(w?.id),
    metadata: containerMetadataFromWire(w?.metadata),
    state: containerState(w?.state),
    createdAt: toBigInt(w?.createdAt),
    startedAt: toBigInt(w?.startedAt),
    finishedAt: toBigInt(w?.finishedAt),
    exitCode: Number(w?.exitCode ?? 0),
    image: str(w?.image?.image),
    imageRef: str(w?.imageRef),
    reason: str(w?.reason),
    message: str(w?.message),
    labels: labels(w?.labels),
    annotations: labels(w?.annotations),
    logPath: str(w?.logPath),
  };
  if (w?.imageId) out.imageId = str(w.imageId);
  const r = resourcesFromWire(w?.resources?.linux);
  if (r) out.resources = r;
  if (Array.isArray(w?.mounts) && w.mounts.length > 0) out.mounts = w.mounts.map(mountFromWire);
  if (w?.user) out.user = containerUserFromWire(w.user);
  return out;
}

/** CRI ContainerUser (absent from runtimes before the field, e.g. containerd 1.6/1.7). */
function containerUserFromWire(w: Wire): { linux?: LinuxContainerUser } {
  const linux = w?.linux;
  if (!linux) return {};
  return {
    linux: {
      uid: toNumber(linux.uid),
      gid: toNumber(linux.gid),
      supplementalGroups: (linux.supplementalGroups ?? []).map(toNumber),
    },
  };
}

function mountFromWire(w: Wire): Mount {
  return { containerPath: str(w?.containerPath), hostPath: str(w?.hostPath), readonly: w?.readonly === true };
}

export function imageFromWire(w: Wire): Image {
  const out: Image = {
    id: str(w?.id),
    repoTags: [...(w?.repoTags ?? [])],
    repoDigests: [...(w?.repoDigests ?? [])],
    size: toBigInt(w?.size),
    pinned: w?.pinned === true,
  };
  const uid = wrappedBigInt(w?.uid);
  if (uid !== undefined) out.uid = uid;
  if (w?.username) out.username = str(w.username);
  return out;
}

export function filesystemUsageFromWire(w: Wire): FilesystemUsage {
  return {
    timestamp: toBigInt(w?.timestamp),
    mountpoint: str(w?.fsId?.mountpoint),
    usedBytes: wrappedBigInt(w?.usedBytes) ?? 0n,
    inodesUsed: wrappedBigInt(w?.inodesUsed) ?? 0n,
  };
}

function defined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

function cpuFromWire(w: Wire): CpuUsage | undefined {
  if (!w) return undefined;
  return defined({
    timestamp: toBigInt(w.timestamp),
    usageCoreNanoSeconds: wrappedBigInt(w.usageCoreNanoSeconds),
    usageNanoCores: wrappedBigInt(w.usageNanoCores),
  });
}

function memoryFromWire(w: Wire): MemoryUsage | undefined {
  if (!w) return undefined;
  return defined({
    timestamp: toBigInt(w.timestamp),
    workingSetBytes: wrappedBigInt(w.workingSetBytes),
    availableBytes: wrappedBigInt(w.availableBytes),
    usageBytes: wrappedBigInt(w.usageBytes),
    rssBytes: wrappedBigInt(w.rssBytes),
    pageFaults: wrappedBigInt(w.pageFaults),
    majorPageFaults: wrappedBigInt(w.majorPageFaults),
  });
}

export function containerStatsFromWire(w: Wire): ContainerStats {
  return defined({
    id: str(w?.attributes?.id),
    metadata: containerMetadataFromWire(w?.attributes?.metadata),
    labels: labels(w?.attributes?.labels),
    annotations: labels(w?.attributes?.annotations),
    cpu: cpuFromWire(w?.cpu),
    memory: memoryFromWire(w?.memory),
    writableLayer: w?.writableLayer ? filesystemUsageFromWire(w.writableLayer) : undefined,
  });
}

export function containerEventFromWire(w: Wire): ContainerEvent {
  return defined({
    containerId: str(w?.containerId),
    type: enumName<ContainerEventType>(w?.containerEventType, EVENT_TYPES, 'CONTAINER_CREATED_EVENT'),
    createdAt: toBigInt(w?.createdAt),
    podSandboxStatus: w?.podSandboxStatus ? podSandboxStatusFromWire(w.podSandboxStatus) : undefined,
    containersStatuses: (w?.containersStatuses ?? []).map(containerStatusFromWire),
  });
}
