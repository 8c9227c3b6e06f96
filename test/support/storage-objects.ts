/**
 * Storage objects in the test apiserver, made through its wire API as the cluster's controllers
 * would (there is no PV controller, attach/detach controller or ephemeral volume controller in
 * the fake): a bound PV+PVC pair, a CSIDriver, a StorageClass, an attachment (VolumeAttachment
 * with status.attached plus the Node's status.volumesAttached) and its removal. Each throws an
 * Error with the apiserver's answer when a call is refused.
 *
 *   createBoundClaim(api: TestApiserver, o: BoundClaimOptions): Promise<{ pv: Obj; pvc: Obj }>
 *     PV `o.pvName ?? pv-<claimName>` with spec.csi {driver, volumeHandle, ...} and claimRef, and
 *     PVC `o.namespace ?? 'default'`/`o.claimName` with spec.volumeName; both status Bound (the
 *     claim with capacity and accessModes). `o.ownerPod` makes it a generic ephemeral volume's
 *     claim (name <pod>-<volume>, owned by the pod as controller).
 *   createCsiDriver(api: TestApiserver, name: string, spec?: CsiDriverSpec): Promise<Obj>
 *   deleteCsiDriver(api: TestApiserver, name: string): Promise<void>
 *   createStorageClass(api: TestApiserver, name: string, provisioner: string, parameters?: Record<string, string>): Promise<Obj>
 *   setVolumesAttached(api: TestApiserver, nodeName: string, uniqueNames: readonly string[]): Promise<void>
 *     node.status.volumesAttached replaced by these (devicePath ''), as the attach/detach controller writes it.
 *   createVolumeAttachment(api: TestApiserver, o: AttachOptions): Promise<Obj>
 *     VolumeAttachment csi-<sha256(handle+driver+node)> with status.attached true (and attachmentMetadata).
 *   attachVolume(api: TestApiserver, o: AttachOptions): Promise<Obj>
 *     createVolumeAttachment, then the volume added to the Node's volumesAttached (what the controller does).
 *   detachVolume(api: TestApiserver, o: AttachOptions): Promise<void>
 *     the VolumeAttachment deleted and the volume removed from volumesAttached.
 *   volumesInUse(api: TestApiserver, nodeName: string): string[]   node.status.volumesInUse as stored.
 *   uniqueVolumeName(driver, volumeHandle): kubernetes.io/csi/<driver>^<handle>;
 *   attachmentName(volumeHandle, driver, nodeName): csi-<sha256>.
 */
import { csiAttachmentName, csiUniqueVolumeName } from '../../src/volume/csi/csi-types.js';
import type { Obj } from './apiserver-store.js';
import type { TestApiserver } from './test-apiserver.js';

export const uniqueVolumeName = csiUniqueVolumeName;
export const attachmentName = csiAttachmentName;

export interface SecretRef {
  name: string;
  namespace: string;
}

export interface BoundClaimOptions {
  /** Default 'default'. */
  namespace?: string;
  claimName: string;
  /** Default pv-<claimName>. */
  pvName?: string;
  driver: string;
  volumeHandle: string;
  /** Default '1Gi'. */
  storage?: string;
  /** Default ['ReadWriteOnce']. */
  accessModes?: string[];
  volumeMode?: 'Filesystem' | 'Block';
  fsType?: string;
  readOnly?: boolean;
  volumeAttributes?: Record<string, string>;
  mountOptions?: string[];
  /** Default '' (no class). */
  storageClassName?: string;
  nodeStageSecretRef?: SecretRef;
  nodePublishSecretRef?: SecretRef;
  nodeExpandSecretRef?: SecretRef;
  /** A generic ephemeral volume's claim: owned (controller: true) by this pod. */
  ownerPod?: { name: string; uid: string };
}

export interface CsiDriverSpec {
  attachRequired?: boolean;
  podInfoOnMount?: boolean;
  fsGroupPolicy?: 'ReadWriteOnceWithFSType' | 'File' | 'None';
  requiresRepublish?: boolean;
  volumeLifecycleModes?: ('Persistent' | 'Ephemeral')[];
}

export interface AttachOptions {
  driver: string;
  volumeHandle: string;
  nodeName: string;
  pvName: string;
  /** VolumeAttachment status.attachmentMetadata (the CSI publish context). */
  attachmentMetadata?: Record<string, string>;
}

const MERGE = 'application/merge-patch+json';

