/**
 * The global mount of a volume whose driver has STAGE_UNSTAGE_VOLUME (upstream csi_attacher's
 * MountDevice / UnmountDevice): NodeStageVolume to
 * <root>/plugins/kubernetes.io/csi/<driver>/<sha256(handle)>/globalmount with the stage record
 * written first, and NodeUnstageVolume once the last pod's publish of it is gone. The record and
 * the directories go only after the driver said yes and globalmount is no mount point any more.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { VolumeError } from '../../errors.js';
import { log } from '../../util/log.js';
import type { VolumeHost } from '../types.js';
import { volumeErrorFrom } from './csi-drivers.js';
import { csiStagingDir, VOL_DATA_FILE, type CsiVolumeSpec } from './csi-types.js';
import type { CsiNodeClient, VolumeCapability } from './node-client.js';
import { findPublishers, isMountPoint, removeIfPresent, writeJson, type StageVolData } from './vol-data.js';

const DIR_MODE = 0o750;

/** NodeStageVolume of the spec's volume at its staging path (which is returned). */
export async function stageVolume(
  client: CsiNodeClient,
  host: VolumeHost,
  spec: CsiVolumeSpec,
  capability: VolumeCapability,
): Promise<string> {
  const dir = csiStagingDir(host.rootDir, spec.driver, spec.volumeHandle);
  const stagingPath = join(dir, 'globalmount');
  await mkdir(stagingPath, { recursive: true, mode: DIR_MODE });
  const record: StageVolData = { driverName: spec.driver, volumeHandle: spec.volumeHandle };
  await writeJson(join(dir, VOL_DATA_FILE), record);
  try {
    await client.nodeStageVolume({
      volumeId: spec.volumeHandle,
      stagingTargetPath: stagingPath,
      capability,
      ...(spec.publishContext ? { publishContext: spec.publishContext } : {}),
      volumeContext: spec.volumeAttributes,
      ...(spec.stageSecrets ? { secrets: spec.stageSecrets } : {}),
    });
  } catch (err) {
    throw volumeErrorFrom(`volume ${spec.specName}: staging ${spec.volumeHandle} at ${stagingPath}`, err);
  }
  return stagingPath;
}

/**
 * NodeUnstageVolume of a staging dir, then its globalmount, record and dir removed (never
 * recursively). Throws when the driver refuses or globalmount is still mounted.
 */
export async function unstageVolume(
  client: CsiNodeClient,
  host: VolumeHost,
  stagingDir: string,
  record: StageVolData,
): Promise<void> {
  const stagingPath = join(stagingDir, 'globalmount');
  try {
    await client.nodeUnstageVolume(record.volumeHandle, stagingPath);
  } catch (err) {
    throw volumeErrorFrom(`unstaging ${record.volumeHandle} of driver ${record.driverName}`, err);
  }
  if (await isMountPoint(host.mounter, stagingPath)) {
    throw new VolumeError(`${stagingPath} is still mounted after NodeUnstageVolume; not removed`);
  }
  await removeIfPresent(stagingPath, true);
  await removeIfPresent(join(stagingDir, VOL_DATA_FILE));
  await removeIfPresent(stagingDir, true);
  log('volume').info({ driver: record.driverName, volumeHandle: record.volumeHandle }, 'CSI volume unstaged');
}

/** Whether any pod's vol_data.json other than `except` still names the volume. */
export async function hasOtherPublishers(host: VolumeHost, record: StageVolData, except?: string): Promise<boolean> {
  const dirs = await findPublishers(host.rootDir, record.driverName, record.volumeHandle);
  return dirs.some((d) => d !== except);
}
