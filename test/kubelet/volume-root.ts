/**
 * A Kubelet's rootDir with the real volume manager over it, as main.ts builds them: the
 * in-process kubelets of these tests mount their pods' volumes there.
 */
import { createVolumeManager, type VolumeManager } from '../../src/volume/index.js';

export function volumeRoot(rootDir: string): { rootDir: string; volumeManager: VolumeManager } {
  return { rootDir, volumeManager: createVolumeManager({ rootDir }) };
}
