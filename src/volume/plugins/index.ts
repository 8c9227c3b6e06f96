/** The volume plugins the agent serves itself, in probe order (upstream ProbeVolumePlugins). */
import { createCsiPlugin } from '../csi/csi-plugin.js';
import type { VolumePlugin } from '../types.js';
import { configMapPlugin } from './configmap.js';
import { downwardAPIPlugin } from './downward-api.js';
import { emptyDirPlugin } from './empty-dir.js';
import { hostPathPlugin } from './host-path.js';
import { projectedPlugin } from './projected.js';
import { secretPlugin } from './secret.js';

/** The CSI plugin: PVCs, inline csi and generic ephemeral volumes, through the registered drivers. */
export const csiPlugin = createCsiPlugin();

export const DEFAULT_VOLUME_PLUGINS: readonly VolumePlugin[] = [
  emptyDirPlugin,
  hostPathPlugin,
  configMapPlugin,
  secretPlugin,
  downwardAPIPlugin,
  projectedPlugin,
  csiPlugin,
];
