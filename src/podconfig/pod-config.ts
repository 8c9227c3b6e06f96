/**
 * PodConfig and its podStorage (upstream pkg/kubelet/config/config.go): every source pushes
 * PodUpdates; podStorage.merge keeps one pod map per source, keyed by UID, turns each push into
 * REMOVE / ADD / UPDATE / DELETE / RECONCILE changes, and they are queued in that order on the
 * one update stream.
 */
import type { Logger } from 'pino';
import type { Pod } from '../api/types.js';
import { podUID } from '../api/pod.js';
import { ConfigMirrorAnnotationKey, ConfigSeenAnnotationKey, ConfigSourceAnnotationKey } from '../api/types.js';
import { PodIdentityError } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import type { PodConfig, PodOperation, PodSource, PodUpdate } from './types.js';
import { summarizeProblems, validatePodIdentity } from './validation.js';

/** Annotations the kubelet itself sets; they never make a pod differ (upstream localAnnotations). */
const LOCAL_ANNOTATIONS: readonly string[] = [
  ConfigSourceAnnotationKey,
  ConfigMirrorAnnotationKey,
  ConfigSeenAnnotationKey,
];

export interface PodConfigOptions {
  /** Time source for the kubernetes.io/config.seen annotation. */
  clock?: Clock;
  logger?: Logger;
}

/** Structural equality for JSON-like values; a missing key equals an undefined one; Dates by time. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date
      ? a.getTime() === b.getTime()
      : timeOf(a) !== undefined && timeOf(a) === timeOf(b);
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => deepEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!deepEqual(ao[k], bo[k])) return false;
  return true;
}

/** A Date or an RFC 3339 string as milliseconds, so a Date and its string form compare equal. */
function timeOf(v: unknown): number | undefined {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

/** Empty and absent maps are equal (upstream treats a nil map as empty). */
function mapEqual(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  return deepEqual(a ?? {}, b ?? {});
}

/** isAnnotationMapEqual: compares annotations, ignoring the kubelet's local ones. */
function annotationsEqual(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const strip = (m: Record<string, string> | undefined) =>
    Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !LOCAL_ANNOTATIONS.includes(k)));
  return deepEqual(strip(a), strip(b));
}

/** podsDifferSemantically: spec, labels, non-local annotations, deletion fields. */
function podsDifferSemantically(existing: Pod, ref: Pod): boolean {
  const em = existing.metadata ?? {};
  const rm = ref.metadata ?? {};
  return !(
    deepEqual(existing.spec, ref.spec) &&
    mapEqual(em.labels, rm.labels) &&
    deepEqual(em.deletionTimestamp, rm.deletionTimestamp) &&
    deepEqual(em.deletionGracePeriodSeconds, rm.deletionGracePeriodSeconds) &&
    annotationsEqual(em.annotations, rm.annotations)
  );
}

type Change = 'none' | 'update' | 'reconcile' | 'delete';

/**
 * checkAndUpdatePod: classifies `ref` (the source's new version) against `existing` (what we hold)
 * and returns the pod to store. Where upstream copies only spec/labels/annotations/deletion
 * fields/status into the stored pod, we store the source's whole new object and keep our local
 * annotations (config.seen, …) from the stored one: resourceVersion and friends stay current.
 */
export function checkAndUpdatePod(existing: Pod, ref: Pod): { change: Change; stored: Pod } {
  const stored: Pod = { ...ref, metadata: { ...ref.metadata, annotations: { ...ref.metadata?.annotations } } };
  const annotations = stored.metadata!.annotations!;
  for (const k of LOCAL_ANNOTATIONS) {
    const v = existing.metadata?.annotations?.[k];
    if (v !== undefined) annotations[k] = v;
  }
  if (!podsDifferSemantically(existing, ref)) {
    return { change: deepEqual(existing.status, ref.status) ? 'none' : 'reconcile', stored };
  }
  return { change: ref.metadata?.deletionTimestamp ? 'delete' : 'update', stored };
}

// `p?.`: a broken source may send something that is not an object at all.
const fullName = (p: Pod) => `${p?.metadata?.namespace ?? ''}/${p?.metadata?.name ?? ''}`;

/** The per-source pod maps and the merge. Public so tests can drive one merge at a time. */
export class PodStorage {
  /** source → UID → pod. */
  private readonly pods = new Map<string, Map<string, Pod>>();
  private readonly sourcesSeen = new Set<string>();
  /** Identity refusals already logged, so a source re-sending a bad pod in every SET logs it once. */
  private readonly refusalsLogged = new Set<string>();
  /**
   * Each pod object a source pushed → what merging it stored. A source that re-sends the same
   * object in its next SET (the apiserver source does, for every pod an event did not touch)
   * sent an unchanged pod: no copy, no comparison. Sources never change a pod they pushed.
   */
  private readonly mergedFrom = new WeakMap<Pod, Pod>();
  /**
   * Pod objects whose identity passed validation. For the same reason as mergedFrom: a SET
   * re-sends every unchanged pod, and validating all N on each of N watch events was 5.5 of
   * 91 MiB allocated while 100 API pods were deleted (issue 30).
   */
  private readonly identityValid = new WeakSet<Pod>();
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(opts: PodConfigOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger ?? log('podconfig');
  }

