/**
 * podconfig: pod sources and their merge into one ordered update stream.
 *
 *   const podConfig = createPodConfig(new Map([['file', createFileSource({ path, nodeName, createFsWatcher })]]));
 *   for await (const u of podConfig.updates()) …   // REMOVE / ADD / UPDATE / DELETE / RECONCILE
 */
import type { PodConfig, PodSource } from './types.js';
import { newPodConfig, type PodConfigOptions } from './pod-config.js';
import { newSourceFile, type FileSourceOptions, type StaticPodFileSource } from './file-source.js';
import { newSourceURL, type UrlSourceOptions, type ManifestUrlSource } from './url-source.js';

export type { PodConfig, PodSource, PodUpdate, PodOperation } from './types.js';
export { FileSource, HTTPSource, ApiserverSource } from './types.js';
export type { PodConfigOptions } from './pod-config.js';
export type { FileSourceOptions, StaticPodFileSource } from './file-source.js';
export { DefaultFileCheckFrequencyMs, isIgnoredManifestName } from './file-source.js';
export type { UrlSourceOptions, ManifestUrlSource } from './url-source.js';
export { DefaultHttpCheckFrequencyMs, DefaultMaxManifestBytes } from './url-source.js';
export {
  decodeSinglePod,
  decodePodOrPodList,
  decodeStaticPodManifest,
  decodeUrlManifest,
  parseManifestText,
} from './manifest.js';
export { applyStaticPodIdentity, generatePodName, staticPodUID } from './static-pod.js';
export { setPodDefaults, defaultImagePullPolicy } from './defaults.js';
export { validatePod, isDns1123Label, isDns1123Subdomain, type Problem } from './validation.js';

/** Creates PodConfig over `sources` (name → source) and starts them. */
export function createPodConfig(
  sources: ReadonlyMap<string, PodSource> = new Map(),
  opts: PodConfigOptions = {},
): PodConfig {
  return newPodConfig(sources, opts);
}

/** Creates the static pod file source (register it under the name 'file'). */
export function createFileSource(opts: FileSourceOptions): StaticPodFileSource {
  return newSourceFile(opts);
}

/** Creates the manifest URL source (register it under the name 'http'). */
export function createUrlSource(opts: UrlSourceOptions): ManifestUrlSource {
  return newSourceURL(opts);
}
export {
  newApiserverSource as createApiserverSource,
  isMirrorPod,
  type ApiserverSourceOptions,
} from './apiserver-source.js';
