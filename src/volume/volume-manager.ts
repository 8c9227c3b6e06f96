/**
 * The volume manager (upstream pkg/kubelet/volumemanager), reduced to what a node without
 * attach/detach needs:
 *
 *  - desired state: per pod, the volumes its init and regular containers mount (upstream's
 *    populator also skips volumes no container uses);
 *  - actual state: per pod, each volume set up (its host path), and the last error of each that
 *    could not be;
 *  - mountPodVolumes (upstream WaitForAttachAndMount, called by the kubelet before the
 *    runtime's SyncPod): sets up what is not set up yet, and again what its plugin wants
 *    remounted (API data refreshed). It does not wait and does not throw for one volume: the
 *    containers that mount a failed volume report its error (CreateContainerConfigError) and
 *    the others start, and the next sync tries again. A CSI-served volume (PVC, generic
 *    ephemeral, inline csi) is first resolved (csi/csi-resolve.ts); while one is not set up the
 *    kubelet does not start the pod at all (volume-wait.ts), as upstream waits for it;
 *  - getVolumesInUse: the attachable CSI volumes resolved for a pod, kept until the pod's
 *    volumes are torn down (node.status.volumesInUse: the attach/detach controller leaves them);
 *  - unmountPodVolumes: after the pod's containers are gone (SyncTerminatedPod, and orphans the
 *    runtime's garbage collection finds): subPath binds first (they hold parts of the volumes),
 *    then each volume directory through its plugin, then the directory levels left empty.
 *    hostPath data is never touched; a directory of a plugin we do not know is left alone.
 */
import { existsSync } from 'node:fs';
import { readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { formatPod, podUID } from '../api/pod.js';
import type { Pod } from '../api/types.js';
import { errorMessage, VolumeError } from '../errors.js';
import { podEventRef, type EventRecorder } from '../events/index.js';
import { log } from '../util/log.js';
import { expandIfNeeded, forgetExpansions } from './csi/csi-expand.js';
import { podDir, podVolumesDir } from './pod-dirs.js';
import { cleanSubPaths, prepareSubPath, type SubPathMount } from './subpath/subpath.js';
import type { BindSubPath } from './subpath/subpath-types.js';
import { CsiVolumeError, isCsiVolume, resolveCsiVolume } from './csi/csi-resolve.js';
import type { CsiVolumePlugin } from './csi/csi-plugin.js';
import { CSI_POD_PLUGIN_DIR, csiUniqueVolumeName, type CsiVolumeSpec } from './csi/csi-types.js';
import { mountsUnder } from './mount.js';
import type { MountedVolume, PodVolumes, Volume, VolumeHost, VolumeManager, VolumePlugin } from './types.js';

/** The volumes of the pod that some container mounts (upstream GetPodVolumeNames). */
export function desiredVolumes(pod: Pod): Volume[] {
  const names = new Set<string>();
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const vm of c.volumeMounts ?? []) names.add(vm.name);
  }
  return (pod.spec?.volumes ?? []).filter((v) => names.has(v.name));
}

/** The first key of the volume source, for "type X is not supported". */
function volumeType(volume: Volume): string {
  return (
    Object.keys(volume).find((k) => k !== 'name' && (volume as unknown as Record<string, unknown>)[k] !== undefined) ??
    'unknown'
  );
}

interface PodState {
  mounted: Map<string, MountedVolume>;
  errors: Map<string, VolumeError>;
}

/** upstream's attachable volume: a persistent CSI volume whose driver wants ControllerPublish. */
function attachableName(spec: CsiVolumeSpec): string | undefined {
  if (spec.lifecycle !== 'Persistent' || !spec.policy.attachRequired) return undefined;
  return csiUniqueVolumeName(spec.driver, spec.volumeHandle);
}

const NO_VOLUMES: PodVolumes = { mounted: new Map(), errors: new Map() };

export class LocalVolumeManager implements VolumeManager {
  /** The actual state of the world, by pod UID. */
  private readonly pods = new Map<string, PodState>();
  /** The pods whose teardown runs now. */
  private readonly teardowns = new Map<string, Promise<void>>();
  /**
   * By pod UID, volume name → unique name of its attachable CSI volumes: wanted (resolved, even
   * if not attached yet) or still mounted. Dropped only when the pod's teardown succeeds.
   */
  private readonly inUse = new Map<string, Map<string, string>>();

  constructor(
    private readonly host: VolumeHost,
    private readonly plugins: readonly VolumePlugin[],
    private readonly bindSubPath: BindSubPath,
    private readonly recorder?: EventRecorder,
  ) {}

  async mountPodVolumes(pod: Pod): Promise<PodVolumes> {
    const uid = podUID(pod);
    const state = this.pods.get(uid) ?? { mounted: new Map(), errors: new Map() };
    this.pods.set(uid, state);
    for (const volume of desiredVolumes(pod)) await this.mountVolume(pod, volume, state);
    return state;
  }

