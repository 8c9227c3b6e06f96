/**
 * The storage API objects a CSI volume is resolved through, in API server mode (upstream: the
 * desired state populator's PVC and PV GETs, the CSI plugin's CSIDriver lister, the attacher's
 * VolumeAttachment GET, the secrets the PV names, and the node's status.volumesAttached).
 *
 * Traffic does not grow with pods and is nil while no CSI volume is mounted:
 * - claims, volumes, attachments and secrets are one GET each when a volume is set up (none at
 *   idle; upstream GETs them the same way, not through informers);
 * - CSIDrivers come from ONE list+watch of storage.k8s.io/v1 csidrivers, started on the first
 *   lookup rather than at start, so a node that never mounts a CSI volume never opens it (upstream
 *   starts its informer with the kubelet; the lazy start saves an idle node one long-lived watch
 *   and its relist every 5-10 min). Once started it runs until stop();
 * - volumesAttached is what the node status loop last read of its own Node (no request at all).
 */
import type {
  V1CSIDriver,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1VolumeAttachment,
} from '@kubernetes/client-node';
import type { ApiClient } from '../apiclient/types.js';
import { ReflectedStore } from '../apiclient/reflected-store.js';
import { ApiError, errorMessage } from '../errors.js';
import type { StorageObjectSource } from '../volume/types.js';

export const CSI_DRIVERS_PATH = '/apis/storage.k8s.io/v1/csidrivers';
/** How long the first CSIDriver lookup waits for the informer's first list before it fails (and is retried). */
export const CSI_DRIVER_SYNC_TIMEOUT_MS = 10_000;

export interface StorageObjectsOptions {
  /** The rate-limited main client. */
  client: ApiClient;
  /** node.status.volumesAttached[].name as the node status loop last read it. */
  attachedVolumes: () => ReadonlySet<string>;
  syncTimeoutMs?: number;
}

const enc = encodeURIComponent;

export class StorageObjects implements StorageObjectSource {
  private readonly drivers: ReflectedStore<V1CSIDriver>;
  private started = false;
  private stopped = false;

  constructor(private readonly o: StorageObjectsOptions) {
    this.drivers = new ReflectedStore<V1CSIDriver>({
      client: o.client,
      path: CSI_DRIVERS_PATH,
      what: 'csidrivers',
      key: (d) => d.metadata?.name || undefined,
      admit: () => true,
    });
  }

  persistentVolumeClaim(namespace: string, name: string): Promise<V1PersistentVolumeClaim | null> {
    return this.get(
      `/api/v1/namespaces/${enc(namespace)}/persistentvolumeclaims/${enc(name)}`,
      `PVC ${namespace}/${name}`,
    );
  }

  persistentVolume(name: string): Promise<V1PersistentVolume | null> {
    return this.get(`/api/v1/persistentvolumes/${enc(name)}`, `PV ${name}`);
  }

  volumeAttachment(name: string): Promise<V1VolumeAttachment | null> {
    return this.get(`/apis/storage.k8s.io/v1/volumeattachments/${enc(name)}`, `VolumeAttachment ${name}`);
  }

  async secret(namespace: string, name: string): Promise<Record<string, string> | null> {
    const s = await this.get<{ data?: Record<string, string> }>(
      `/api/v1/namespaces/${enc(namespace)}/secrets/${enc(name)}`,
      `secret ${namespace}/${name}`,
    );
    if (!s) return null;
    return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  }

  async patchPersistentVolumeClaimStatus(namespace: string, name: string, patch: object): Promise<void> {
    const path = `/api/v1/namespaces/${enc(namespace)}/persistentvolumeclaims/${enc(name)}/status`;
    try {
      await this.o.client.request({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: patch });
    } catch (err) {
      throw wrap(err, `failed to patch the status of PVC ${namespace}/${name}`);
    }
  }

  attachedVolumes(): ReadonlySet<string> {
    return this.o.attachedVolumes();
  }

  /** upstream's CSIDriver lister: null when the driver has no CSIDriver object (its defaults apply). */
  async csiDriver(name: string): Promise<V1CSIDriver | null> {
    this.start();
    if (!(await this.drivers.waitSynced(this.o.syncTimeoutMs ?? CSI_DRIVER_SYNC_TIMEOUT_MS))) throw this.notSynced();
    return this.drivers.get(name) ?? null;
  }

  /** Whether the CSIDriver informer has been started (tests; the docs' request pattern). */
  informerStarted(): boolean {
    return this.started;
  }

  stop(): void {
    this.stopped = true;
    this.drivers.stop();
  }

  private start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.drivers.start();
  }

  /** Why the first list did not come: stopped, or not within the timeout (the volume waits and is retried). */
  private notSynced(): ApiError {
    if (this.stopped) {
      return new ApiError(0, 'NotSynced', `CSIDriver informer stopped before its first list of ${CSI_DRIVERS_PATH}`);
    }
    const ms = this.o.syncTimeoutMs ?? CSI_DRIVER_SYNC_TIMEOUT_MS;
    return new ApiError(
      0,
      'NotSynced',
      `CSIDrivers not listed within ${ms / 1000} s (${CSI_DRIVERS_PATH}); will retry`,
    );
  }

  /** One GET: the object, null on 404 (it does not exist), else a typed ApiError saying what was fetched. */
  private async get<T>(path: string, what: string): Promise<T | null> {
    try {
      return await this.o.client.request<T>({ method: 'GET', path });
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 404) return null;
      throw wrap(err, `failed to fetch ${what} from API server`);
    }
  }
}

/** The client's error with what the kubelet was doing in front; an ApiError keeps its status and reason. */
function wrap(err: unknown, doing: string): ApiError {
  if (err instanceof ApiError)
    return new ApiError(err.statusCode, err.reason, `${doing}: ${err.message}`, { cause: err });
  return new ApiError(0, 'ClientError', `${doing}: ${errorMessage(err)}`, { cause: err });
}
