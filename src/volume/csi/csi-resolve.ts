/**
 * A pod volume served through CSI, resolved to what its driver is called with (upstream: the
 * desired state populator's PVC → PV lookups, the CSIDriver object, the attacher's wait): an
 * inline `csi` volume, a `persistentVolumeClaim` whose PV has a `csi` source, or a generic
 * `ephemeral` volume's <pod>-<volume> claim. A volume not ready (claim unbound, not attached,
 * driver not registered) throws a CsiVolumeError naming what it waits for; the pod waits.
 *
 * The messages are upstream's (desired_state_of_world_populator.go, csi_plugin.go,
 * csi_attacher.go, operation_generator.go), so that what a user searches for is what upstream prints.
 */
import { createHash } from 'node:crypto';
import type { V1CSIDriver, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { podName, podNamespace, podUID } from '../../api/pod.js';
import type { Pod } from '../../api/types.js';
import { VolumeError } from '../../errors.js';
import type { StorageObjectSource, Volume, VolumeHost } from '../types.js';
import {
  csiAttachmentName,
  csiUniqueVolumeName,
  DEFAULT_DRIVER_POLICY,
  type CsiDriverPolicy,
  type CsiVolumeSpec,
} from './csi-types.js';
import type { AccessMode } from './node-client.js';

/**
 * Where a CSI volume stopped (upstream WaitForAttachAndMount's three lists):
 *  - `process`: the desired state could not take it (claim unbound, PV wrong, driver refuses
 *    the lifecycle): "failed to process volumes";
 *  - `attach`: not in node.status.volumesAttached yet: "unattached volumes" (FailedAttachVolume);
 *  - `mount`: attached (or not attachable) but not set up (VolumeAttachment, secrets, the
 *    driver's calls): a FailedMount event of its own.
 */
export type CsiVolumeStage = 'process' | 'attach' | 'mount';

export class CsiVolumeError extends VolumeError {
  constructor(
    readonly stage: CsiVolumeStage,
    message: string,
    /** Known once the volume resolved: the attachable volume's unique name (volumesInUse). */
    readonly uniqueName?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The pod volumes the CSI plugin serves. */
export function isCsiVolume(volume: Volume): boolean {
  return volume.csi !== undefined || volume.persistentVolumeClaim !== undefined || volume.ephemeral !== undefined;
}

/** The pod volume's source key, for messages ("persistentVolumeClaim"). */
function sourceKind(volume: Volume): string {
  if (volume.csi) return 'csi';
  return volume.persistentVolumeClaim ? 'persistentVolumeClaim' : 'ephemeral';
}

export async function resolveCsiVolume(pod: Pod, volume: Volume, host: VolumeHost): Promise<CsiVolumeSpec> {
  const storage = host.storage;
  if (!storage) {
    throw new CsiVolumeError(
      'process',
      `volume ${volume.name}: ${sourceKind(volume)} volumes need the API server to resolve the claim and the CSIDriver (standalone mode)`,
    );
  }
  const { spec, secrets } = volume.csi
    ? await resolveInline(pod, volume, storage)
    : await resolveClaim(pod, volume, storage, claimNameOf(pod, volume));
  // upstream's order: attach verified, then the secrets read and the driver called (SetUp).
  await checkAttached(pod, spec, host, storage);
  Object.assign(spec, await secrets());
  checkRegistered(spec, host);
  return spec;
}

type Secrets = Pick<CsiVolumeSpec, 'stageSecrets' | 'publishSecrets' | 'expandSecrets'>;

/** A resolved volume, its secrets read only once it is attached. */
interface Resolved {
  spec: CsiVolumeSpec;
  secrets: () => Promise<Secrets>;
}

// ---- the CSIDriver object --------------------------------------------------------------------

/** The node's view of a CSIDriver object; absent: DEFAULT_DRIVER_POLICY (upstream's defaults). */
export function csiDriverPolicy(obj: V1CSIDriver | null | undefined): CsiDriverPolicy {
  const s = obj?.spec;
  if (!s) return DEFAULT_DRIVER_POLICY;
  const modes = (s.volumeLifecycleModes ?? []).filter((m): m is 'Persistent' | 'Ephemeral' =>
    ['Persistent', 'Ephemeral'].includes(m),
  );
  return {
    attachRequired: s.attachRequired ?? DEFAULT_DRIVER_POLICY.attachRequired,
    podInfoOnMount: s.podInfoOnMount ?? DEFAULT_DRIVER_POLICY.podInfoOnMount,
    fsGroupPolicy:
      (s.fsGroupPolicy as CsiDriverPolicy['fsGroupPolicy'] | undefined) ?? DEFAULT_DRIVER_POLICY.fsGroupPolicy,
    requiresRepublish: s.requiresRepublish ?? DEFAULT_DRIVER_POLICY.requiresRepublish,
    volumeLifecycleModes: modes.length > 0 ? modes : DEFAULT_DRIVER_POLICY.volumeLifecycleModes,
  };
}

/** upstream supportsVolumeLifecycleMode: the driver's modes must include the volume's. */
async function driverPolicyFor(
  storage: StorageObjectSource,
  driver: string,
  mode: CsiVolumeSpec['lifecycle'],
): Promise<CsiDriverPolicy> {
  const policy = csiDriverPolicy(await storage.csiDriver(driver));
  if (!policy.volumeLifecycleModes.includes(mode)) {
    // Go's %q of a []string: ["Persistent" "Ephemeral"].
    const modes = `[${policy.volumeLifecycleModes.map((m) => JSON.stringify(m)).join(' ')}]`;
    throw new CsiVolumeError(
      'process',
      `volume mode "${mode}" not supported by driver ${driver} (only supports ${modes})`,
    );
  }
  return policy;
}

// ---- inline csi volumes ----------------------------------------------------------------------

/** upstream makeVolumeHandle: csi-<sha256(podUID + volume name)>, one handle per pod and volume. */
export function ephemeralVolumeHandle(uid: string, volumeName: string): string {
  return `csi-${createHash('sha256').update(`${uid}${volumeName}`).digest('hex')}`;
}

async function resolveInline(pod: Pod, volume: Volume, storage: StorageObjectSource): Promise<Resolved> {
  const csi = volume.csi!;
  const policy = await driverPolicyFor(storage, csi.driver, 'Ephemeral').catch(prefixed(volume));
  const ref = { name: csi.nodePublishSecretRef?.name, namespace: podNamespace(pod) };
  const spec: CsiVolumeSpec = {
    specName: volume.name,
    driver: csi.driver,
    volumeHandle: ephemeralVolumeHandle(podUID(pod), volume.name),
    lifecycle: 'Ephemeral',
    readOnly: csi.readOnly === true,
    ...(csi.fsType ? { fsType: csi.fsType } : {}),
    mountOptions: [],
    volumeAttributes: { ...(csi.volumeAttributes ?? {}) },
    // upstream csiMountMgr.SetUpAt: an inline volume is ReadWriteOnce.
    accessMode: 'SINGLE_NODE_WRITER',
    policy,
  };
  return { spec, secrets: () => readSecrets(storage, { nodePublishSecretRef: ref }, ref.namespace, volume.name) };
}

/** Prefixes a process-stage error with the pod volume's name. */
function prefixed(volume: Volume): (err: unknown) => never {
  return (err: unknown) => {
    if (err instanceof CsiVolumeError && err.stage === 'process')
      throw new CsiVolumeError('process', `volume ${volume.name}: ${err.message}`, err.uniqueName, { cause: err });
    throw err;
  };
}

// ---- claims ----------------------------------------------------------------------------------

/** upstream ephemeral.VolumeClaimName: a generic ephemeral volume's claim is <pod>-<volume>. */
function claimNameOf(pod: Pod, volume: Volume): string {
  return volume.persistentVolumeClaim?.claimName ?? `${podName(pod)}-${volume.name}`;
}

async function resolveClaim(
  pod: Pod,
  volume: Volume,
  storage: StorageObjectSource,
  claimName: string,
): Promise<Resolved> {
  const ns = podNamespace(pod);
  const fail = (problem: string): never => {
    throw new CsiVolumeError('process', `volume ${volume.name}: error processing PVC ${ns}/${claimName}: ${problem}`);
  };
  const pvc = await storage.persistentVolumeClaim(ns, claimName);
  const pvName = boundVolumeName(pvc, ns, claimName, fail);
  if (volume.ephemeral) checkOwner(pod, pvc!, claimName, volume);
  const pv = await storage.persistentVolume(pvName);
  checkPersistentVolume(pv, pvName, pvc!, fail);
  return specFromPV(volume, storage, { pv: pv!, claim: { namespace: ns, name: claimName } });
}

/** upstream getPVCExtractPV: the claim exists, is not being deleted, and is bound. */
function boundVolumeName(
  pvc: V1PersistentVolumeClaim | null,
  ns: string,
  claimName: string,
  fail: (problem: string) => never,
): string {
  if (!pvc) return fail(`failed to fetch PVC from API server: persistentvolumeclaims "${claimName}" not found`);
  if (pvc.metadata?.deletionTimestamp) return fail(`can't start pod because PVC ${ns}/${claimName} is being deleted`);
  const phase = pvc.status?.phase ?? '';
  const volumeName = pvc.spec?.volumeName ?? '';
  if (phase !== 'Bound' || volumeName === '') {
    return fail(
      `PVC ${ns}/${claimName} has non-bound phase (${JSON.stringify(phase)}) or empty pvc.Spec.VolumeName (${JSON.stringify(volumeName)})`,
    );
  }
  return volumeName;
}

/** upstream ephemeral.VolumeIsForPod: the claim's controller is this pod (same UID). */
function checkOwner(pod: Pod, pvc: V1PersistentVolumeClaim, claimName: string, volume: Volume): void {
  const controller = pvc.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (controller && controller.uid === podUID(pod)) return;
  const ns = podNamespace(pod);
  throw new CsiVolumeError(
    'process',
    `volume ${volume.name}: PVC ${ns}/${claimName} was not created for pod ${ns}/${podName(pod)} (pod is not owner)`,
  );
}

/** upstream getPVSpec: the PV exists and its claimRef points back at this claim. */
function checkPersistentVolume(
  pv: V1PersistentVolume | null,
  pvName: string,
  pvc: V1PersistentVolumeClaim,
  fail: (problem: string) => never,
): void {
  if (!pv) return fail(`failed to fetch PV ${pvName} from API server: persistentvolumes "${pvName}" not found`);
  const ref = pv.spec?.claimRef;
  if (!ref) {
    return fail(
      `found PV object ${pvName} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`,
    );
  }
  const claimUID = pvc.metadata?.uid ?? '';
  if ((ref.uid ?? '') !== claimUID) {
    return fail(
      `found PV object ${pvName} but its pv.Spec.ClaimRef.UID ${ref.uid ?? ''} does not point to claim.UID ${claimUID}`,
    );
  }
  const { name, namespace } = pvc.metadata ?? {};
  if ((ref.name !== undefined && ref.name !== name) || (ref.namespace !== undefined && ref.namespace !== namespace)) {
    return fail(`found PV object ${pvName} but its pv.Spec.ClaimRef ${ref.namespace}/${ref.name} is another claim`);
  }
}

/** upstream asCSIAccessMode (a ReadWriteOnce volume is SINGLE_NODE_WRITER: we do not ask for MULTI_WRITER). */
const ACCESS_MODES: Readonly<Record<string, AccessMode>> = {
  ReadWriteOnce: 'SINGLE_NODE_WRITER',
  ReadOnlyMany: 'MULTI_NODE_READER_ONLY',
  ReadWriteMany: 'MULTI_NODE_MULTI_WRITER',
  ReadWriteOncePod: 'SINGLE_NODE_SINGLE_WRITER',
};

/** The PV's first access mode (upstream csiMountMgr uses AccessModes[0]); none: ReadWriteOnce. */
export function csiAccessMode(pvModes: readonly string[] | undefined): AccessMode {
  return ACCESS_MODES[pvModes?.[0] ?? 'ReadWriteOnce'] ?? 'SINGLE_NODE_WRITER';
}

interface BoundPV {
  pv: V1PersistentVolume;
  claim: { namespace: string; name: string };
}

async function specFromPV(volume: Volume, storage: StorageObjectSource, b: BoundPV): Promise<Resolved> {
  const pvName = b.pv.metadata?.name ?? '';
  const pv = b.pv.spec ?? {};
  const csi = pv.csi;
  if (!csi) {
    const kind = Object.keys(pv).find((k) => !NOT_SOURCES.has(k) && (pv as Record<string, unknown>)[k]) ?? 'unknown';
    throw new CsiVolumeError(
      'process',
      `volume ${volume.name}: PV ${pvName}: volume source ${kind} is not supported (only CSI persistent volumes are served)`,
    );
  }
  if (pv.volumeMode === 'Block') {
    // upstream's populator message for a Block volume in volumeMounts; volumeDevices are refused at admission.
    throw new CsiVolumeError('process', `volume ${volume.name} has volumeMode Block, but is specified in volumeMounts`);
  }
  const policy = await driverPolicyFor(storage, csi.driver, 'Persistent').catch(prefixed(volume));
  const spec: CsiVolumeSpec = {
    specName: pvName,
    driver: csi.driver,
    volumeHandle: csi.volumeHandle,
    lifecycle: 'Persistent',
    // upstream getReadOnlyFromSpec: the pod's claim readOnly, or the PV's csi.readOnly.
    readOnly: volume.persistentVolumeClaim?.readOnly === true || csi.readOnly === true,
    ...(csi.fsType ? { fsType: csi.fsType } : {}),
    mountOptions: [...(pv.mountOptions ?? [])],
    volumeAttributes: { ...(csi.volumeAttributes ?? {}) },
    accessMode: csiAccessMode(pv.accessModes),
    policy,
    claim: b.claim,
    pvName,
  };
  return { spec, secrets: () => readSecrets(storage, csi, b.claim.namespace, pvName) };
}

/** PV spec keys that are not a volume source. */
const NOT_SOURCES = new Set([
  'accessModes',
  'capacity',
  'claimRef',
  'mountOptions',
  'nodeAffinity',
  'persistentVolumeReclaimPolicy',
  'storageClassName',
  'volumeAttributesClassName',
  'volumeMode',
]);

// ---- secrets ---------------------------------------------------------------------------------

type SecretRef = { name?: string; namespace?: string } | undefined;

/** The secrets the volume names (nodeStage/nodePublish/nodeExpandSecretRef); `specName` for messages. */
async function readSecrets(
  storage: StorageObjectSource,
  csi: { nodeStageSecretRef?: SecretRef; nodePublishSecretRef?: SecretRef; nodeExpandSecretRef?: SecretRef },
  defaultNs: string,
  specName: string,
): Promise<Secrets> {
  const read = async (ref: SecretRef) =>
    ref?.name ? secretData(storage, ref.namespace ?? defaultNs, ref.name, specName) : undefined;
  const [stageSecrets, publishSecrets, expandSecrets] = await Promise.all([
    read(csi.nodeStageSecretRef),
    read(csi.nodePublishSecretRef),
    read(csi.nodeExpandSecretRef),
  ]);
  return {
    ...(stageSecrets ? { stageSecrets } : {}),
    ...(publishSecrets ? { publishSecrets } : {}),
    ...(expandSecrets ? { expandSecrets } : {}),
  };
}

/** upstream getCredentialsFromSecret: a Secret the volume names must exist (the mount waits for it). */
async function secretData(
  storage: StorageObjectSource,
  ns: string,
  name: string,
  specName: string,
): Promise<Record<string, string>> {
  const data = await storage.secret(ns, name);
  if (data) return data;
  throw new CsiVolumeError(
    'mount',
    `MountVolume.SetUp failed for volume "${specName}" : failed to find the secret ${name} in the namespace ${ns} with error: secrets "${name}" not found`,
  );
}

// ---- attach ----------------------------------------------------------------------------------

/**
 * upstream VerifyControllerAttachedVolume then csiAttacher.WaitForAttach, for an attachable
 * persistent volume (inline volumes are never attached): listed in node.status.volumesAttached,
 * then its VolumeAttachment attached; its attachmentMetadata becomes the publish context.
 */
async function checkAttached(pod: Pod, spec: CsiVolumeSpec, host: VolumeHost, storage: StorageObjectSource) {
  if (spec.lifecycle !== 'Persistent' || !spec.policy.attachRequired) return;
  const unique = csiUniqueVolumeName(spec.driver, spec.volumeHandle);
  if (!storage.attachedVolumes().has(unique)) {
    throw new CsiVolumeError(
      'attach',
      `Volume not attached according to node status for volume "${spec.specName}" (UniqueName: "${unique}") pod "${podName(pod)}" (UID: "${podUID(pod)}")`,
      unique,
    );
  }
  const id = csiAttachmentName(spec.volumeHandle, spec.driver, host.nodeName);
  const problem = attachmentProblem(await storage.volumeAttachment(id), spec.volumeHandle, id);
  if (typeof problem === 'string') {
    throw new CsiVolumeError(
      'mount',
      `MountVolume.WaitForAttach failed for volume "${spec.specName}" : ${problem}`,
      unique,
    );
  }
  spec.publishContext = problem;
}

/** upstream verifyAttachmentStatus: the attachment's metadata when attached, else why not. */
function attachmentProblem(
  va: Awaited<ReturnType<StorageObjectSource['volumeAttachment']>>,
  handle: string,
  id: string,
): string | Record<string, string> {
  if (!va)
    return `volume ${handle} has GET error for volume attachment ${id}: volumeattachments.storage.k8s.io "${id}" not found`;
  if (va.metadata?.deletionTimestamp) return 'volume attachment is being deleted';
  if (va.status?.attached === true) return { ...(va.status.attachmentMetadata ?? {}) };
  if (va.status?.attachError?.message) return va.status.attachError.message;
  return `attachment for volume ${handle} (VolumeAttachment ${id}) is not attached yet`;
}

/** upstream newCsiDriverClient: the driver must have registered through plugins_registry. */
function checkRegistered(spec: CsiVolumeSpec, host: VolumeHost): void {
  if (!host.csiDrivers || host.csiDrivers.get(spec.driver)) return;
  throw new CsiVolumeError(
    'mount',
    `MountVolume.SetUp failed for volume "${spec.specName}" : kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name ${spec.driver} not found in the list of registered CSI drivers`,
    spec.lifecycle === 'Persistent' && spec.policy.attachRequired
      ? csiUniqueVolumeName(spec.driver, spec.volumeHandle)
      : undefined,
  );
}
