/** The relist's input: both CRI list calls, in parallel, as undecoded protobuf bytes. */
import type { ContainerStatus } from '../cri/types.js';
import type { RawRelistSource } from './generic.js';

export interface RawListingRuntime {
  listPodSandboxRaw(): Promise<Buffer>;
  listContainersRaw(): Promise<Buffer>;
  containerStatus(containerId: string): Promise<ContainerStatus>;
}

export function criRawSource(runtime: RawListingRuntime): RawRelistSource {
  return {
    async listRaw() {
      const [sandboxes, containers] = await Promise.all([runtime.listPodSandboxRaw(), runtime.listContainersRaw()]);
      return { sandboxes, containers };
    },
    async containerExited(containerId) {
      try {
        const status = await runtime.containerStatus(containerId);
        return status.state === 'CONTAINER_RUNNING' ? false : status;
      } catch (err) {
        if ((err as { code?: string }).code === 'KTS_ERR_CRI_NOT_FOUND') return true; // removed: it has certainly exited
        throw err;
      }
    },
  };
}
