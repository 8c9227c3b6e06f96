/**
 * The in-memory object store behind the test apiserver: one resourceVersion counter for all
 * objects (as etcd's revision), a bounded history of changes for watches that resume from a
 * resourceVersion, and compaction (a watch from before the oldest kept change gets 410 Gone).
 * The store outlives a server: a test stops the server and starts a new one on the same store
 * to simulate an apiserver outage without losing state.
 */
import { randomUUID } from 'node:crypto';

export type Obj = Record<string, unknown> & { metadata?: Record<string, unknown> };
export type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change {
  rv: number;
  type: WatchType;
  plural: string;
  object: Obj;
}

type Listener = (c: Change) => void;

export class ApiStore {
  private readonly objects = new Map<string, Obj>();
  private history: Change[] = [];
  private readonly listeners = new Set<Listener>();
  /** Highest resourceVersion whose change is no longer in history (a watch from below is 410). */
  compactedRv = 0;
  rv = 1;

  constructor(private readonly historyLimit = 2000) {}

  static key(plural: string, namespace: string | undefined, name: string): string {
    return `${plural}/${namespace ?? ''}/${name}`;
  }

  get(plural: string, namespace: string | undefined, name: string): Obj | undefined {
    const o = this.objects.get(ApiStore.key(plural, namespace, name));
    return o ? structuredClone(o) : undefined;
  }

  list(plural: string, namespace?: string): Obj[] {
    const prefix = namespace === undefined ? `${plural}/` : `${plural}/${namespace}/`;
    const out: Obj[] = [];
    for (const [k, o] of this.objects) if (k.startsWith(prefix)) out.push(structuredClone(o));
    return out;
  }

  /** Stores `obj` (new or replacing) with a fresh resourceVersion; returns the stored copy. */
  put(plural: string, obj: Obj, type: WatchType): Obj {
    const meta = (obj.metadata ??= {});
    if (!meta.uid) meta.uid = randomUUID();
    if (!meta.creationTimestamp) meta.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    meta.resourceVersion = String(++this.rv);
    this.objects.set(
      ApiStore.key(plural, meta.namespace as string | undefined, meta.name as string),
      structuredClone(obj),
    );
    this.record({ rv: this.rv, type, plural, object: structuredClone(obj) });
    return obj;
  }

  remove(plural: string, namespace: string | undefined, name: string): Obj | undefined {
    const key = ApiStore.key(plural, namespace, name);
    const o = this.objects.get(key);
    if (!o) return undefined;
    this.objects.delete(key);
    o.metadata!.resourceVersion = String(++this.rv);
    this.record({ rv: this.rv, type: 'DELETED', plural, object: structuredClone(o) });
    return structuredClone(o);
  }

  /** Changes after `rv` (undefined when some of them were compacted away: 410 Gone). */
  since(rv: number): Change[] | undefined {
    if (rv < this.compactedRv) return undefined;
    return this.history.filter((c) => c.rv > rv);
  }

  /** Forget all history (tests: forces the next resumed watch into 410 Gone). */
  compact(): void {
    this.compactedRv = this.rv;
    this.history = [];
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private record(c: Change): void {
    this.history.push(c);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRv = dropped[dropped.length - 1]!.rv;
    }
    for (const l of this.listeners) l(c);
  }
}
