/**
 * The CSI node info manager (upstream: pkg/volume/csi/nodeinfomanager): what a registered CSI
 * driver tells the cluster about this node. Installing a driver writes its node ID into the Node's
 * `csi.volume.kubernetes.io/nodeid` annotation (a JSON map driver → node ID), its topology
 * segments into the Node's labels, and a driver entry into the storage.k8s.io/v1 CSINode object
 * named after the node (owned by the Node, so it goes with it); the scheduler and the
 * external-provisioner read them. Uninstalling removes the entry and the annotation key (the
 * topology labels stay, as upstream). Every read-modify-write is retried on 409 Conflict.
 */
import { ApiError, PluginRegistrationError } from '../../errors.js';
import type { ApiClient } from '../../apiclient/index.js';
import type { NodeInfo } from './node-client.js';

export const NODE_ID_ANNOTATION = 'csi.volume.kubernetes.io/nodeid';
/** v1.MigratedPluginsAnnotationKey: the in-tree plugins whose volumes this node mounts through CSI. */
export const MIGRATED_PLUGINS_ANNOTATION = 'storage.alpha.kubernetes.io/migrated-plugins';
/**
 * upstream csi_plugin.go's migratedPlugins, every one migrated in 1.35 (Portworx's gate is GA). We
 * serve none of these in-tree plugins, so their PVs are the CSI driver's to mount, as upstream.
 */
export const MIGRATED_PLUGINS = [
  'kubernetes.io/aws-ebs',
  'kubernetes.io/azure-disk',
  'kubernetes.io/azure-file',
  'kubernetes.io/cinder',
  'kubernetes.io/gce-pd',
  'kubernetes.io/portworx-volume',
  'kubernetes.io/vsphere-volume',
].join(',');
const CSINODES = '/apis/storage.k8s.io/v1/csinodes';
const MAX_INT32 = 2 ** 31 - 1;

export interface CsiNodeDriver {
  name: string;
  nodeID: string;
  topologyKeys: string[];
  allocatable?: { count: number };
}

export interface CsiNodeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    resourceVersion?: string;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
    annotations?: Record<string, string>;
  };
  spec: { drivers: CsiNodeDriver[] | null };
}

interface NodeMeta {
  metadata?: {
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

/** Upstream's updateBackoff: 4 tries, 10 ms growing 5× (retry.RetryOnConflict). */
export interface ConflictRetry {
  steps: number;
  firstDelayMs: number;
}
const DEFAULT_RETRY: ConflictRetry = { steps: 4, firstDelayMs: 10 };

const isStatus = (err: unknown, code: number) => err instanceof ApiError && err.statusCode === code;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` again while it fails with 409 (a concurrent writer), `retry.steps` times in all. */
async function retryOnConflict<T>(retry: ConflictRetry, fn: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!isStatus(err, 409) || i >= retry.steps) throw err;
      await sleep(retry.firstDelayMs * 5 ** (i - 1));
    }
  }
}

/** Go's json.Marshal of a map: keys sorted, so the annotation is stable. */
const sortedJson = (m: Record<string, string>) =>
  JSON.stringify(Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));

function parseNodeIds(annotation: string | undefined): Record<string, string> {
  if (!annotation) return {};
  try {
    const parsed = JSON.parse(annotation) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, string>;
  } catch {
    // fall through: upstream fails on a malformed annotation; we say which one.
  }
  throw new PluginRegistrationError(
    `the Node's ${NODE_ID_ANNOTATION} annotation is not a JSON object of driver names to node IDs: ${annotation}`,
  );
}

/** The driver's CSINode entry as upstream builds it: topology keys sorted, a limit only when set. */
export function csiNodeDriver(name: string, info: NodeInfo): CsiNodeDriver {
  const driver: CsiNodeDriver = {
    name,
    nodeID: info.nodeId,
    topologyKeys: Object.keys(info.accessibleTopology ?? {}).sort(),
  };
  if (info.maxVolumesPerNode > 0) driver.allocatable = { count: Math.min(info.maxVolumesPerNode, MAX_INT32) };
  return driver;
}

const sameDriver = (a: CsiNodeDriver, b: CsiNodeDriver) =>
  a.nodeID === b.nodeID &&
  JSON.stringify([...(a.topologyKeys ?? [])].sort()) === JSON.stringify(b.topologyKeys) &&
  a.allocatable?.count === b.allocatable?.count;

/** A metadata change of the Node: annotations and labels to set (null removes). */
interface NodeChange {
  annotations?: Record<string, string | null>;
  labels?: Record<string, string>;
}

export interface NodeInfoManagerOptions {
  client: ApiClient;
  nodeName: string;
  retry?: ConflictRetry;
}

export class NodeInfoManager {
  private readonly client: ApiClient;
  private readonly nodeName: string;
  private readonly retry: ConflictRetry;

  constructor(opts: NodeInfoManagerOptions) {
    this.client = opts.client;
    this.nodeName = opts.nodeName;
    this.retry = opts.retry ?? DEFAULT_RETRY;
  }

  private get nodePath(): string {
    return `/api/v1/nodes/${encodeURIComponent(this.nodeName)}`;
  }

