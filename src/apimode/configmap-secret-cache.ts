/**
 * The watch-based ConfigMap/Secret cache and the token manager of API server mode (upstream
 * pkg/kubelet/util/manager watch-based strategy + pkg/kubelet/token). The first lookup of an
 * object starts a reflector on it (fieldSelector metadata.name=<name> in its namespace) and
 * answers "not synced yet"; from then on lookups read the cache and every change calls
 * `onChange`, which resyncs the pods that use it so that mounted files follow edits. Objects not
 * looked up for `idleMs` stop being watched.
 *
 * Every watch holds one apiserver connection for minutes, so the cache watches at most
 * API_LIMITS.objectCacheWatches objects individually; the objects past that are polled instead:
 * a GET when a lookup finds the copy older than 60 s (upstream's two change-detection
 * strategies, "Watch" for the first ones and "Cache" — GET with a TTL — for the rest). Polled
 * objects call `onChange` too when a GET brings a new resourceVersion.
 *
 * Service account tokens come from the TokenRequest API (serviceaccounts/<sa>/token, bound to
 * the pod) and are requested again once 80 % of their lifetime has passed, as upstream.
 */
import type { Pod } from '../api/types.js';
import { podNamespace, podUID } from '../api/pod.js';
import type { ApiClient } from '../apiclient/types.js';
import { runReflector } from '../apiclient/reflector.js';
import { API_LIMITS } from '../apiclient/limits.js';
import type { PodObjectSource } from '../kuberuntime/types.js';
import type { PodSource, PodUpdate } from '../podconfig/types.js';
import { isTerminalPhase } from '../api/pod.js';
import { ApiError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';

type Kind = 'configmaps' | 'secrets';
type Obj = {
  metadata?: { name?: string; resourceVersion?: string };
  /** A Secret's type (the keyring reads docker config secrets by type, as upstream). */
  type?: string;
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
};

interface Entry {
  /** undefined = not synced; null = absent. */
  obj: Obj | null | undefined;
  lastUsed: number;
  /** A watched entry: stops its reflector. Absent: a polled entry. */
  abort?: AbortController;
  /** Polled entries: when the copy was fetched, and whether a GET is under way. */
  fetchedAt?: number;
  fetching?: boolean;
}

interface Token {
  token?: string;
  refreshAt: number;
  pending: boolean;
}

/** What tells two copies apart: the resourceVersion, or not-synced / absent. */
const version = (o: Obj | null | undefined) =>
  o === undefined ? '<unsynced>' : o === null ? '<absent>' : (o.metadata?.resourceVersion ?? '');

export interface ObjectCacheOptions {
  client: ApiClient;
  /** A watched object changed (or a token was refreshed: kind 'token', name = pod UID). */
  onChange?: (kind: Kind | 'token', namespace: string, name: string) => void;
  idleMs?: number;
  /** Individual watches before falling back to polling (default API_LIMITS.objectCacheWatches). */
  maxWatches?: number;
  /** Age of a polled copy before the next lookup GETs it again (default API_LIMITS.objectCacheTtlMs). */
  ttlMs?: number;
}

export class ObjectCache implements PodObjectSource {
  private readonly entries = new Map<string, Entry>();
  private readonly tokens = new Map<string, Token>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly opts: ObjectCacheOptions) {
    this.timer = setInterval(() => this.expire(), 60_000);
    this.timer.unref();
  }

  configMap(namespace: string, name: string): Obj | null | undefined {
    return this.lookup('configmaps', namespace, name);
  }

  secret(namespace: string, name: string): Obj | null | undefined {
    return this.lookup('secrets', namespace, name);
  }

  stop(): void {
    clearInterval(this.timer);
    for (const e of this.entries.values()) e.abort?.abort();
    this.entries.clear();
  }

  /**
   * upstream's RegisterPod (the watch-based managers, called when the pod manager adds a pod):
   * the ConfigMaps and Secrets of each pod are looked up as soon as its source delivers it, so
   * their watches start before the pod's first sync, which then finds them synced instead of
   * failing its mount with "not synced yet" (an event, a status write and a retry per pod).
   */
  registerPods(pods: readonly Pod[]): void {
    for (const pod of pods) {
      if (isTerminalPhase(pod.status?.phase)) continue;
      const ns = podNamespace(pod);
      const refs = podObjectRefs(pod);
      for (const name of refs.configMaps) this.lookup('configmaps', ns, name);
      for (const name of refs.secrets) this.lookup('secrets', ns, name);
    }
  }

  /** How many objects are watched individually (the rest are polled). */
  get watching(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.abort) n++;
    return n;
  }

  private lookup(kind: Kind, namespace: string, name: string): Obj | null | undefined {
    const key = `${kind}/${namespace}/${name}`;
    let e = this.entries.get(key);
    if (!e) {
      e = { obj: undefined, lastUsed: Date.now() };
      this.entries.set(key, e);
      if (this.watching < (this.opts.maxWatches ?? API_LIMITS.objectCacheWatches)) this.watch(e, kind, namespace, name);
    }
    if (!e.abort) this.poll(e, kind, namespace, name);
    e.lastUsed = Date.now();
    return e.obj;
  }

  private watch(entry: Entry, kind: Kind, namespace: string, name: string): void {
    entry.abort = new AbortController();
    const changed = () => this.opts.onChange?.(kind, namespace, name);
    void runReflector<Obj>({
      client: this.opts.client,
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/${kind}`,
      query: { fieldSelector: `metadata.name=${name}` },
      what: `${kind}/${namespace}/${name}`,
      signal: entry.abort.signal,
      onList: (items) => {
        entry.obj = items[0] ?? null;
        changed();
      },
      onEvent: (type, obj) => {
        entry.obj = type === 'DELETED' ? null : obj;
        changed();
      },
    });
  }

  /** The "Cache" strategy: GET when the copy is older than the TTL; a failed GET keeps the copy. */
  private poll(entry: Entry, kind: Kind, namespace: string, name: string): void {
    if (
      entry.fetching ||
      Date.now() - (entry.fetchedAt ?? -Infinity) < (this.opts.ttlMs ?? API_LIMITS.objectCacheTtlMs)
    )
      return;
    entry.fetching = true;
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/${kind}/${encodeURIComponent(name)}`;
    void this.opts.client
      .request<Obj>({ method: 'GET', path })
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.statusCode === 404) return null;
        log('kubelet').warn(
          { object: `${kind}/${namespace}/${name}`, err: errorMessage(err) },
          'Object GET failed; keeping the cached copy',
        );
        return entry.obj;
      })
      .then((obj) => {
        const before = entry.obj;
        entry.obj = obj;
        entry.fetchedAt = Date.now();
        if (version(before) !== version(obj)) this.opts.onChange?.(kind, namespace, name);
      })
      .finally(() => (entry.fetching = false));
  }

  private expire(): void {
    const idle = this.opts.idleMs ?? 10 * 60_000;
    for (const [key, e] of this.entries) {
      if (Date.now() - e.lastUsed > idle) {
        e.abort?.abort();
        this.entries.delete(key);
      }
    }
  }

  serviceAccountToken(pod: Pod, audience: string | undefined, expirationSeconds: number): string | undefined {
    const ns = podNamespace(pod);
    const sa = pod.spec?.serviceAccountName || 'default';
    const uid = podUID(pod);
    const key = JSON.stringify([ns, sa, uid, audience ?? '', expirationSeconds]);
    let t = this.tokens.get(key);
    if (!t) {
      t = { refreshAt: 0, pending: false };
      this.tokens.set(key, t);
    }
    if (!t.pending && Date.now() >= t.refreshAt) {
      t.pending = true;
      const entry = t;
      const body = {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          audiences: audience ? [audience] : [],
          expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name, uid },
        },
      };
      void this.opts.client
        .request<{ status: { token: string; expirationTimestamp: string } }>({
          method: 'POST',
          path: `/api/v1/namespaces/${encodeURIComponent(ns)}/serviceaccounts/${encodeURIComponent(sa)}/token`,
          body,
        })
        .then((r) => {
          const issued = Date.now();
          const expires = Date.parse(r.status.expirationTimestamp) || issued + expirationSeconds * 1000;
          entry.token = r.status.token;
          entry.refreshAt = issued + 0.8 * (expires - issued);
          this.opts.onChange?.('token', ns, uid);
        })
        .catch((err: unknown) => {
          entry.refreshAt = Date.now() + 5000;
          log('kubelet').warn(
            { pod: `${ns}/${pod.metadata?.name}`, serviceAccount: sa, err: errorMessage(err) },
            'Service account token request failed; will retry',
          );
        })
        .finally(() => (entry.pending = false));
    }
    return t.token;
  }

  /** Forget the tokens of pods no longer here. */
  forgetTokens(keepUids: ReadonlySet<string>): void {
    for (const [key] of this.tokens) if (!keepUids.has((JSON.parse(key) as string[])[2]!)) this.tokens.delete(key);
  }
}

