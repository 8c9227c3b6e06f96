export type {
  CriEventsState,
  PodLifecycleEvent,
  PodLifecycleEventGenerator,
  PodLifecycleEventType,
  PodStatusCache,
  CachedPodStatus,
} from './types.js';
export { createGenericPLEG, RELIST_THRESHOLD_MS, type GenericPlegOptions, type RawRelistSource } from './generic.js';
export { createPodStatusCache } from './cache.js';
export { CgroupExitWatcher, findUnifiedRoot } from './cgroup-exit-watcher.js';
export { criRawSource, type RawListingRuntime } from './raw-source.js';
export { CriEventTrigger, type SubscribeContainerEvents } from './cri-events.js';
