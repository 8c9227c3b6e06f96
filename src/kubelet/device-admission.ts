/**
 * The device part of admission (upstream: the resource allocator admit handler, then the
 * predicate's UpdatePluginResources). The allocator runs first, as upstream's
 * GetAllocateResourcesPodAdmitHandler runs before the PredicateAdmitHandler: it calls the
 * device manager's allocate for each init container, then each container, which picks devices
 * and calls the plugin's Allocate. Its failures are UnexpectedAdmissionError. The predicate then
 * fits the pod against the node's extended resources (admission.ts), after raising allocatable
 * to what the pod already holds (a restart while its plugin is not back).
 */
import type { Pod } from '../api/types.js';
import type { DeviceManager } from '../devicemanager/index.js';
import { errorMessage } from '../errors.js';
import type { AdmitResult } from './admission.js';

/** What the Kubelet asks of the devices at admission. */
export interface DeviceAdmission {
  /** Allocates every container's devices; a refusal says why (UnexpectedAdmissionError). */
  allocate(pod: Pod): Promise<AdmitResult>;
  /** The node's extended resources allocatable for this pod's fit (sanitized for the pod). */
  extendedAllocatable(pod: Pod): Record<string, number>;
}

export const UNEXPECTED_ADMISSION_ERROR = 'UnexpectedAdmissionError';

/** upstream admission.GetPodAdmitResult for an error of the resource allocator. */
export function allocateFailure(err: unknown): AdmitResult {
  return {
    admit: false,
    reason: UNEXPECTED_ADMISSION_ERROR,
    message: `Allocate failed due to ${errorMessage(err)}, which is unexpected`,
  };
}

/**
 * `nodeExtended` gives the node's extended resources allocatable now (device counts; in API
 * server mode also those the Node object has from elsewhere).
 */
export function deviceAdmission(
  dm: Pick<DeviceManager, 'allocate' | 'sanitizeAllocatable'>,
  nodeExtended: () => Record<string, number>,
): DeviceAdmission {
  return {
    async allocate(pod) {
      for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
        try {
          await dm.allocate(pod, c);
        } catch (err) {
          return allocateFailure(err);
        }
      }
      return { admit: true };
    },
    extendedAllocatable: (pod) => dm.sanitizeAllocatable(pod, nodeExtended()),
  };
}
