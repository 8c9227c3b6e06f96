/**
 * projected (upstream pkg/volume/projected): configMap, secret, downwardAPI and
 * serviceAccountToken sources merged in one directory, on a tmpfs; the token's mode and owner
 * follow the pod's fsUser / fsGroup.
 */
import { projectedPayload } from '../api-volumes.js';
import { apiDataPlugin } from './api-data.js';

export const PROJECTED_PLUGIN = 'kubernetes.io~projected';

export const projectedPlugin = apiDataPlugin({
  name: PROJECTED_PLUGIN,
  medium: 'Memory',
  canSupport: (volume) => Boolean(volume.projected),
  payload: (pc, volume) => projectedPayload(pc, volume.projected!),
});
