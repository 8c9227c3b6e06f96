/**
 * The v1 Service informer of API server mode (upstream NewMainKubelet's service informer: one
 * list+watch of /api/v1/services in all namespaces, so the number of watches does not grow with
 * the pods). Container creation reads it for the Service environment variables
 * (src/kuberuntime/service-env.ts); until its first list succeeds, containers of API pods fail
 * with upstream's "services have not yet been read at least once" and are retried.
 *
 * Standalone mode has no informer: upstream's empty lister that has always synced, i.e. no
 * Service variables.
 *
 * A Service the apiserver could not have stored (serviceProblem: a name with '=' or a newline, a
 * port out of range, not an object) is dropped with a warning and never reaches an env var. The
 * cache holds every valid Service of the cluster, as upstream's informer; its size is bounded by
 * the bounded API client's LIST and watch limits (docs/security.md).
 */
import type { ApiClient } from '../apiclient/types.js';
import { ReflectedStore } from '../apiclient/reflected-store.js';
import { serviceProblem, type Service, type ServiceLister } from '../kuberuntime/index.js';
import { log } from '../util/log.js';

export const SERVICES_PATH = '/api/v1/services';

/** namespace/name; undefined for what is not an object (a DELETED event is not admitted first). */
const key = (s: Service | null): string | undefined =>
  typeof s === 'object' && s !== null ? `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}` : undefined;

/** A Service fit for the env vars; a malformed one is logged (at most its first problem) and dropped. */
function admit(s: Service): boolean {
  const problem = serviceProblem(s);
  if (problem === undefined) return true;
  const m = (s as Service | null)?.metadata;
  log('kubelet').warn({ service: `${String(m?.namespace)}/${String(m?.name)}`, problem }, 'Ignoring malformed Service');
  return false;
}

export class ServiceCache implements ServiceLister {
  private readonly store: ReflectedStore<Service>;

  constructor(client: ApiClient) {
    this.store = new ReflectedStore<Service>({ client, path: SERVICES_PATH, what: 'services', key, admit });
  }

  start(): void {
    this.store.start();
  }

  stop(): void {
    this.store.stop();
  }

  hasSynced(): boolean {
    return this.store.hasSynced();
  }

  list(): readonly Service[] {
    return this.store.list();
  }
}
