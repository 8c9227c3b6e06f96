/**
 * The plugins whose files come from the API and the pod (configMap, secret, downwardAPI,
 * projected): the payload first (api-volumes.ts; a missing object fails before anything is
 * mounted), then the volume directory, its tmpfs when the medium is memory, then the atomic
 * write. Mounted read-only, as upstream; set up again on every sync (RequiresRemount), so edits
 * of the objects and of the pod's labels reach the files.
 *
 * The medium is upstream's wrapped emptyDir: secret, projected and downwardAPI volumes live on a
 * tmpfs, configMap volumes on the node's disk (upstream: "this should be on a tmpfs instead of
 * the local disk; the problem is charging the memory").
 */
import { podUID } from '../../api/pod.js';
import type { Pod } from '../../api/types.js';
import { errorMessage, VolumeError } from '../../errors.js';
import { EnvError } from '../../fieldpath/index.js';
import type { PayloadContext } from '../api-volumes.js';
import { checkPayloadPaths, writeAtomic, type DirOwnership } from '../atomic-writer.js';
import { makeVolumeDir } from '../pod-dirs.js';
import { atomicVolumeTmpfsSize, ensureTmpfs } from '../tmpfs.js';
import type { MountedVolume, Volume, VolumeHost, VolumePlugin } from '../types.js';
import {
  ownedPayload,
  VOLUME_DIR_MODE,
  volumeDirOwnership,
  volumeOwnership,
  type PayloadFile,
  type VolumeOwnership,
} from '../volume-payload.js';
import { tearDownLocalVolume } from './local-teardown.js';

/** What one API data plugin adds to the shared set-up. */
export interface ApiDataSource {
  name: string;
  /** What backs the directory: a tmpfs ('Memory') or the node's disk (''). */
  medium: 'Memory' | '';
  canSupport(volume: Volume): boolean;
  /** The files; throws EnvError (a missing object, a bad item). */
  payload(pc: PayloadContext, volume: Volume): Map<string, PayloadFile>;
}

/** The payload's context: no pod IPs, which volumes cannot read (only metadata field paths). */
function payloadContext(host: VolumeHost, pod: Pod, own: VolumeOwnership): PayloadContext {
  return {
    nodeName: host.nodeName,
    hostIP: host.hostIP,
    podIP: '',
    podIPs: [],
    objects: host.objects,
    pod,
    allocatable: host.allocatable,
    own,
  };
}

/** An API data plugin, with what tests and diagnostics read of it besides the VolumePlugin. */
export interface ApiDataPlugin extends VolumePlugin {
  readonly medium: ApiDataSource['medium'];
  /** The files with modes and owners final, and the mode/group of the volume's directories. */
  contents(pod: Pod, volume: Volume, host: VolumeHost): { files: Map<string, PayloadFile>; dir: DirOwnership };
}

function contents(
  src: ApiDataSource,
  pod: Pod,
  volume: Volume,
  host: VolumeHost,
): { files: Map<string, PayloadFile>; dir: DirOwnership } {
  try {
    const own = volumeOwnership(pod);
    const files = ownedPayload(src.payload(payloadContext(host, pod, own), volume), own);
    checkPayloadPaths(files);
    return { files, dir: volumeDirOwnership(own) };
  } catch (err) {
    if (err instanceof EnvError || err instanceof VolumeError)
      throw new VolumeError(`volume ${volume.name}: ${err.message}`, { cause: err });
    throw err;
  }
}

async function setUp(src: ApiDataSource, pod: Pod, volume: Volume, host: VolumeHost): Promise<MountedVolume> {
  const data = contents(src, pod, volume, host);
  const dir = await makeVolumeDir(
    host.rootDir,
    { uid: podUID(pod), plugin: src.name, name: volume.name },
    VOLUME_DIR_MODE,
  );
  if (src.medium === 'Memory') {
    await ensureTmpfs(host.mounter, dir, volume.name, {
      sizeBytes: atomicVolumeTmpfsSize(pod, host.allocatable.memory),
      mode: VOLUME_DIR_MODE,
    });
  }
  try {
    await writeAtomic(dir, data.files, data.dir);
  } catch (err) {
    throw new VolumeError(`volume ${volume.name}: cannot write ${dir}: ${errorMessage(err)}`, { cause: err });
  }
  return { hostPath: dir, readOnly: true };
}

export function apiDataPlugin(src: ApiDataSource): ApiDataPlugin {
  return {
    name: src.name,
    medium: src.medium,
    requiresRemount: true,
    contents: (pod, volume, host) => contents(src, pod, volume, host),
    canSupport: (volume) => src.canSupport(volume),
    setUp: (pod, volume, host) => setUp(src, pod, volume, host),
    tearDown: tearDownLocalVolume,
  };
}
