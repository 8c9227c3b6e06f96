/**
 * A CSI v1 Node service client (upstream: pkg/volume/csi/csi_client.go's csiDriverClient): the
 * calls the volume manager makes on a registered driver's endpoint, each with a deadline, each
 * failure a CsiError naming the call. Replies come back as small typed objects (int64 as number:
 * byte counts stay far below 2^53).
 */
import type { ServiceDefinition } from '@grpc/proto-loader';
import { CsiError } from '../../errors.js';
import { CSI_NODE_SERVICE, csiServiceDefinition } from './proto.js';
import { UnixGrpcClient } from '../../pluginmanager/index.js';

/** Upstream's csiTimeout: the deadline of a CSI mount, unmount or stats call. */
export const CSI_TIMEOUT_MS = 2 * 60 * 1000;

export type NodeServiceCapability =
  | 'STAGE_UNSTAGE_VOLUME'
  | 'GET_VOLUME_STATS'
  | 'EXPAND_VOLUME'
  | 'VOLUME_CONDITION'
  | 'SINGLE_NODE_MULTI_WRITER'
  | 'VOLUME_MOUNT_GROUP';

export type AccessMode =
  | 'SINGLE_NODE_WRITER'
  | 'SINGLE_NODE_READER_ONLY'
  | 'MULTI_NODE_READER_ONLY'
  | 'MULTI_NODE_SINGLE_WRITER'
  | 'MULTI_NODE_MULTI_WRITER'
  | 'SINGLE_NODE_SINGLE_WRITER'
  | 'SINGLE_NODE_MULTI_WRITER';

/** How the volume is accessed: a filesystem mount (fsType, flags, group) or a raw block device. */
export interface VolumeCapability {
  accessMode: AccessMode;
  block?: boolean;
  fsType?: string;
  mountFlags?: string[];
  volumeMountGroup?: string;
}

export interface NodeInfo {
  nodeId: string;
  /** 0: the driver sets no limit. */
  maxVolumesPerNode: number;
  /** The node's topology segments, undefined when the driver reports none. */
  accessibleTopology: Record<string, string> | undefined;
}

export interface StageRequest {
  volumeId: string;
  stagingTargetPath: string;
  capability: VolumeCapability;
  publishContext?: Record<string, string>;
  volumeContext?: Record<string, string>;
  secrets?: Record<string, string>;
}

export interface PublishRequest extends Omit<StageRequest, 'stagingTargetPath'> {
  targetPath: string;
  /** Empty when the driver has no STAGE_UNSTAGE_VOLUME. */
  stagingTargetPath?: string;
  readonly?: boolean;
}

export interface VolumeStats {
  /** Bytes (unit BYTES) and inodes (unit INODES); absent when the driver did not report that unit. */
  bytes?: { available: number; total: number; used: number };
  inodes?: { available: number; total: number; used: number };
  /** VOLUME_CONDITION: abnormal with the driver's message. */
  condition?: { abnormal: boolean; message: string };
}

export interface ExpandRequest {
  volumeId: string;
  volumePath: string;
  requiredBytes: number;
  stagingTargetPath?: string;
  capability?: VolumeCapability;
  secrets?: Record<string, string>;
}

interface WireUsage {
  available: string;
  total: string;
  used: string;
  unit: string;
}

function wireCapability(c: VolumeCapability): object {
  const access = c.block
    ? { block: {} }
    : { mount: { fsType: c.fsType ?? '', mountFlags: c.mountFlags ?? [], volumeMountGroup: c.volumeMountGroup ?? '' } };
  return { ...access, accessMode: { mode: c.accessMode } };
}

function usage(u: WireUsage): { available: number; total: number; used: number } {
  return { available: Number(u.available), total: Number(u.total), used: Number(u.used) };
}

export class CsiNodeClient {
  private readonly grpc: UnixGrpcClient;
  private readonly service: ServiceDefinition;

  /** `endpoint`: the driver's socket (the endpoint it registered, or its registration socket). */
  constructor(
    readonly endpoint: string,
    private readonly timeoutMs = CSI_TIMEOUT_MS,
  ) {
    this.grpc = new UnixGrpcClient(endpoint);
    this.service = csiServiceDefinition(CSI_NODE_SERVICE);
  }

