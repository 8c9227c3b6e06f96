/** The relist's input: both CRI list calls, in parallel, as undecoded protobuf bytes. */
import type { RawRelistSource } from './generic.js';

export interface RawListingRuntime {
  listPodSandboxRaw(): Promise<Buffer>;
  listContainersRaw(): Promise<Buffer>;
  containerStatus(containerId: string): Promise<{ state: string }>;
}

export function criRawSource(runtime: RawListingRuntime): RawRelistSource {
  return {
    async listRaw() {
      const [sandboxes, containers] = await Promise.all([runtime.listPodSandboxRaw(), runtime.listContainersRaw()]);
      return { sandboxes, containers };
    },
    async containerExited(containerId) {
      try {
        return (await runtime.containerStatus(containerId)).state !== 'CONTAINER_RUNNING';
      } catch (err) {
        if ((err as { code?: string }).code === 'KTS_ERR_CRI_NOT_FOUND') return true; // removed: it has certainly exited
        throw err;
      }
    },
  };
}
