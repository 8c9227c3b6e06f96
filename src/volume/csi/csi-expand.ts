/**
 * Online node expansion of a mounted CSI volume (upstream v1.35: the desired state populator's
 * checkVolumeFSResize, operationexecutor's node_expander.go with RecoverVolumeExpansionFailure
 * GA, and pkg/volume/csi/expander.go). When the PV's capacity is above the claim's
 * status.capacity and the resize controller left allocatedResourceStatuses.storage at
 * NodeResizePending (or NodeResizeInProgress), the claim is marked NodeResizeInProgress, the
 * driver's NodeExpandVolume is called, and the claim's status gets the new capacity with the
 * resize status and conditions cleared (upstream MarkFSResizeFinished). A final driver error sets
 * the NodeResizeError condition (and NodeResizeInfeasible for InvalidArgument, OutOfRange,
 * NotFound) and is not retried for that size; a transient one is retried with back-off.
 */
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1PersistentVolumeClaimCondition,
} from '@kubernetes/client-node';
import { podUID, formatPod } from '../../api/pod.js';
import type { Pod } from '../../api/types.js';
import { CsiError, errorMessage, VolumeError } from '../../errors.js';
import type { EventFields } from '../../events/types.js';
import { log } from '../../util/log.js';
import { tryParseQuantity } from '../../util/quantity.js';
import type { MountedVolume, StorageObjectSource, VolumeHost } from '../types.js';
import { CSI_PLUGIN_NAME, type CsiMountedInfo } from './csi-types.js';
import { CsiNodeClient, type AccessMode, type NodeServiceCapability, type VolumeCapability } from './node-client.js';

export const FILE_SYSTEM_RESIZE_SUCCESSFUL = 'FileSystemResizeSuccessful';
export const FILE_SYSTEM_RESIZE_FAILED = 'FileSystemResizeFailed';

/** The resize conditions upstream's MergeResizeConditionOnPVC replaces (knownResizeConditions). */
const RESIZE_CONDITIONS = new Set(['Resizing', 'FileSystemResizePending', 'ControllerResizeError', 'NodeResizeError']);
/** gRPC codes upstream's isFinalError treats as "may still be in progress": retried. */
const TRANSIENT_CODES = new Set([1, 4, 8, 10, 14]); // CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, UNAVAILABLE
/** upstream isInfeasibleError: INVALID_ARGUMENT, NOT_FOUND, OUT_OF_RANGE. */
const INFEASIBLE_CODES = new Set([3, 5, 11]);
const FAILED_PRECONDITION = 9;
/** upstream nestedpendingoperations: exponential back-off from 500 ms to 2m2s. */
const BACKOFF_INITIAL_MS = 500;
const BACKOFF_MAX_MS = 122_000;

interface ExpandState {
  inFlight: boolean;
  /** The size a final error was answered for: not tried again until the PV's size changes. */
  failedSize?: number;
  retryAt: number;
  backoffMs: number;
}

/** Per host (one kubelet), per pod volume: what expansion is doing. */
const states = new WeakMap<VolumeHost, Map<string, ExpandState>>();

function stateOf(host: VolumeHost, key: string): ExpandState {
  let m = states.get(host);
  if (!m) states.set(host, (m = new Map()));
  let s = m.get(key);
  if (!s) m.set(key, (s = { inFlight: false, retryAt: 0, backoffMs: 0 }));
  return s;
}

/** Forgets a pod's expansion state (its volumes were torn down). */
export function forgetExpansions(host: VolumeHost, uid: string): void {
  const m = states.get(host);
  for (const k of m?.keys() ?? []) if (k.startsWith(`${uid}/`)) m!.delete(k);
}

const bytes = (q: string | undefined): number => Math.ceil(tryParseQuantity(q ?? '0') ?? 0);