  private async mountVolume(pod: Pod, volume: Volume, state: PodState): Promise<void> {
    const plugin = this.plugins.find((p) => p.canSupport(volume));
    const mounted = state.mounted.get(volume.name);
    if (mounted?.csi) this.expandInBackground(pod, volume.name, mounted);
    if (mounted && plugin && !plugin.requiresRemount) return;
    try {
      if (!plugin) throw new VolumeError(`volume ${volume.name}: type ${volumeType(volume)} is not supported yet`);
      const setUp = isCsiVolume(volume) ? this.setUpCsi(pod, volume, plugin) : plugin.setUp(pod, volume, this.host);
      state.mounted.set(volume.name, await setUp);
      state.errors.delete(volume.name);
    } catch (err) {
      const error =
        err instanceof VolumeError
          ? err
          : new VolumeError(`volume ${volume.name}: ${errorMessage(err)}`, { cause: err });
      state.errors.set(volume.name, error);
      const level = mounted ? 'warn' : 'debug';
      log('volume')[level](
        { pod: formatPod(pod), volume: volume.name, err: error.message },
        mounted ? 'cannot refresh volume' : 'cannot set up volume',
      );
    }
  }

  /**
   * upstream's populator then reconciler for one CSI volume: resolved through the API (claim, PV,
   * CSIDriver, attachment), noted in use when attachable, then set up by the plugin. A plugin's
   * error is upstream's "MountVolume.SetUp failed for volume" (a FailedMount event).
   */
  private async setUpCsi(pod: Pod, volume: Volume, plugin: VolumePlugin): Promise<MountedVolume> {
    const inUse = this.inUse.get(podUID(pod)) ?? new Map<string, string>();
    this.inUse.set(podUID(pod), inUse);
    let spec: CsiVolumeSpec;
    try {
      spec = await resolveCsiVolume(pod, volume, this.host);
    } catch (err) {
      // Not attached yet: in use all the same, or the attach/detach controller may detach it.
      if (err instanceof CsiVolumeError && err.uniqueName) inUse.set(volume.name, err.uniqueName);
      throw err;
    }
    const unique = attachableName(spec);
    if (unique) inUse.set(volume.name, unique);
    try {
      // The CSI plugin sets up what was just resolved, without reading the API objects again.
      return await ('setUpResolved' in plugin
        ? (plugin as CsiVolumePlugin).setUpResolved(pod, volume, spec, this.host)
        : plugin.setUp(pod, volume, this.host));
    } catch (err) {
      if (err instanceof CsiVolumeError) throw err;
      const message = `MountVolume.SetUp failed for volume "${spec.specName}" : ${errorMessage(err)}`;
      throw new CsiVolumeError('mount', message, unique, { cause: err });
    }
  }

  /** Online expansion of a mounted CSI volume (csi/csi-expand.ts): never holds the mount pass up. */
  private expandInBackground(pod: Pod, name: string, mounted: MountedVolume): void {
    void expandIfNeeded(pod, name, mounted, this.host).then(
      (e) => e && this.recorder?.event(podEventRef(pod), e.type, e.reason, e.message),
    );
  }

  getMountedVolumesForPod(uid: string): PodVolumes {
    return this.pods.get(uid) ?? NO_VOLUMES;
  }

  prepareSubPath(m: SubPathMount): Promise<string> {
    return prepareSubPath({ rootDir: this.host.rootDir, mounter: this.host.mounter, bindSubPath: this.bindSubPath }, m);
  }

  getVolumesInUse(): string[] {
    const names = new Set<string>();
    for (const volumes of this.inUse.values()) for (const name of volumes.values()) names.add(name);
    return [...names].sort();
  }

  async cleanupOrphanedVolumes(): Promise<void> {
    for (const plugin of this.plugins) await plugin.cleanupOrphans?.(this.host);
  }

  /** One teardown per pod at a time: the kubelet's housekeeping and the runtime's GC both ask. */
  unmountPodVolumes(uid: string): Promise<void> {
    const running = this.teardowns.get(uid);
    if (running) return running;
    const teardown = this.tearDownPod(uid).finally(() => this.teardowns.delete(uid));
    this.teardowns.set(uid, teardown);
    return teardown;
  }

  async podVolumesExist(uid: string): Promise<boolean> {
    if ((this.pods.get(uid)?.mounted.size ?? 0) > 0) return true;
    const volumes = podVolumesDir(this.host.rootDir, uid);
    if (!existsSync(volumes)) return false;
    // A CSI volume's record outlives its mount until the driver has unpublished it.
    const csiDir = join(volumes, CSI_POD_PLUGIN_DIR);
    if ((await readdir(csiDir).catch(() => [] as string[])).length > 0) return true;
    return (await mountsUnder(volumes).catch(() => [] as string[])).length > 0;
  }

  private async tearDownPod(uid: string): Promise<void> {
    this.pods.delete(uid);
    forgetExpansions(this.host, uid);
    const { rootDir, mounter } = this.host;
    await cleanSubPaths(rootDir, uid, mounter);
    const volumes = podVolumesDir(rootDir, uid);
    for (const pluginName of await readdir(volumes).catch(() => [] as string[])) {
      const plugin = this.plugins.find((p) => p.name === pluginName);
      if (!plugin) continue;
      const pluginDir = join(volumes, pluginName);
      for (const name of await readdir(pluginDir).catch(() => [] as string[]))
        await plugin.tearDown(join(pluginDir, name), this.host);
      await rmdir(pluginDir).catch(() => undefined);
    }
    // rmdir only removes empty directories: anything another subsystem keeps there survives.
    await rmdir(volumes).catch(() => undefined);
    await rmdir(podDir(rootDir, uid)).catch(() => undefined);
    // Torn down: the attach/detach controller may detach what the pod used.
    this.inUse.delete(uid);
  }
}