/** One call through the wire; the answer's body, or an Error naming the call and the answer. */
async function call(api: TestApiserver, method: string, path: string, body?: unknown): Promise<Obj> {
  const r = await api.call(method, path, body, method === 'PATCH' ? MERGE : undefined);
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

function csiSource(o: BoundClaimOptions): Obj {
  return {
    driver: o.driver,
    volumeHandle: o.volumeHandle,
    ...(o.fsType !== undefined ? { fsType: o.fsType } : {}),
    ...(o.readOnly !== undefined ? { readOnly: o.readOnly } : {}),
    ...(o.volumeAttributes ? { volumeAttributes: o.volumeAttributes } : {}),
    ...(o.nodeStageSecretRef ? { nodeStageSecretRef: o.nodeStageSecretRef } : {}),
    ...(o.nodePublishSecretRef ? { nodePublishSecretRef: o.nodePublishSecretRef } : {}),
    ...(o.nodeExpandSecretRef ? { nodeExpandSecretRef: o.nodeExpandSecretRef } : {}),
  };
}

export async function createBoundClaim(api: TestApiserver, o: BoundClaimOptions): Promise<{ pv: Obj; pvc: Obj }> {
  const namespace = o.namespace ?? 'default';
  const pvName = o.pvName ?? `pv-${o.claimName}`;
  const storage = o.storage ?? '1Gi';
  const accessModes = o.accessModes ?? ['ReadWriteOnce'];
  const common = { accessModes, storageClassName: o.storageClassName ?? '', volumeMode: o.volumeMode ?? 'Filesystem' };
  const owner = o.ownerPod
    ? [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          name: o.ownerPod.name,
          uid: o.ownerPod.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]
    : undefined;
  const claimPath = `/api/v1/namespaces/${namespace}/persistentvolumeclaims`;
  const pvc = await call(api, 'POST', claimPath, {
    metadata: {
      name: o.claimName,
      annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' },
      ...(owner ? { ownerReferences: owner } : {}),
    },
    spec: { ...common, resources: { requests: { storage } }, volumeName: pvName },
  });
  const claimRef = {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    namespace,
    name: o.claimName,
    uid: pvc.metadata!.uid,
  };
  await call(api, 'POST', '/api/v1/persistentvolumes', {
    metadata: { name: pvName, annotations: { 'pv.kubernetes.io/provisioned-by': o.driver } },
    spec: {
      ...common,
      capacity: { storage },
      persistentVolumeReclaimPolicy: 'Retain',
      claimRef,
      csi: csiSource(o),
      ...(o.mountOptions ? { mountOptions: o.mountOptions } : {}),
    },
  });
  const pv = await call(api, 'PATCH', `/api/v1/persistentvolumes/${pvName}/status`, { status: { phase: 'Bound' } });
  const bound = await call(api, 'PATCH', `${claimPath}/${o.claimName}/status`, {
    status: { phase: 'Bound', accessModes, capacity: { storage } },
  });
  return { pv, pvc: bound };
}

export function createCsiDriver(api: TestApiserver, name: string, spec: CsiDriverSpec = {}): Promise<Obj> {
  return call(api, 'POST', '/apis/storage.k8s.io/v1/csidrivers', { metadata: { name }, spec });
}

export async function deleteCsiDriver(api: TestApiserver, name: string): Promise<void> {
  await call(api, 'DELETE', `/apis/storage.k8s.io/v1/csidrivers/${name}`);
}

export function createStorageClass(
  api: TestApiserver,
  name: string,
  provisioner: string,
  parameters: Record<string, string> = {},
): Promise<Obj> {
  return call(api, 'POST', '/apis/storage.k8s.io/v1/storageclasses', {
    metadata: { name },
    provisioner,
    parameters,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  });
}

export async function setVolumesAttached(
  api: TestApiserver,
  nodeName: string,
  uniqueNames: readonly string[],
): Promise<void> {
  const volumesAttached = uniqueNames.map((name) => ({ name, devicePath: '' }));
  await call(api, 'PATCH', `/api/v1/nodes/${nodeName}/status`, { status: { volumesAttached } });
}

function attachedNames(api: TestApiserver, nodeName: string): string[] {
  const node = api.store.get('nodes', undefined, nodeName);
  const attached = ((node?.status as Obj | undefined)?.volumesAttached as { name: string }[] | undefined) ?? [];
  return attached.map((v) => v.name);
}

export async function createVolumeAttachment(api: TestApiserver, o: AttachOptions): Promise<Obj> {
  const name = csiAttachmentName(o.volumeHandle, o.driver, o.nodeName);
  await call(api, 'POST', '/apis/storage.k8s.io/v1/volumeattachments', {
    metadata: { name },
    spec: { attacher: o.driver, nodeName: o.nodeName, source: { persistentVolumeName: o.pvName } },
  });
  const status = { attached: true, ...(o.attachmentMetadata ? { attachmentMetadata: o.attachmentMetadata } : {}) };
  return call(api, 'PATCH', `/apis/storage.k8s.io/v1/volumeattachments/${name}/status`, { status });
}

export async function attachVolume(api: TestApiserver, o: AttachOptions): Promise<Obj> {
  const va = await createVolumeAttachment(api, o);
  const unique = csiUniqueVolumeName(o.driver, o.volumeHandle);
  const names = attachedNames(api, o.nodeName);
  if (!names.includes(unique)) await setVolumesAttached(api, o.nodeName, [...names, unique]);
  return va;
}

export async function detachVolume(api: TestApiserver, o: AttachOptions): Promise<void> {
  await call(
    api,
    'DELETE',
    `/apis/storage.k8s.io/v1/volumeattachments/${csiAttachmentName(o.volumeHandle, o.driver, o.nodeName)}`,
  );
  const unique = csiUniqueVolumeName(o.driver, o.volumeHandle);
  await setVolumesAttached(
    api,
    o.nodeName,
    attachedNames(api, o.nodeName).filter((n) => n !== unique),
  );
}

export function volumesInUse(api: TestApiserver, nodeName: string): string[] {
  const node = api.store.get('nodes', undefined, nodeName);
  return [...(((node?.status as Obj | undefined)?.volumesInUse as string[] | undefined) ?? [])];
}