/** What one expansion needs, looked up through the API. */
interface Target {
  pod: Pod;
  volumeName: string;
  csi: CsiMountedInfo;
  pvc: V1PersistentVolumeClaim;
  pv: V1PersistentVolume;
  storage: StorageObjectSource;
  newSize: number;
}

/**
 * Called on each mount pass for a mounted CSI volume: expands it when its claim asks for it.
 * Returns the event to record on the pod (FileSystemResizeSuccessful / FileSystemResizeFailed),
 * undefined when nothing was done. Never throws: a failure is the event and a log line.
 */
export async function expandIfNeeded(
  pod: Pod,
  volumeName: string,
  mounted: MountedVolume,
  host: VolumeHost,
): Promise<EventFields | undefined> {
  const csi = mounted.csi;
  const storage = host.storage;
  if (!csi || !storage) return undefined;
  const state = stateOf(host, `${podUID(pod)}/${volumeName}`);
  if (state.inFlight || Date.now() < state.retryAt) return undefined;
  state.inFlight = true;
  try {
    const target = await lookUp(pod, volumeName, csi, storage);
    if (!target || target.newSize === state.failedSize) return undefined;
    return await expand(target, host, state);
  } catch (err) {
    // The API could not be read: the next pass tries again.
    log('volume').debug(
      { pod: formatPod(pod), volume: volumeName, err: errorMessage(err) },
      'cannot check volume size',
    );
    return undefined;
  } finally {
    state.inFlight = false;
  }
}

/** upstream volumeRequiresFSResize + runPreCheck: the claim and PV when node expansion is due. */
async function lookUp(
  pod: Pod,
  volumeName: string,
  csi: CsiMountedInfo,
  storage: StorageObjectSource,
): Promise<Target | undefined> {
  const claim = csi.claim ?? podVolumeClaim(pod, volumeName);
  if (!claim) return undefined;
  const pvc = await storage.persistentVolumeClaim(claim.namespace, claim.name);
  const pvName = csi.pvName ?? pvc?.spec?.volumeName;
  if (!pvc || !pvName) return undefined;
  const pv = await storage.persistentVolume(pvName);
  if (!pv) return undefined;
  const newSize = bytes(pv.spec?.capacity?.storage);
  if (!needsNodeExpansion(pvc, newSize)) return undefined;
  return { pod, volumeName, csi, pvc, pv, storage, newSize };
}

/**
 * The PV is larger than the claim's status says, and the resize controller handed the claim to
 * the node (upstream 1.35 runPreCheck; a claim with no resize status is left alone, as there).
 */
export function needsNodeExpansion(pvc: V1PersistentVolumeClaim, pvSize: number): boolean {
  if (bytes(pvc.status?.capacity?.storage) >= pvSize) return false;
  const status = pvc.status?.allocatedResourceStatuses?.storage;
  return status === 'NodeResizePending' || status === 'NodeResizeInProgress';
}

/** The claim a pod volume goes through: a PVC, or a generic ephemeral volume's <pod>-<volume> (upstream ephemeral.VolumeClaimName). */
export function podVolumeClaim(pod: Pod, volumeName: string): { namespace: string; name: string } | undefined {
  const v = pod.spec?.volumes?.find((x) => x.name === volumeName);
  const namespace = pod.metadata?.namespace ?? '';
  if (v?.persistentVolumeClaim) return { namespace, name: v.persistentVolumeClaim.claimName };
  if (v?.ephemeral) return { namespace, name: `${pod.metadata?.name ?? ''}-${v.name}` };
  return undefined;
}

const succeeded = (t: Target, nodeName: string): EventFields => ({
  type: 'Normal',
  reason: FILE_SYSTEM_RESIZE_SUCCESSFUL,
  message: `MountVolume.NodeExpandVolume succeeded for volume "${t.pv.metadata?.name ?? ''}" ${nodeName}`.trimEnd(),
});

