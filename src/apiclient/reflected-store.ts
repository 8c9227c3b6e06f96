/**
 * A keyed store kept by one reflector (client-go's informer store, reduced): the list replaces
 * it, watch events add, change and delete entries. An object `admit` refuses never enters it
 * (and a refused update of a known object leaves the last good copy). The RuntimeClass and
 * Service caches and the node informer of API server mode are each one of these.
 */
import { runReflector } from './reflector.js';
import type { ApiClient } from './types.js';

interface Meta {
  metadata?: { resourceVersion?: string };
}

export interface ReflectedStoreOptions<T> {
  client: ApiClient;
  /** Collection path, e.g. /api/v1/services. */
  path: string;
  /** fieldSelector / labelSelector of the list and the watch (e.g. one Node by name). */
  query?: Record<string, string>;
  /** For logs. */
  what: string;
  /** The store key; objects without one are not stored. */
  key(obj: T): string | undefined;
  /** Whether an object may be stored; false drops it (the function logs why). */
  admit(obj: T): boolean;
  /** Called after every list. */
  onList?(): void;
}

export class ReflectedStore<T extends Meta> {
  private readonly abort = new AbortController();
  private readonly items = new Map<string, T>();
  private listed = false;
  /** Callers of waitSynced still waiting. */
  private readonly waiters = new Set<() => void>();

  constructor(private readonly o: ReflectedStoreOptions<T>) {}

  start(): void {
    void runReflector<T>({
      client: this.o.client,
      path: this.o.path,
      query: this.o.query,
      what: this.o.what,
      signal: this.abort.signal,
      onList: (items) => {
        this.items.clear();
        for (const obj of items) this.put(obj);
        this.listed = true;
        this.wake();
        this.o.onList?.();
      },
      onEvent: (type, obj) => {
        if (type !== 'DELETED') return this.put(obj);
        const k = this.o.key(obj);
        if (k !== undefined) this.items.delete(k);
      },
    });
  }

  stop(): void {
    this.abort.abort();
    this.wake();
  }

  /** Whether the first list has arrived. */
  hasSynced(): boolean {
    return this.listed;
  }

  /** Resolves true at the first list, false after `timeoutMs` or at stop, whichever comes first. */
  waitSynced(timeoutMs: number): Promise<boolean> {
    if (this.listed || this.abort.signal.aborted) return Promise.resolve(this.listed);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(this.listed);
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      this.waiters.add(done);
    });
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  private put(obj: T): void {
    if (!this.o.admit(obj)) return;
    const k = this.o.key(obj);
    if (k !== undefined) this.items.set(k, obj);
  }
}