  /**
   * upstream InitializeCSINodeWithAnnotation, at start: the CSINode exists (owned by the Node)
   * and carries the migrated-plugins annotation before any driver registers, so the scheduler
   * and the attach/detach controller know how this node mounts in-tree volumes.
   */
  async initializeCSINode(): Promise<void> {
    await retryOnConflict(this.retry, async () => {
      const existing = await this.getCsiNode();
      if (!existing) return this.createCsiNode([]);
      if (existing.metadata.annotations?.[MIGRATED_PLUGINS_ANNOTATION] === MIGRATED_PLUGINS) return;
      const annotations = { ...existing.metadata.annotations, [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED_PLUGINS };
      await this.client.request({
        method: 'PUT',
        path: this.csiNodePath,
        body: { ...existing, metadata: { ...existing.metadata, annotations } },
      });
    });
  }

  /** upstream InstallCSIDriver: the Node (node ID annotation, topology labels) first, then CSINode. */
  async installCSIDriver(driverName: string, info: NodeInfo): Promise<void> {
    if (!info.nodeId)
      throw new PluginRegistrationError(`CSI driver ${JSON.stringify(driverName)} reported an empty node ID`);
    await retryOnConflict(this.retry, () => this.updateNode((node) => this.installOnNode(node, driverName, info)));
    await retryOnConflict(this.retry, () => this.installInCsiNode(csiNodeDriver(driverName, info)));
  }

  /** upstream UninstallCSIDriver: the CSINode entry, then the node ID annotation key. */
  async uninstallCSIDriver(driverName: string): Promise<void> {
    await retryOnConflict(this.retry, () => this.uninstallFromCsiNode(driverName));
    await retryOnConflict(this.retry, () =>
      this.updateNode((node) => {
        const ids = parseNodeIds(node.metadata?.annotations?.[NODE_ID_ANNOTATION]);
        if (!(driverName in ids)) return undefined;
        delete ids[driverName];
        const value = Object.keys(ids).length === 0 ? null : sortedJson(ids);
        return { annotations: { [NODE_ID_ANNOTATION]: value } };
      }),
    );
  }

  /** The annotation entry and the topology labels; a label already set to another value is an error (upstream). */
  private installOnNode(node: NodeMeta, driverName: string, info: NodeInfo): NodeChange | undefined {
    const change: NodeChange = {};
    const ids = parseNodeIds(node.metadata?.annotations?.[NODE_ID_ANNOTATION]);
    if (ids[driverName] !== info.nodeId) {
      change.annotations = { [NODE_ID_ANNOTATION]: sortedJson({ ...ids, [driverName]: info.nodeId }) };
    }
    const labels = node.metadata?.labels ?? {};
    for (const [key, value] of Object.entries(info.accessibleTopology ?? {})) {
      if (labels[key] === value) continue;
      if (key in labels) {
        throw new PluginRegistrationError(
          `detected topology value collision: driver reported ${JSON.stringify(key)}:${JSON.stringify(value)} but existing label is ${JSON.stringify(key)}:${JSON.stringify(labels[key])}`,
        );
      }
      (change.labels ??= {})[key] = value;
    }
    return change.annotations || change.labels ? change : undefined;
  }

  /**
   * GET the Node, PATCH its metadata through nodes/<name>/status (upstream PatchNodeStatus; the
   * node authorizer lets a kubelet write there) with the resourceVersion read as a precondition,
   * so a concurrent writer makes it 409 and the caller retries.
   */
  private async updateNode(change: (node: NodeMeta) => NodeChange | undefined): Promise<void> {
    const node = await this.client.request<NodeMeta>({ method: 'GET', path: this.nodePath });
    const c = change(node);
    if (!c) return;
    await this.client.request({
      method: 'PATCH',
      path: `${this.nodePath}/status`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: node.metadata?.resourceVersion, ...c } },
    });
  }

  private async getCsiNode(): Promise<CsiNodeObject | undefined> {
    try {
      return await this.client.request<CsiNodeObject>({ method: 'GET', path: this.csiNodePath });
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw err;
    }
  }

  private get csiNodePath(): string {
    return `${CSINODES}/${encodeURIComponent(this.nodeName)}`;
  }

  private async installInCsiNode(driver: CsiNodeDriver): Promise<void> {
    const existing = await this.getCsiNode();
    if (!existing) return this.createCsiNode([driver]);
    const drivers = existing.spec?.drivers ?? [];
    const old = drivers.find((d) => d.name === driver.name);
    if (old && sameDriver(old, driver)) return;
    await this.putCsiNode(existing, [...drivers.filter((d) => d.name !== driver.name), driver]);
  }

  private async uninstallFromCsiNode(driverName: string): Promise<void> {
    const existing = await this.getCsiNode();
    const drivers = existing?.spec?.drivers ?? [];
    if (!existing || !drivers.some((d) => d.name === driverName)) return;
    await this.putCsiNode(
      existing,
      drivers.filter((d) => d.name !== driverName),
    );
  }

  private async putCsiNode(existing: CsiNodeObject, drivers: CsiNodeDriver[]): Promise<void> {
    await this.client.request({
      method: 'PUT',
      path: this.csiNodePath,
      body: { ...existing, spec: { ...existing.spec, drivers } },
    });
  }

  /** upstream CreateCSINode: owned by the Node; an AlreadyExists (another writer) counts as a conflict. */
  private async createCsiNode(drivers: CsiNodeDriver[]): Promise<void> {
    const node = await this.client.request<NodeMeta>({ method: 'GET', path: this.nodePath });
    const uid = node.metadata?.uid;
    const body: CsiNodeObject = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSINode',
      metadata: {
        name: this.nodeName,
        annotations: { [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED_PLUGINS },
        ...(uid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.nodeName, uid }] } : {}),
      },
      spec: { drivers },
    };
    await this.client.request({ method: 'POST', path: CSINODES, body });
  }
}