  /** True once `source` has delivered its first SET. */
  seen(source: string): boolean {
    return this.sourcesSeen.has(source);
  }

  /** The pods currently held for `source` (copies). */
  podsOf(source: string): Pod[] {
    return [...(this.pods.get(source)?.values() ?? [])].map((p) => structuredClone(p));
  }

  /**
   * Merge (upstream podStorage.Merge + merge): applies one update from `source` and returns the
   * updates to deliver, in upstream's order: REMOVE, ADD, UPDATE, DELETE, RECONCILE. Each carries
   * `source` and copies of the pods, and empty ones are left out — except that the first SET of
   * a source that adds, updates and deletes nothing yields one empty ADD, which tells the sync
   * loop the source is ready (as upstream).
   */
  merge(source: string, update: Pick<PodUpdate, 'op' | 'pods'>): PodUpdate[] {
    const seenBefore = this.sourcesSeen.has(source);
    let pods = this.pods.get(source) ?? new Map<string, Pod>();
    const out: Record<'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE' | 'RECONCILE', Pod[]> = {
      ADD: [],
      UPDATE: [],
      DELETE: [],
      REMOVE: [],
      RECONCILE: [],
    };

    const updatePods = (newPods: Pod[], oldPods: Map<string, Pod>, target: Map<string, Pod>) => {
      for (const incoming of this.filterInvalidPods(newPods, source)) {
        const uid = podUID(incoming);
        const held = oldPods.get(uid);
        if (held !== undefined && this.mergedFrom.get(incoming) === held) {
          target.set(uid, held); // the very object merged into what we hold: nothing changed
          continue;
        }
        const ref = structuredClone(incoming);
        ref.metadata!.annotations = { ...ref.metadata!.annotations, [ConfigSourceAnnotationKey]: source };
        const existing = oldPods.get(uid);
        if (existing) {
          const { change, stored } = checkAndUpdatePod(existing, ref);
          target.set(uid, stored);
          this.mergedFrom.set(incoming, stored);
          if (change === 'update') out.UPDATE.push(stored);
          else if (change === 'delete') out.DELETE.push(stored);
          else if (change === 'reconcile') out.RECONCILE.push(stored);
          continue;
        }
        // recordFirstSeenTime: when this kubelet first saw the pod; never part of its identity.
        ref.metadata!.annotations[ConfigSeenAnnotationKey] = new Date(this.clock.now()).toISOString();
        target.set(uid, ref);
        this.mergedFrom.set(incoming, ref);
        out.ADD.push(ref);
      }
    };

    switch (update.op) {
      case 'ADD':
      case 'UPDATE':
      case 'DELETE':
        this.logger.debug(
          { source, op: update.op, pods: update.pods.map(fullName) },
          'incremental pod update from source',
        );
        updatePods(update.pods, pods, pods);
        break;
      case 'REMOVE':
        this.logger.debug({ source, pods: update.pods.map(fullName) }, 'removing pods from source');
        for (const p of update.pods) {
          const uid = p.metadata?.uid;
          const existing = uid === undefined ? undefined : pods.get(uid);
          if (uid !== undefined && existing) {
            pods.delete(uid);
            out.REMOVE.push(existing);
          }
        }
        break;
      case 'SET': {
        this.logger.debug({ source, count: update.pods.length }, 'setting pods for source');
        const oldPods = pods;
        pods = new Map();
        updatePods(update.pods, oldPods, pods);
        for (const [uid, existing] of oldPods) if (!pods.has(uid)) out.REMOVE.push(existing);
        this.sourcesSeen.add(source);
        break;
      }
      default:
        this.logger.warn({ source, op: update.op }, 'received an update with an invalid operation; ignored');
        return [];
    }
    this.pods.set(source, pods);

    const result: PodUpdate[] = [];
    const emit = (op: PodOperation, list: Pod[]) =>
      result.push({ op, pods: list.map((p) => structuredClone(p)), source });
    if (out.REMOVE.length) emit('REMOVE', out.REMOVE);
    if (out.ADD.length) emit('ADD', out.ADD);
    if (out.UPDATE.length) emit('UPDATE', out.UPDATE);
    if (out.DELETE.length) emit('DELETE', out.DELETE);
    const firstSet = !seenBefore && this.sourcesSeen.has(source);
    if (firstSet && !out.ADD.length && !out.UPDATE.length && !out.DELETE.length) emit('ADD', []);
    if (out.RECONCILE.length) emit('RECONCILE', out.RECONCILE);
    return result;
  }

