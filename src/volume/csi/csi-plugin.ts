/**
 * The CSI volume plugin (upstream pkg/volume/csi csiPlugin, its mounter and unmounter, and the
 * reconstruction that follows a restart), `kubernetes.io~csi` under each pod's volumes:
 *
 *  - setUp: the pod volume resolved (csi-resolve.ts) to a driver and handle, the driver found
 *    among those registered, then stage and publish (csi-mounter.ts). Idempotent: after an
 *    agent restart a running pod's volumes are simply set up again (NodeStage/NodePublish of a
 *    staged/published volume succeed per the CSI spec), which adopts them;
 *  - tearDown of one pod volume dir, from its vol_data.json alone (so a new agent tears down what
 *    an old one mounted): NodeUnpublishVolume, then NodeUnstageVolume when no other pod's record
 *    names the volume, then the records and empty dirs, each only after the driver said yes and
 *    nothing is mounted there. A driver not registered or down throws: the teardown waits and
 *    garbage collection retries; nothing is deleted through a mount;
 *  - cleanupOrphans: global mounts whose last publisher is gone (an agent that stopped between
 *    unpublish and unstage) are unstaged.
 */
import { join } from 'node:path';
import type { Pod } from '../../api/types.js';
import { VolumeError } from '../../errors.js';
import { log } from '../../util/log.js';
import type { MountedVolume, Volume, VolumeHost, VolumePlugin } from '../types.js';
import { CsiDriverAccess, volumeErrorFrom, volumeKey } from './csi-drivers.js';
import { publishVolume } from './csi-mounter.js';
import { isCsiVolume, resolveCsiVolume } from './csi-resolve.js';
import { hasOtherPublishers, unstageVolume } from './csi-stage.js';
import { CSI_POD_PLUGIN_DIR, csiStagingDir, VOL_DATA_FILE, type CsiVolumeSpec, type VolData } from './csi-types.js';
import type { CsiNodeClient } from './node-client.js';
import { isMountPoint, listStagingDirs, readStageVolData, readVolData, removeIfPresent } from './vol-data.js';
import { rm } from 'node:fs/promises';

export type CsiResolver = (pod: Pod, volume: Volume, host: VolumeHost) => Promise<CsiVolumeSpec>;

export interface CsiPluginOptions {
  /** PVC / inline / ephemeral volume → driver and handle (default: resolveCsiVolume). */
  resolve?: CsiResolver;
  /** Deadline of each driver call (default: upstream's csiTimeout, 2 minutes). */
  timeoutMs?: number;
}

/** The CSI plugin: a VolumePlugin plus the orphan sweep the garbage collection runs. */
export interface CsiVolumePlugin extends VolumePlugin {
  /** setUp of a volume already resolved (the volume manager resolves first, for volumesInUse). */
  setUpResolved(pod: Pod, volume: Volume, spec: CsiVolumeSpec, host: VolumeHost): Promise<MountedVolume>;
  /** Unstages global mounts no pod's vol_data.json names any more; a driver not registered is skipped. */
  cleanupOrphans(host: VolumeHost): Promise<void>;
  /** Closes the driver connections (tests, shutdown). */
  close(): void;
}

class CsiPlugin implements CsiVolumePlugin {
  readonly name = CSI_POD_PLUGIN_DIR;
  readonly requiresRemount = false;
  private readonly drivers: CsiDriverAccess;
  private readonly resolve: CsiResolver;
  /** Volumes this process staged (NodeStageVolume skipped for the next pod of the same volume). */
  private readonly staged = new Set<string>();

  constructor(opts: CsiPluginOptions) {
    this.drivers = new CsiDriverAccess(opts.timeoutMs);
    this.resolve = opts.resolve ?? resolveCsiVolume;
  }

  canSupport(volume: Volume): boolean {
    return isCsiVolume(volume);
  }

  async setUp(pod: Pod, volume: Volume, host: VolumeHost): Promise<MountedVolume> {
    return this.setUpResolved(pod, volume, await this.resolve(pod, volume, host), host);
  }

  async setUpResolved(pod: Pod, volume: Volume, spec: CsiVolumeSpec, host: VolumeHost): Promise<MountedVolume> {
    const client = this.client(host, spec.driver, `volume ${volume.name}`);
    const caps = await this.drivers.nodeCapabilities(client).catch((err: unknown) => {
      throw this.unreachable(
        client,
        volumeErrorFrom(`volume ${volume.name}: asking ${spec.driver} for its capabilities`, err),
      );
    });
    const args = { pod, volume, host, client, caps, staged: this.staged };
    return this.drivers
      .withLock(volumeKey(spec.driver, spec.volumeHandle), () => publishVolume(args, spec))
      .catch((err: unknown) => {
        throw this.unreachable(client, err);
      });
  }

