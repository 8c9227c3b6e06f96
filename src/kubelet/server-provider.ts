/**
 * The main port's view of the node: containers and sandboxes are looked up in the runtime (as
 * upstream's GetContainerRunningPods), so exec/attach/port-forward reach what actually runs.
 */
import type { Pod } from '../api/types.js';
import type { Runtime, RunningPod } from '../kuberuntime/types.js';
import type { MainServerProvider, ServerProvider, StreamingRuntime } from '../server/types.js';

async function findPod(runtime: Runtime, namespace: string, name: string, uid?: string): Promise<RunningPod | undefined> {
  const pods = await runtime.getPods(false);
  return pods.find((p) => p.namespace === namespace && p.name === name && (uid === undefined || p.uid === uid));
}

function runningPodToApi(p: RunningPod): Pod {
  return {
    metadata: { name: p.name, namespace: p.namespace, uid: p.uid },
    spec: { containers: p.containers.map((c) => ({ name: c.name, image: c.image })) },
  } as Pod;
}

export function mainServerProvider(base: ServerProvider, runtime: Runtime, streaming: StreamingRuntime, configz: () => unknown): MainServerProvider {
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
