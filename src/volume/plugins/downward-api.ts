/** downwardAPI (upstream pkg/volume/downwardapi): the pod's metadata and resources as files, on a tmpfs. */
import { downwardAPIPayload, type DownwardAPIVolumeSource } from '../api-volumes.js';
import { apiDataPlugin } from './api-data.js';

export const DOWNWARD_API_PLUGIN = 'kubernetes.io~downward-api';

export const downwardAPIPlugin = apiDataPlugin({
  name: DOWNWARD_API_PLUGIN,
  medium: 'Memory',
  canSupport: (volume) => Boolean(volume.downwardAPI),
  payload: (pc, volume) => downwardAPIPayload(pc, volume.downwardAPI as DownwardAPIVolumeSource),
});
