/** secret (upstream pkg/volume/secret): on a tmpfs of its own, so secrets never reach the disk. */
import { secretPayload } from '../api-volumes.js';
import { apiDataPlugin } from './api-data.js';

export const SECRET_PLUGIN = 'kubernetes.io~secret';

export const secretPlugin = apiDataPlugin({
  name: SECRET_PLUGIN,
  medium: 'Memory',
  canSupport: (volume) => Boolean(volume.secret),
  payload: (pc, volume) => secretPayload(pc, volume.secret!),
});
