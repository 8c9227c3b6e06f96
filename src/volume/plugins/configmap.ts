/** configMap (upstream pkg/volume/configmap): on the node's disk, as upstream. */
import { configMapPayload } from '../api-volumes.js';
import { apiDataPlugin } from './api-data.js';

export const CONFIGMAP_PLUGIN = 'kubernetes.io~configmap';

export const configMapPlugin = apiDataPlugin({
  name: CONFIGMAP_PLUGIN,
  medium: '',
  canSupport: (volume) => Boolean(volume.configMap),
  payload: (pc, volume) => configMapPayload(pc, volume.configMap!),
});
