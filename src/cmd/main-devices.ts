/**
 * The device manager and the pod resources API, wired (part of the composition root: only
 * main.ts imports this file). Upstream: the container manager creates the device manager over
 * the device plugin directory and starts it with the active pods, the sources' readiness and the
 * containers found running; the kubelet serves the pod resources API on
 * <root-dir>/pod-resources/kubelet.sock with the pod manager and the device manager as providers.
 */
import { join } from 'node:path';
import type { Pod } from '../api/types.js';
import type { RuntimeService } from '../cri/types.js';
import { createDeviceManager, ExtendedResources, type DeviceManager } from '../devicemanager/index.js';
import { devicesProvider, PodResourcesServer } from '../podresources/index.js';
import { KubernetesContainerNameLabel, KubernetesPodUIDLabel } from '../kuberuntime/labels.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';

/** upstream podresources socket: <root-dir>/pod-resources/kubelet.sock (it follows --root-dir). */
export const POD_RESOURCES_SOCKET = join('pod-resources', 'kubelet.sock');

export interface Devices {
  dm: DeviceManager;
  /** Node status and admission read the extended resources through this one. */
  extended: ExtendedResources;
  /** upstream ShouldResetExtendedResourceCapacity, read before the manager writes a checkpoint. */
  resetExtendedResources: boolean;
  /** Set once node status exists: called when a plugin's devices changed. */
  onChange: { notify?: () => void };
}

export function createDevices(rootDir: string, endpointStopGraceMs: number | undefined): Devices {
  const onChange: Devices['onChange'] = {};
  const changed = { refresh: () => undefined as unknown };
  const dm = createDeviceManager({
    rootDir,
    ...(endpointStopGraceMs !== undefined ? { endpointStopGraceMs } : {}),
    onDevicesChanged: () => {
      changed.refresh();
      onChange.notify?.();
    },
  });
  const extended = new ExtendedResources(dm);
  changed.refresh = () => extended.refresh();
  // Standalone mode has no Node object: the log says what the node offers now (API server mode too).
  extended.onChange((counts) => log('devicemanager').info(counts, 'Node extended resources changed'));
  return { dm, extended, resetExtendedResources: dm.shouldResetExtendedResourceCapacity(), onChange };
}

/**
 * The containers the runtime runs now, by (pod UID, container name): these keep their
 * checkpointed devices whatever the plugins say (docs/devices.md). A runtime that cannot answer
 * gives none: such containers are then checked like new ones.
 */
async function runningContainers(runtime: Pick<RuntimeService, 'listContainers'>) {
  try {
    const list = await runtime.listContainers({ state: 'CONTAINER_RUNNING' });
    return list.flatMap((c) => {
      const podUid = c.labels[KubernetesPodUIDLabel];
      const containerName = c.labels[KubernetesContainerNameLabel];
      return podUid && containerName ? [{ podUid, containerName }] : [];
    });
  } catch (err) {
    log('devicemanager').warn({ err: errorMessage(err) }, 'Cannot list the running containers for the device manager');
    return [];
  }
}

export interface DeviceStartDeps {
  runtime: Pick<RuntimeService, 'listContainers'>;
  /** upstream ActivePodsFunc; must include a pod being admitted (it is in the pod manager by then). */
  activePods: () => Pod[];
  sourcesReady: () => boolean;
}

/** Serves kubelet.sock; a failure to serve it stops the start, as upstream's. */
export async function startDevices(devices: Devices, deps: DeviceStartDeps): Promise<void> {
  await devices.dm.start({
    activePods: deps.activePods,
    sourcesReady: deps.sourcesReady,
    initialRunningContainers: await runningContainers(deps.runtime),
  });
}

export interface PodResourcesDeps {
  rootDir: string;
  dm: DeviceManager;
  activePods: () => Pod[];
  pods: () => Pod[];
  /** Feature gate KubeletPodResourcesGet. */
  getEnabled: boolean;
}

/** The pod resources API; a socket that cannot be served is logged, the agent runs on (upstream logs it). */
export async function startPodResources(deps: PodResourcesDeps): Promise<PodResourcesServer | undefined> {
  const server = new PodResourcesServer({
    socketPath: join(deps.rootDir, POD_RESOURCES_SOCKET),
    getEnabled: deps.getEnabled,
    providers: {
      pods: {
        activePods: deps.activePods,
        podByName: (namespace, name) =>
          deps.pods().find((p) => (p.metadata?.namespace ?? 'default') === namespace && p.metadata?.name === name),
      },
      devices: devicesProvider(deps.dm),
    },
  });
  try {
    await server.start();
    return server;
  } catch (err) {
    log('podresources').error({ err: errorMessage(err) }, 'Failed to start the pod resources API');
    return undefined;
  }
}

/**
 * Standalone mode has no node status loop: this pass reads the counts at the node status
 * cadence, so a plugin's grace period ending is logged (and checkpointed) when it ends, not at
 * the next admission. Returns the stop function.
 */
export function standaloneCapacityPass(devices: Devices, periodMs: number): () => void {
  const t = setInterval(() => devices.extended.refresh(), periodMs);
  t.unref();
  return () => clearInterval(t);
}

/** The healthz check `device-plugin` (upstream: the registration server's checker). */
export function deviceHealthErrors(dm: Pick<DeviceManager, 'healthy'>): string[] {
  const problem = dm.healthy();
  return problem === undefined ? [] : [`device-plugin failed: ${problem}`];
}
