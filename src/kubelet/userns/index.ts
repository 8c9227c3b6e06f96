/** User namespaces for `hostUsers: false` pods (upstream pkg/kubelet/userns). */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RuntimeHandler } from '../../cri/types.js';
import { podDir } from '../../util/pod-identity.js';
import { handlerSupport } from './admit.js';
import { getKubeletMappings, SYSTEM_ID_FILES, type IdFiles } from './kubelet-mappings.js';
import { DEFAULT_IDS_PER_POD, UsernsManager } from './manager.js';

export {
  UsernsManager,
  DEFAULT_IDS_PER_POD,
  USERNS_UNIT_LENGTH,
  MAPPINGS_FILE,
  unsupportedMessage,
  type UsernsPods,
} from './manager.js';
export { getKubeletMappings, defaultMappings, KUBELET_USER, type IdRange, type IdFiles } from './kubelet-mappings.js';
export { usernsAdmitHandler, handlerSupport, USERNS_REFUSAL_REASON } from './admit.js';

/** upstream listPodsFromDisk: the directories under <root-dir>/pods (none when it is missing). */
async function listPodDirs(podsDir: string): Promise<string[]> {
  try {
    return (await readdir(podsDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export interface UserNamespacesOptions {
  rootDir: string;
  maxPods: number;
  /** KubeletConfiguration userNamespaces.idsPerPod; absent: 65536. */
  idsPerPod?: number | undefined;
  /** The runtime handlers of the last CRI Status reply (the kubelet's runtime state). */
  handlers: () => readonly RuntimeHandler[];
  files?: IdFiles;
}

/** The kubelet's user namespace manager over `<root-dir>/pods` (upstream MakeUserNsManager at start). */
export async function createUserNamespaces(o: UserNamespacesOptions): Promise<UsernsManager> {
  const idsPerPod = o.idsPerPod ?? DEFAULT_IDS_PER_POD;
  const range = await getKubeletMappings(idsPerPod, o.files ?? SYSTEM_ID_FILES);
  const podsDir = join(o.rootDir, 'pods');
  return UsernsManager.create(
    {
      podDir: (uid) => podDir(o.rootDir, uid),
      listPodsFromDisk: () => listPodDirs(podsDir),
      handlerSupportsUserNamespaces: (h) => handlerSupport(o.handlers(), h),
      maxPods: o.maxPods,
    },
    range,
    idsPerPod,
  );
}
