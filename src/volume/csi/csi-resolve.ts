/**
 * A pod volume served through CSI, resolved to what its driver is called with (upstream: the
 * desired state populator's PVC → PV lookups, the CSIDriver object, the attacher's wait): an
 * inline `csi` volume, a `persistentVolumeClaim` whose PV has a `csi` source, or a generic
 * `ephemeral` volume's <pod>-<volume> claim. A volume not ready (claim unbound, not attached,
 * driver not registered) throws a VolumeError naming what it waits for; the pod waits.
 */
import type { Pod } from '../../api/types.js';
import { VolumeError } from '../../errors.js';
import type { Volume, VolumeHost } from '../types.js';
import type { CsiVolumeSpec } from './csi-types.js';

/** The pod volumes the CSI plugin serves. */
export function isCsiVolume(volume: Volume): boolean {
  return volume.csi !== undefined || volume.persistentVolumeClaim !== undefined || volume.ephemeral !== undefined;
}

export async function resolveCsiVolume(_pod: Pod, volume: Volume, _host: VolumeHost): Promise<CsiVolumeSpec> {
  throw new VolumeError(`volume ${volume.name}: CSI volumes are not resolved yet`);
}
