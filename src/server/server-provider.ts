/**
 * The servers' view of the node, built from the subsystems that own each fact. The read-only
 * provider shows the desired pods with their latest status; the main port also looks containers
 * and sandboxes up in the runtime (as upstream's GetContainerRunningPods), so exec, attach and
 * port-forward reach what actually runs.
 */
import type { Pod } from '../api/types.js';
import { podName, podNamespace, podUID } from '../api/pod.js';
import type { Runtime, RunningPod } from '../kuberuntime/types.js';
import type { ContainerLogsDeps } from '../logs/types.js';
import type { PodStatusProvider } from '../status/types.js';
import type { MainServerProvider, ServerProvider, StreamingRuntime } from './types.js';

interface DesiredPods {
  getPods(): Pod[];
}

/** The read-only provider: desired pods with the status manager's latest status, health, metrics, stats. */
export function readServerProvider(
  deps: Omit<ServerProvider, 'podsWithStatus'> & { podManager: DesiredPods; statusManager: PodStatusProvider },
): ServerProvider {
  const { podManager, statusManager, ...rest } = deps;
  return {
    ...rest,
    podsWithStatus: () =>
      podManager.getPods().map((p): Pod => ({ ...p, status: statusManager.getPodStatus(podUID(p)) ?? p.status ?? {} })),
  };
}

/** /containerLogs: pods by namespace and name among the desired ones, running state from the runtime. */
export function runtimeContainerLogs(deps: {
  podLogsDir: string;
  pods: DesiredPods;
  runtime: Pick<Runtime, 'getPodStatus'>;
}): ContainerLogsDeps {
  return {
    podLogsDir: deps.podLogsDir,
    getPod: (ns, name) =>
      deps.pods.getPods().find((p) => p.metadata?.name === name && (p.metadata?.namespace ?? 'default') === ns),
    isContainerRunning: async (pod, container) => {
      const s = await deps.runtime.getPodStatus(podUID(pod), podName(pod), podNamespace(pod));
      return s.containerStatuses.find((c) => c.name === container)?.state === 'running';
    },
  };
}

async function findPod(
  runtime: Runtime,
  namespace: string,
  name: string,
  uid?: string,
): Promise<RunningPod | undefined> {
  const pods = await runtime.getPods(false);
  return pods.find((p) => p.namespace === namespace && p.name === name && (uid === undefined || p.uid === uid));
}

function runningPodToApi(p: RunningPod): Pod {
  return {
    metadata: { name: p.name, namespace: p.namespace, uid: p.uid },
    spec: { containers: p.containers.map((c) => ({ name: c.name, image: c.image })) },
  } as Pod;
}

export function mainServerProvider(
  base: ServerProvider,
  runtime: Runtime,
  streaming: StreamingRuntime,
  configz: () => unknown,
): MainServerProvider {
  return {
    ...base,
    streaming,
    configz,
    async findContainer(namespace, pod, container, uid) {
      const p = await findPod(runtime, namespace, pod, uid);
      const c = p?.containers.find((x) => x.name === container && x.state === 'running');
      return c ? { containerId: c.id, podSandboxId: c.podSandboxId } : undefined;
    },
    async findSandbox(namespace, pod, uid) {
      const p = await findPod(runtime, namespace, pod, uid);
      return p?.sandboxes.find((s) => s.ready)?.id;
    },
    async runningPods() {
      return (await runtime.getPods(false)).map(runningPodToApi);
    },
  };
}
