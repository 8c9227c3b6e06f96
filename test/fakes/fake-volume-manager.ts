/** A VolumeManager that mounts nothing: it records the calls (into `calls`, shared if given) and reports every volume set up. */
import type { Pod } from '../../src/api/types.js';
import type { SubPathMount } from '../../src/volume/index.js';
import type { MountedVolume, PodVolumes, VolumeManager } from '../../src/volume/types.js';

export class FakeVolumeManager implements VolumeManager {
  private readonly pods = new Map<string, PodVolumes>();

  constructor(readonly calls: string[] = []) {}

  async mountPodVolumes(pod: Pod): Promise<PodVolumes> {
    const uid = pod.metadata!.uid!;
    this.calls.push(`mount ${uid}`);
    const mounted = new Map<string, MountedVolume>(
      (pod.spec?.volumes ?? []).map((v) => [v.name, { hostPath: `/fake/${uid}/${v.name}`, readOnly: false }]),
    );
    const volumes = { mounted, errors: new Map() };
    this.pods.set(uid, volumes);
    return volumes;
  }

  getMountedVolumesForPod(uid: string): PodVolumes {
    return this.pods.get(uid) ?? { mounted: new Map(), errors: new Map() };
  }

  async prepareSubPath(m: SubPathMount): Promise<string> {
    return `${m.volumePath}/${m.subPath}`;
  }

  getVolumesInUse(): string[] {
    return [];
  }

  async podVolumesExist(uid: string): Promise<boolean> {
    return (this.pods.get(uid)?.mounted.size ?? 0) > 0;
  }

  async unmountPodVolumes(uid: string): Promise<void> {
    this.calls.push(`unmount ${uid}`);
    this.pods.delete(uid);
  }
}