  private call<T>(name: string, request: object): Promise<T> {
    return this.grpc.unary<T>(this.service, name, request, this.timeoutMs);
  }

  async nodeGetInfo(): Promise<NodeInfo> {
    const r = await this.call<{
      nodeId: string;
      maxVolumesPerNode: string;
      accessibleTopology: { segments: Record<string, string> } | null;
    }>('NodeGetInfo', {});
    if (!r.nodeId) throw new CsiError('KTS_ERR_CSI', 'NodeGetInfo', 'the driver returned an empty node_id');
    const max = Number(r.maxVolumesPerNode);
    if (max < 0) throw new CsiError('KTS_ERR_CSI', 'NodeGetInfo', `max_volumes_per_node is negative (${max})`);
    return { nodeId: r.nodeId, maxVolumesPerNode: max, accessibleTopology: r.accessibleTopology?.segments };
  }

  /** The RPC capabilities the driver's Node service reports (unknown ones dropped). */
  async nodeGetCapabilities(): Promise<Set<NodeServiceCapability>> {
    const r = await this.call<{ capabilities: { rpc?: { type: string } | null }[] }>('NodeGetCapabilities', {});
    const out = new Set<NodeServiceCapability>();
    for (const c of r.capabilities) if (c.rpc && c.rpc.type !== 'UNKNOWN') out.add(c.rpc.type as NodeServiceCapability);
    return out;
  }

  async nodeStageVolume(req: StageRequest): Promise<void> {
    await this.call('NodeStageVolume', {
      volumeId: req.volumeId,
      stagingTargetPath: req.stagingTargetPath,
      volumeCapability: wireCapability(req.capability),
      publishContext: req.publishContext ?? {},
      volumeContext: req.volumeContext ?? {},
      secrets: req.secrets ?? {},
    });
  }

  async nodeUnstageVolume(volumeId: string, stagingTargetPath: string): Promise<void> {
    await this.call('NodeUnstageVolume', { volumeId, stagingTargetPath });
  }

  async nodePublishVolume(req: PublishRequest): Promise<void> {
    await this.call('NodePublishVolume', {
      volumeId: req.volumeId,
      targetPath: req.targetPath,
      stagingTargetPath: req.stagingTargetPath ?? '',
      volumeCapability: wireCapability(req.capability),
      readonly: req.readonly ?? false,
      publishContext: req.publishContext ?? {},
      volumeContext: req.volumeContext ?? {},
      secrets: req.secrets ?? {},
    });
  }

  async nodeUnpublishVolume(volumeId: string, targetPath: string): Promise<void> {
    await this.call('NodeUnpublishVolume', { volumeId, targetPath });
  }

  async nodeGetVolumeStats(volumeId: string, volumePath: string, stagingTargetPath = ''): Promise<VolumeStats> {
    const r = await this.call<{ usage: WireUsage[]; volumeCondition: { abnormal: boolean; message: string } | null }>(
      'NodeGetVolumeStats',
      { volumeId, volumePath, stagingTargetPath },
    );
    const out: VolumeStats = {};
    for (const u of r.usage) {
      if (u.unit === 'BYTES') out.bytes = usage(u);
      else if (u.unit === 'INODES') out.inodes = usage(u);
    }
    if (r.volumeCondition) out.condition = { abnormal: r.volumeCondition.abnormal, message: r.volumeCondition.message };
    return out;
  }

  /** Returns the capacity the driver reports after expansion (0: unknown). */
  async nodeExpandVolume(req: ExpandRequest): Promise<number> {
    const r = await this.call<{ capacityBytes: string }>('NodeExpandVolume', {
      volumeId: req.volumeId,
      volumePath: req.volumePath,
      capacityRange: { requiredBytes: String(req.requiredBytes), limitBytes: '0' },
      stagingTargetPath: req.stagingTargetPath ?? '',
      ...(req.capability ? { volumeCapability: wireCapability(req.capability) } : {}),
      secrets: req.secrets ?? {},
    });
    return Number(r.capacityBytes);
  }

  close(): void {
    this.grpc.close();
  }
}