const failed = (t: Target, err: unknown): EventFields => ({
  type: 'Warning',
  reason: FILE_SYSTEM_RESIZE_FAILED,
  message: `NodeExpandVolume.NodeExpandVolume failed for volume "${t.pv.metadata?.name ?? ''}" : ${errorMessage(err)}`,
});

async function expand(t: Target, host: VolumeHost, state: ExpandState): Promise<EventFields | undefined> {
  const ns = t.pvc.metadata?.namespace ?? '';
  const name = t.pvc.metadata?.name ?? '';
  const readOnly = t.pod.spec?.volumes?.find((v) => v.name === t.volumeName)?.persistentVolumeClaim?.readOnly;
  if (readOnly) {
    state.failedSize = t.newSize;
    return { ...failed(t, 'requested read-only file system'), message: readOnlyMessage(t) };
  }
  await t.storage.patchPersistentVolumeClaimStatus(ns, name, {
    status: { allocatedResourceStatuses: { storage: 'NodeResizeInProgress' } },
  });
  try {
    await callDriver(t, host);
  } catch (err) {
    return await onFailure(t, state, err);
  }
  state.backoffMs = 0;
  state.retryAt = 0;
  log('volume').info({ pod: formatPod(t.pod), volume: t.volumeName, bytes: t.newSize }, 'NodeExpandVolume succeeded');
  await t.storage.patchPersistentVolumeClaimStatus(ns, name, resizeFinishedPatch(t.pvc, t.pv));
  return succeeded(t, host.nodeName);
}

const readOnlyMessage = (t: Target): string =>
  `MountVolume.NodeExpandVolume failed for volume "${t.pv.metadata?.name ?? ''}" requested read-only file system`;

/** upstream MarkFSResizeFinished: the PV's capacity, no storage resize status, no resize conditions. */
export function resizeFinishedPatch(pvc: V1PersistentVolumeClaim, pv: V1PersistentVolume): object {
  const kept = (pvc.status?.conditions ?? []).filter((c) => !RESIZE_CONDITIONS.has(c.type));
  // An empty map goes altogether, as upstream sets it to nil.
  const others = Object.keys(pvc.status?.allocatedResourceStatuses ?? {}).some((k) => k !== 'storage');
  return {
    status: {
      capacity: { storage: pv.spec?.capacity?.storage },
      allocatedResourceStatuses: others ? { storage: null } : null,
      conditions: kept.length > 0 ? kept : null,
    },
  };
}

/** upstream MarkNodeExpansionFailedCondition / MarkNodeExpansionInfeasible. */
export function resizeFailedPatch(pvc: V1PersistentVolumeClaim, err: unknown, infeasible: boolean): object {
  const condition: V1PersistentVolumeClaimCondition = {
    type: 'NodeResizeError',
    status: 'True',
    lastTransitionTime: new Date(),
    message: `failed to expand pvc with ${errorMessage(err)}`,
  };
  const old = pvc.status?.conditions ?? [];
  const same = old.find((c) => c.type === 'NodeResizeError');
  const conditions = same?.status === 'True' ? old : [...old.filter((c) => c !== same), condition];
  return {
    status: {
      ...(infeasible ? { allocatedResourceStatuses: { storage: 'NodeResizeInfeasible' } } : {}),
      conditions,
    },
  };
}

