export { loadConfig, helpText, CONFIG_API_VERSION, CONFIG_KIND, type LoadResult } from './load.js';
export type { Config, KubeletConfiguration, KubeletFlags } from './types.js';
export { parseDuration } from '../util/duration.js';
export { parseManifestUrlHeaders } from './flag-values.js';
export { renderConfigz, formatDuration } from './configz.js';
export { featureGates, type FeatureGates } from './feature-gates.js';
