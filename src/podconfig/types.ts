/**
 * PodConfig: the merge of every pod source (static pod files, manifest URL, apiserver) into one
 * ordered stream of incremental updates, as upstream's pkg/kubelet/config. Interfaces only.
 */
import type { Pod } from '../api/types.js';

/**
 * Upstream's kubetypes.PodOperation. Sources send SET (their complete pod list) or incremental
 * ADD/UPDATE/DELETE/REMOVE; PodConfig emits ADD/UPDATE/DELETE/REMOVE/RECONCILE.
 *  - ADD: pods new to this source.
 *  - UPDATE: spec, labels, annotations or deletion fields changed.
 *  - DELETE: a graceful delete (deletionTimestamp is set); handled like UPDATE by the kubelet.
 *  - REMOVE: the pod left its source; stop it now.
 *  - RECONCILE: only the status the source reports changed.
 */
export type PodOperation = 'SET' | 'ADD' | 'UPDATE' | 'REMOVE' | 'DELETE' | 'RECONCILE';

/** Upstream source names (kubetypes.FileSource, HTTPSource, ApiserverSource). */
export const FileSource = 'file';
export const HTTPSource = 'http';
export const ApiserverSource = 'api';

export interface PodUpdate {
  op: PodOperation;
  pods: Pod[];
  /** The source name ('file', 'http', 'api'). */
  source: string;
}

/** The merged, ordered view of all sources. */
export interface PodConfig {
  /**
   * The one ordered stream of updates (single consumer). Nothing is dropped or reordered while
   * the consumer is slow. The stream ends after stop(), once what was queued has been read.
   */
  updates(): AsyncIterable<PodUpdate>;
  /**
   * Upstream's SeenAllSources: true when every source in `expected` and every configured source
   * has delivered its first SET, and every configured source is in `expected`. Pass the set of
   * sources the sync loop has received updates from (upstream's sourcesReady), or the names of
   * the sources configured.
   */
  seenAllSources(expected: ReadonlySet<string>): boolean;
  /** Registers and starts another source (for example the apiserver source after node sync). */
  addSource(name: string, source: PodSource): void;
  /** Stops every source and ends the stream. Idempotent. */
  stop(): void;
}

/**
 * A producer of pod updates. `start` is called once with the function to deliver updates; the
 * `source` field of what is pushed is overwritten with the name the source was registered under.
 */
export interface PodSource {
  start(push: (update: PodUpdate) => void): void;
  stop(): void;
}