async function onFailure(t: Target, state: ExpandState, err: unknown): Promise<EventFields | undefined> {
  const code = err instanceof CsiError ? err.grpcCode : undefined;
  const where = { pod: formatPod(t.pod), volume: t.volumeName, err: errorMessage(err) };
  if (code === undefined || TRANSIENT_CODES.has(code)) {
    // Not a final answer (or none at all): retried, the claim stays NodeResizeInProgress.
    state.backoffMs = Math.min(BACKOFF_MAX_MS, state.backoffMs ? state.backoffMs * 2 : BACKOFF_INITIAL_MS);
    state.retryAt = Date.now() + state.backoffMs;
    log('volume').warn({ ...where, retryInMs: state.backoffMs }, 'NodeExpandVolume failed');
    return failed(t, err);
  }
  state.failedSize = t.newSize;
  log('volume').warn(where, 'NodeExpandVolume failed with a final error');
  const ns = t.pvc.metadata?.namespace ?? '';
  await t.storage
    .patchPersistentVolumeClaimStatus(
      ns,
      t.pvc.metadata?.name ?? '',
      resizeFailedPatch(t.pvc, err, INFEASIBLE_CODES.has(code)),
    )
    .catch((e: unknown) =>
      log('volume').warn({ ...where, patchErr: errorMessage(e) }, 'cannot mark node expansion failed'),
    );
  // upstream: FailedPrecondition (no online expansion) does not fail the operation, so no event.
  return code === FAILED_PRECONDITION ? undefined : failed(t, err);
}

/** upstream csiPlugin.nodeExpandWithClient: EXPAND_VOLUME checked, then NodeExpandVolume. */
async function callDriver(t: Target, host: VolumeHost): Promise<void> {
  const driver = host.csiDrivers?.get(t.csi.driver);
  if (!driver) throw new VolumeError(`CSI driver ${t.csi.driver} is not registered`);
  const client = new CsiNodeClient(driver.endpoint);
  try {
    const caps = await client.nodeGetCapabilities();
    if (!caps.has('EXPAND_VOLUME')) {
      throw new CsiError(
        'KTS_ERR_CSI',
        'NodeExpandVolume',
        `Expander.NodeExpand found CSI plugin ${CSI_PLUGIN_NAME}/${t.csi.driver} to not support node expansion`,
        { grpcCode: 12 },
      );
    }
    await client.nodeExpandVolume({
      volumeId: t.csi.volumeHandle,
      volumePath: t.csi.targetPath,
      requiredBytes: t.newSize,
      ...(t.csi.stagingPath ? { stagingTargetPath: t.csi.stagingPath } : {}),
      capability: capability(t.pv, caps),
      ...(await expandSecrets(t)),
    });
  } finally {
    client.close();
  }
}

/** The PV's nodeExpandSecretRef, read when set (a missing Secret fails the expansion). */
async function expandSecrets(t: Target): Promise<{ secrets?: Record<string, string> }> {
  const ref = t.pv.spec?.csi?.nodeExpandSecretRef;
  if (!ref?.name) return {};
  const data = await t.storage.secret(ref.namespace ?? '', ref.name);
  if (!data) throw new VolumeError(`nodeExpandSecretRef ${ref.namespace ?? ''}/${ref.name} not found`);
  return { secrets: data };
}

/** upstream asCSIAccessModeV1 with the driver's SINGLE_NODE_MULTI_WRITER. */
function capability(pv: V1PersistentVolume, caps: ReadonlySet<NodeServiceCapability>): VolumeCapability {
  const multi = caps.has('SINGLE_NODE_MULTI_WRITER');
  const modes: Record<string, AccessMode> = {
    ReadWriteOnce: multi ? 'SINGLE_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER',
    ReadWriteOncePod: multi ? 'SINGLE_NODE_SINGLE_WRITER' : 'SINGLE_NODE_WRITER',
    ReadOnlyMany: 'MULTI_NODE_READER_ONLY',
    ReadWriteMany: 'MULTI_NODE_MULTI_WRITER',
  };
  const accessMode = modes[pv.spec?.accessModes?.[0] ?? 'ReadWriteOnce'] ?? 'SINGLE_NODE_WRITER';
  if (pv.spec?.volumeMode === 'Block') return { accessMode, block: true };
  return {
    accessMode,
    ...(pv.spec?.csi?.fsType ? { fsType: pv.spec.csi.fsType } : {}),
    ...(pv.spec?.mountOptions?.length ? { mountFlags: pv.spec.mountOptions } : {}),
  };
}
