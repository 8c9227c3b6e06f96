/** The relist's input: both CRI list calls, in parallel, as undecoded protobuf bytes. */
import type { RawRelistSource } from './generic.js';

export interface RawListingRuntime {
  listPodSandboxRaw(): Promise<Buffer>;
  listContainersRaw(): Promise<Buffer>;
}

export function criRawSource(runtime: RawListingRuntime): RawRelistSource {
  return {
    async listRaw() {
      const [sandboxes, containers] = await Promise.all([runtime.listPodSandboxRaw(), runtime.listContainersRaw()]);
      return { sandboxes, containers };
    },
  };
}
