/** The runtime manager factory: the only way other subsystems get a Runtime. */
import { totalmem } from 'node:os';
import type { ImageService, RuntimeService } from '../cri/types.js';
import { realClock, type Clock } from '../util/clock.js';
import { KubeGenericRuntimeManager } from './manager.js';
import type { ProbeFailure } from './pod-actions.js';
import type { Runtime } from './types.js';

export type { Runtime } from './types.js';
export { computePodActions, type PodActions } from './pod-actions.js';
export { hashContainer } from './hash.js';
export { runningPodFromStatus } from './kill.js';

export interface RuntimeManagerDeps {
  runtime: RuntimeService;
  images: ImageService;
  clock?: Clock;
  /** upstream --pod-logs-dir (default /var/log/pods). */
  podLogsDir: string;
  /** upstream --root-dir (default /var/lib/kubelet): emptyDir volumes live under <rootDir>/pods. */
  rootDir: string;
  nodeName: string;
  clusterDNS?: string[];
  clusterDomain?: string;
  /** For status.hostIP in the downward API. */
  hostIP?: string;
  /** Host resolv.conf for dnsPolicy Default (default /etc/resolv.conf; '' for none). */
  resolvConf?: string;
  /** Node memory in bytes for the Burstable OOM score (default: os.totalmem()). */
  memoryCapacity?: number;
  /** Liveness/startup probe failures by container ID (the prober's results). */
  probeFailure?: (containerId: string) => ProbeFailure | undefined;
}

export function createRuntimeManager(deps: RuntimeManagerDeps): Runtime {
  return new KubeGenericRuntimeManager({
    runtime: deps.runtime,
    images: deps.images,
    clock: deps.clock ?? realClock,
    podLogsDir: deps.podLogsDir,
    rootDir: deps.rootDir,
    nodeName: deps.nodeName,
    hostIP: deps.hostIP ?? '',
    dns: {
      clusterDNS: deps.clusterDNS ?? [],
      clusterDomain: deps.clusterDomain ?? '',
      resolvConf: deps.resolvConf ?? '/etc/resolv.conf',
    },
    memoryCapacity: deps.memoryCapacity ?? totalmem(),
    probeFailure: deps.probeFailure,
  });
}