  /**
   * filterInvalidPods: drops pods whose identity is not valid (before anything builds a path from
   * it), and later pods reusing a name or UID. The other pods of the source are unaffected.
   */
  private filterInvalidPods(pods: Pod[], source: string): Pod[] {
    const names = new Set<string>();
    const uids = new Set<string>();
    const kept: Pod[] = [];
    for (const p of pods) {
      const name = fullName(p);
      if (!this.identityValid.has(p)) {
        const problems = validatePodIdentity(p);
        if (problems.length > 0) {
          this.logRefusal(source, name, problems);
          continue;
        }
        this.identityValid.add(p);
      }
      const uid = podUID(p);
      if (names.has(name)) {
        this.logger.warn({ source, pod: name }, 'pod name is duplicated within its source; the later one is ignored');
      } else if (uids.has(uid)) {
        this.logger.warn(
          { source, pod: name, uid },
          'pod UID is duplicated within its source; the later one is ignored',
        );
      } else {
        names.add(name);
        uids.add(uid);
        kept.push(p);
      }
    }
    return kept;
  }

  private logRefusal(source: string, pod: string, problems: Parameters<typeof summarizeProblems>[0]): void {
    const { field, message } = summarizeProblems(problems);
    const err = new PodIdentityError(JSON.stringify(pod), field, message);
    const key = `${source}\0${err.message}`;
    if (this.refusalsLogged.has(key)) return;
    if (this.refusalsLogged.size >= 1024) this.refusalsLogged.clear();
    this.refusalsLogged.add(key);
    this.logger.error(
      { source, pod, field, err: err.message, code: err.code },
      'pod refused: its identity is not valid; it is not run and no path is built from it',
    );
  }
}

/** An unbounded FIFO read as an async iterable: nothing is dropped, coalesced or reordered. */
class UpdateQueue {
  private items: PodUpdate[] = [];
  private head = 0;
  private readonly waiters: Array<(r: IteratorResult<PodUpdate>) => void> = [];
  private ended = false;

  push(u: PodUpdate): void {
    if (this.ended) return;
    const w = this.waiters.shift();
    if (w) w({ value: u, done: false });
    else this.items.push(u);
  }

  end(): void {
    this.ended = true;
    for (const w of this.waiters.splice(0)) w({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<PodUpdate>> {
    if (this.head < this.items.length) {
      const value = this.items[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

class PodConfigImpl implements PodConfig {
  private readonly storage: PodStorage;
  private readonly queue = new UpdateQueue();
  private readonly sources = new Map<string, PodSource>();
  private readonly logger: Logger;
  private stopped = false;

  constructor(opts: PodConfigOptions) {
    this.logger = opts.logger ?? log('podconfig');
    this.storage = new PodStorage({ ...opts, logger: this.logger });
  }

  updates(): AsyncIterable<PodUpdate> {
    const queue = this.queue;
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => queue.next(),
        // Breaking out of a for-await does not stop PodConfig; a later updates() resumes.
        return: async () => ({ value: undefined, done: true }),
      }),
    };
  }

  seenAllSources(expected: ReadonlySet<string>): boolean {
    for (const name of this.sources.keys()) {
      if (!expected.has(name) || !this.storage.seen(name)) return false;
    }
    for (const name of expected) if (!this.storage.seen(name)) return false;
    return true;
  }

  addSource(name: string, source: PodSource): void {
    if (name === '') throw new TypeError('a pod source needs a name');
    if (this.sources.has(name)) throw new TypeError(`pod source ${JSON.stringify(name)} is already registered`);
    if (this.stopped) return;
    this.sources.set(name, source);
    this.logger.info({ source: name }, 'adding pod source');
    source.start((update) => this.push(name, update));
  }

  private push(source: string, update: PodUpdate): void {
    if (this.stopped) return;
    for (const u of this.storage.merge(source, update)) this.queue.push(u);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const [name, s] of this.sources) {
      try {
        s.stop();
      } catch (err) {
        this.logger.warn({ source: name, err }, 'stopping pod source failed');
      }
    }
    this.queue.end();
  }
}

/** Creates PodConfig and starts each source; updates queue until read from updates(). */
export function newPodConfig(
  sources: ReadonlyMap<string, PodSource> = new Map(),
  opts: PodConfigOptions = {},
): PodConfig {
  const cfg = new PodConfigImpl(opts);
  for (const [name, s] of sources) cfg.addSource(name, s);
  return cfg;
}
