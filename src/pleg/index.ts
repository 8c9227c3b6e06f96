export type { PodLifecycleEvent, PodLifecycleEventGenerator, PodLifecycleEventType, PodStatusCache, CachedPodStatus } from './types.js';
export { createGenericPLEG, RELIST_THRESHOLD_MS, type GenericPlegOptions } from './generic.js';
export { createPodStatusCache } from './cache.js';
export { generateEvents, type PlegContainerState } from './events.js';