  /** Drops the client of a driver that could not be reached; returns the error to throw. */
  private unreachable(client: CsiNodeClient, err: unknown): unknown {
    this.drivers.forgetIfUnreachable(client, err);
    return err;
  }

  async tearDown(dir: string, host: VolumeHost): Promise<void> {
    const data = await readVolData(dir);
    if (!data) return this.removeUnrecorded(dir, host);
    const client = this.client(host, data.driverName, `cannot tear down ${dir}`);
    await this.drivers
      .withLock(volumeKey(data.driverName, data.volumeHandle), async () => {
        await this.unpublish(dir, data, client, host);
        await this.unstageIfUnused(data, host, dir);
        await removeIfPresent(join(dir, VOL_DATA_FILE));
        await removeIfPresent(dir, true);
      })
      .catch((err: unknown) => {
        throw this.unreachable(client, err);
      });
    log('volume').info({ dir, driver: data.driverName, volumeHandle: data.volumeHandle }, 'CSI volume torn down');
  }

  async cleanupOrphans(host: VolumeHost): Promise<void> {
    for (const stagingDir of await listStagingDirs(host.rootDir)) {
      const record = await readStageVolData(stagingDir).catch(() => undefined);
      if (!record || !host.csiDrivers?.get(record.driverName)) continue;
      const client = this.client(host, record.driverName, 'orphaned global mount');
      await this.drivers
        .withLock(volumeKey(record.driverName, record.volumeHandle), async () => {
          if (await hasOtherPublishers(host, record)) return;
          await unstageVolume(client, host, stagingDir, record);
          this.staged.delete(volumeKey(record.driverName, record.volumeHandle));
        })
        .catch((err: unknown) => {
          this.drivers.forgetIfUnreachable(client, err);
          log('volume').warn({ stagingDir, err: (err as Error).message }, 'cannot unstage orphaned CSI global mount');
        });
    }
  }

  close(): void {
    this.drivers.close();
  }

  private client(host: VolumeHost, driver: string, what: string): CsiNodeClient {
    try {
      return this.drivers.client(host.csiDrivers, driver);
    } catch (err) {
      throw volumeErrorFrom(what, err);
    }
  }

  private async unpublish(dir: string, data: VolData, client: CsiNodeClient, host: VolumeHost): Promise<void> {
    const target = join(dir, 'mount');
    try {
      await client.nodeUnpublishVolume(data.volumeHandle, target);
    } catch (err) {
      throw volumeErrorFrom(`cannot tear down ${dir}: unpublishing ${data.volumeHandle}`, err);
    }
    if (await isMountPoint(host.mounter, target)) {
      throw new VolumeError(`cannot tear down ${dir}: ${target} is still mounted after NodeUnpublishVolume`);
    }
    // The spec makes the driver remove the target; a driver that left it empty is helped.
    await removeIfPresent(target, true);
  }

  /** NodeUnstageVolume when the volume was staged and this was its last publisher. */
  private async unstageIfUnused(data: VolData, host: VolumeHost, dir: string): Promise<void> {
    const stagingDir = csiStagingDir(host.rootDir, data.driverName, data.volumeHandle);
    const record = await readStageVolData(stagingDir);
    if (!record || (await hasOtherPublishers(host, record, dir))) return;
    const client = this.client(host, data.driverName, `cannot unstage ${data.volumeHandle}`);
    await unstageVolume(client, host, stagingDir, record);
    this.staged.delete(volumeKey(data.driverName, data.volumeHandle));
  }

  /** A dir without vol_data.json (a setUp that never got to write it): removed when nothing is mounted in it. */
  private async removeUnrecorded(dir: string, host: VolumeHost): Promise<void> {
    const mounts = await host.mounter.mountsUnder(dir);
    if (mounts.length > 0 || (await isMountPoint(host.mounter, dir))) {
      throw new VolumeError(`cannot tear down ${dir}: it has no ${VOL_DATA_FILE} to name its driver, and holds mounts`);
    }
    await rm(dir, { recursive: true, force: true });
  }
}

/** The CSI plugin; `resolve` is injectable for tests. */
export function createCsiPlugin(opts: CsiPluginOptions = {}): CsiVolumePlugin {
  return new CsiPlugin(opts);
}
