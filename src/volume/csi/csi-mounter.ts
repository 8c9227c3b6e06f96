/**
 * The publish half of the CSI plugin (upstream csi_mounter.go SetUpAt): the pod's volume dir
 * pods/<uid>/volumes/kubernetes.io~csi/<specName> with vol_data.json written before any driver
 * call, NodeStageVolume once per volume when the driver stages, NodePublishVolume to `mount`
 * (fsType and mount options in the capability, readOnly, publish context, pod info, secrets),
 * then the pod's fsGroup applied as the driver's fsGroupPolicy says.
 */
import { chmod, lchown, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { podUID } from '../../api/pod.js';
import type { Pod } from '../../api/types.js';
import { VolumeError } from '../../errors.js';
import { fsGroupMode, volumeOwnershipFor } from '../volume-payload.js';
import type { MountedVolume, Volume, VolumeHost } from '../types.js';
import { isFinalCsiError, volumeErrorFrom, volumeKey, type NodeCapabilities } from './csi-drivers.js';
import { stageVolume } from './csi-stage.js';
import { csiAttachmentName, csiStagingPath, VOL_DATA_FILE, type CsiVolumeSpec, type VolData } from './csi-types.js';
import type { CsiNodeClient, VolumeCapability } from './node-client.js';
import { csiPodVolumeDir, isMountPoint, removeIfPresent, writeJson } from './vol-data.js';

const DIR_MODE = 0o750;
const POD_INFO = 'csi.storage.k8s.io/';
/** CSI access modes of upstream's ReadWriteOnce and ReadWriteOncePod (hasReadWriteOnce). */
const SINGLE_NODE_WRITER = new Set(['SINGLE_NODE_WRITER', 'SINGLE_NODE_MULTI_WRITER', 'SINGLE_NODE_SINGLE_WRITER']);

/** What one setUp needs besides the resolved spec. */
export interface PublishArgs {
  pod: Pod;
  volume: Volume;
  host: VolumeHost;
  client: CsiNodeClient;
  caps: NodeCapabilities;
  /** Whether this process already staged the volume (NodeStageVolume is then skipped). */
  staged: Set<string>;
}

/**
 * upstream getPodInfoAttrs, only with the CSIDriver's podInfoOnMount: the ephemeral key is one of
 * them, as upstream (a driver serving inline volumes sets podInfoOnMount to tell them apart).
 */
export function volumeContext(pod: Pod, spec: CsiVolumeSpec): Record<string, string> {
  const out = { ...spec.volumeAttributes };
  if (!spec.policy.podInfoOnMount) return out;
  out[`${POD_INFO}pod.name`] = pod.metadata?.name ?? '';
  out[`${POD_INFO}pod.namespace`] = pod.metadata?.namespace ?? '';
  out[`${POD_INFO}pod.uid`] = podUID(pod);
  out[`${POD_INFO}serviceAccount.name`] = pod.spec?.serviceAccountName ?? '';
  out[`${POD_INFO}ephemeral`] = String(spec.lifecycle === 'Ephemeral');
  return out;
}

/** upstream supportsFSGroup: whether the kubelet applies the pod's fsGroup to this volume. */
export function kubeletAppliesFsGroup(spec: CsiVolumeSpec, fsGroup: number | undefined): boolean {
  if (fsGroup === undefined || spec.policy.fsGroupPolicy === 'None' || spec.readOnly) return false;
  if (spec.policy.fsGroupPolicy === 'File') return true;
  if (!spec.fsType) return false;
  // Inline volumes are always published single-node-writer (upstream: "always RWO").
  return spec.lifecycle === 'Ephemeral' || SINGLE_NODE_WRITER.has(spec.accessMode);
}

function capabilityOf(spec: CsiVolumeSpec, mountGroup: number | undefined): VolumeCapability {
  return {
    accessMode: spec.accessMode,
    ...(spec.fsType ? { fsType: spec.fsType } : {}),
    mountFlags: spec.mountOptions,
    ...(mountGroup !== undefined ? { volumeMountGroup: String(mountGroup) } : {}),
  };
}

function volData(spec: CsiVolumeSpec, host: VolumeHost): VolData {
  return {
    specVolID: spec.specName,
    volumeHandle: spec.volumeHandle,
    driverName: spec.driver,
    nodeName: host.nodeName,
    attachmentID: csiAttachmentName(spec.volumeHandle, spec.driver, host.nodeName),
    volumeLifecycleMode: spec.lifecycle,
  };
}

/** upstream supportsVolumeLifecycleMode: the CSIDriver must list the mode (Persistent by default). */
function checkLifecycle(spec: CsiVolumeSpec): void {
  if (!spec.policy.volumeLifecycleModes.includes(spec.lifecycle)) {
    throw new VolumeError(`volume mode ${JSON.stringify(spec.lifecycle)} not supported by driver ${spec.driver}`);
  }
}

/** After a publish that failed for good: nothing is mounted, so the pod's record and dir go (upstream removeMountDir). */
async function discardUnpublished(host: VolumeHost, dir: string): Promise<void> {
  const target = join(dir, 'mount');
  if (await isMountPoint(host.mounter, target)) return;
  await removeIfPresent(target, true);
  await removeIfPresent(join(dir, VOL_DATA_FILE));
  await removeIfPresent(dir, true);
}

/** Stage (when the driver stages and this process has not yet), then publish; under the volume's lock. */
export async function publishVolume(args: PublishArgs, spec: CsiVolumeSpec): Promise<MountedVolume> {
  checkLifecycle(spec);
  const { pod, host, client, caps } = args;
  const own = volumeOwnershipFor(pod, args.volume.name);
  // VOLUME_MOUNT_GROUP: the driver applies the fsGroup itself (upstream delegates it whatever the policy).
  const mountGroup = caps.has('VOLUME_MOUNT_GROUP') ? own.fsGroup : undefined;
  const capability = capabilityOf(spec, mountGroup);
  const dir = csiPodVolumeDir(host.rootDir, podUID(pod), spec.specName);
  const target = join(dir, 'mount');
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  await writeJson(join(dir, VOL_DATA_FILE), volData(spec, host));
  let stagingPath: string | undefined;
  try {
    stagingPath = await stageIfNeeded(args, spec, capability);
    await client.nodePublishVolume({
      volumeId: spec.volumeHandle,
      targetPath: target,
      ...(stagingPath ? { stagingTargetPath: stagingPath } : {}),
      capability,
      readonly: spec.readOnly,
      ...(spec.publishContext ? { publishContext: spec.publishContext } : {}),
      volumeContext: volumeContext(pod, spec),
      ...(spec.publishSecrets ? { secrets: spec.publishSecrets } : {}),
    });
  } catch (err) {
    if (isFinalCsiError(err)) await discardUnpublished(host, dir).catch(() => undefined);
    throw err instanceof VolumeError
      ? err
      : volumeErrorFrom(`volume ${args.volume.name}: publishing to ${target}`, err);
  }
  if (mountGroup === undefined && kubeletAppliesFsGroup(spec, own.fsGroup)) {
    await applyFsGroup(target, own.fsGroup!, pod.spec?.securityContext?.fsGroupChangePolicy).catch((err: unknown) => {
      throw volumeErrorFrom(`volume ${args.volume.name}: applying fsGroup ${own.fsGroup} to ${target}`, err);
    });
  }
  return {
    hostPath: target,
    readOnly: spec.readOnly,
    csi: {
      driver: spec.driver,
      volumeHandle: spec.volumeHandle,
      targetPath: target,
      ...(stagingPath ? { stagingPath } : {}),
      ...(spec.claim ? { claim: spec.claim } : {}),
      ...(spec.pvName ? { pvName: spec.pvName } : {}),
    },
  };
}

/** Inline (Ephemeral) volumes are never staged, as upstream; a staged key is remembered per process. */
async function stageIfNeeded(
  args: PublishArgs,
  spec: CsiVolumeSpec,
  capability: VolumeCapability,
): Promise<string | undefined> {
  if (spec.lifecycle !== 'Persistent' || !args.caps.has('STAGE_UNSTAGE_VOLUME')) return undefined;
  const key = volumeKey(spec.driver, spec.volumeHandle);
  if (args.staged.has(key)) return csiStagingPath(args.host.rootDir, spec.driver, spec.volumeHandle);
  // After a restart the set is empty: NodeStageVolume again, which the spec makes idempotent.
  const path = await stageVolume(args.client, args.host, spec, capability);
  args.staged.add(key);
  return path;
}

/**
 * upstream SetVolumeOwnership: every file and directory group-owned by fsGroup and group
 * read-write (directories setgid and searchable); OnRootMismatch skips the walk when the root
 * already is.
 */
export async function applyFsGroup(root: string, gid: number, policy: string | undefined): Promise<void> {
  if (policy === 'OnRootMismatch') {
    const st = await stat(root);
    if (st.gid === gid && fsGroupMode(st.mode & 0o7777, true, false) === (st.mode & 0o7777)) return;
  }
  await walkOwn(root, gid);
}

async function walkOwn(path: string, gid: number): Promise<void> {
  const st = await lstat(path);
  await lchown(path, -1, gid);
  if (st.isSymbolicLink()) return;
  await chmod(path, fsGroupMode(st.mode & 0o7777, st.isDirectory(), false));
  if (!st.isDirectory()) return;
  for (const name of await readdir(path)) await walkOwn(join(path, name), gid);
}
