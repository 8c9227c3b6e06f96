/**
 * upstream WaitForAttachAndMount's verdict, for the volumes served through CSI (PVC, generic
 * ephemeral, inline csi): while one is not set up the pod must not start (its containers would
 * run without their data), so the kubelet's syncPod fails, the pod stays Pending with its
 * containers ContainerCreating, and the pod worker retries after its back-off. The other
 * plugins keep their behaviour: a failed configMap or secret volume is its containers'
 * CreateContainerConfigError, the pod's other containers start.
 *
 * upstream polls for 2 min inside syncPod; here one pass is made per sync (mountPodVolumes) and
 * the pod worker's back-off does the waiting, so a pod worker is never held by a volume.
 */
import type { Pod } from '../api/types.js';
import { VolumeError } from '../errors.js';
import { CsiVolumeError, isCsiVolume, type CsiVolumeStage } from './csi/csi-resolve.js';
import type { PodVolumes } from './types.js';
import { desiredVolumes } from './volume-manager.js';

/** upstream events.FailedMountVolume and events.FailedAttachVolume. */
export const FAILED_MOUNT = 'FailedMount';
export const FAILED_ATTACH_VOLUME = 'FailedAttachVolume';

export interface VolumeEvent {
  reason: typeof FAILED_MOUNT | typeof FAILED_ATTACH_VOLUME;
  message: string;
}

interface NotReady {
  unmounted: readonly string[];
  unattached: readonly string[];
  unprocessed: readonly string[];
  /** The per-volume Warnings (FailedAttachVolume, FailedMount); the summary is added last. */
  events: readonly VolumeEvent[];
  /** Each unmounted volume's error. */
  details: string;
}

/**
 * The pod's CSI volumes that are not set up, in upstream's words; `events` are the Warnings to
 * record for it, upstream's FailedMount "Unable to attach or mount volumes: ..." last.
 */
export class VolumesNotReadyError extends VolumeError {
  readonly unmounted: readonly string[];
  readonly unattached: readonly string[];
  readonly unprocessed: readonly string[];
  readonly events: readonly VolumeEvent[];
  constructor(n: NotReady) {
    super(
      `unmounted volumes=${goList(n.unmounted)}, unattached volumes=${goList(n.unattached)}, failed to process volumes=${goList(n.unprocessed)}: ${n.details}`,
    );
    this.unmounted = n.unmounted;
    this.unattached = n.unattached;
    this.unprocessed = n.unprocessed;
    this.events = [
      ...n.events,
      { reason: FAILED_MOUNT, message: `Unable to attach or mount volumes: ${this.message}` },
    ];
  }
}

/** Go's %v of a []string: [a b]. */
function goList(names: readonly string[]): string {
  return `[${names.join(' ')}]`;
}

/** The stage a volume stopped at; an error of another kind (no plugin, a bug) is "failed to process". */
function stageOf(err: VolumeError | undefined): CsiVolumeStage {
  return err instanceof CsiVolumeError ? err.stage : 'process';
}

/**
 * After mountPodVolumes: undefined when every CSI volume a container of the pod mounts is set up,
 * else why not (upstream's message, the per-volume events, and the FailedMount summary last).
 */
export function volumesNotReady(pod: Pod, volumes: PodVolumes): VolumesNotReadyError | undefined {
  const unmounted = desiredVolumes(pod)
    .filter((v) => isCsiVolume(v) && !volumes.mounted.has(v.name))
    .map((v) => v.name)
    .sort();
  if (unmounted.length === 0) return undefined;
  const errors = unmounted.map((name) => ({ name, err: volumes.errors.get(name) }));
  const inStage = (stage: CsiVolumeStage) => errors.filter((e) => stageOf(e.err) === stage).map((e) => e.name);
  const events: VolumeEvent[] = errors.flatMap(({ err }): VolumeEvent[] => {
    const stage = stageOf(err);
    if (!err || stage === 'process') return []; // upstream's populator logs these; the summary names them.
    return [{ reason: stage === 'attach' ? FAILED_ATTACH_VOLUME : FAILED_MOUNT, message: err.message }];
  });
  const details = errors.map(({ name, err }) => err?.message ?? `volume ${name} is not set up yet`).join('; ');
  return new VolumesNotReadyError({
    unmounted,
    unattached: inStage('attach'),
    unprocessed: inStage('process'),
    events,
    details,
  });
}