/** `source` with every pod it delivers registered with `objects` first (ObjectCache.registerPods). */
export function withObjectRegistration(source: PodSource, objects: Pick<ObjectCache, 'registerPods'>): PodSource {
  return {
    start: (push) =>
      source.start((u: PodUpdate) => {
        if (u.op !== 'REMOVE') objects.registerPods(u.pods);
        push(u);
      }),
    stop: () => source.stop(),
  };
}

/** The names of the configMaps and secrets a pod uses (volumes, projected sources, env, envFrom). */
export function podObjectRefs(pod: Pod): { configMaps: Set<string>; secrets: Set<string>; tokens: boolean } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  let tokens = false;
  for (const v of pod.spec?.volumes ?? []) {
    if (v.configMap?.name) configMaps.add(v.configMap.name);
    if (v.secret?.secretName) secrets.add(v.secret.secretName);
    for (const s of v.projected?.sources ?? []) {
      if (s.configMap?.name) configMaps.add(s.configMap.name);
      if (s.secret?.name) secrets.add(s.secret.name);
      if (s.serviceAccountToken) tokens = true;
    }
  }
  // upstream VisitPodSecretNames: the pull secrets are the pod's secrets too.
  for (const s of pod.spec?.imagePullSecrets ?? []) if (s.name) secrets.add(s.name);
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const e of c.env ?? []) {
      if (e.valueFrom?.configMapKeyRef?.name) configMaps.add(e.valueFrom.configMapKeyRef.name);
      if (e.valueFrom?.secretKeyRef?.name) secrets.add(e.valueFrom.secretKeyRef.name);
    }
    for (const f of c.envFrom ?? []) {
      if (f.configMapRef?.name) configMaps.add(f.configMapRef.name);
      if (f.secretRef?.name) secrets.add(f.secretRef.name);
    }
  }
  return { configMaps, secrets, tokens };
}
