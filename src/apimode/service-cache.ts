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
import { runReflector } from '../apiclient/reflector.js';
import { serviceProblem, type Service, type ServiceLister } from '../kuberuntime/index.js';
import { log } from '../util/log.js';

export const SERVICES_PATH = '/api/v1/services';

const key = (s: Service) => `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`;

/** A Service fit for the env vars; a malformed one is logged (at most its first problem) and dropped. */
function admit(s: Service): boolean {
  const problem = serviceProblem(s);
  if (problem === undefined) return true;
  const m = (s as Service | null)?.metadata;
  log('kubelet').warn({ service: `${String(m?.namespace)}/${String(m?.name)}`, problem }, 'Ignoring malformed Service');
  return false;
}

export class ServiceCache implements ServiceLister {
  private readonly abort = new AbortController();
  private readonly services = new Map<string, Service>();
  private listed = false;

  constructor(private readonly client: ApiClient) {}

  start(): void {
    void runReflector<Service>({
      client: this.client,
      path: SERVICES_PATH,
      what: 'services',
      signal: this.abort.signal,
      onList: (items) => {
        this.services.clear();
        for (const s of items) if (admit(s)) this.services.set(key(s), s);
        this.listed = true;
      },
      onEvent: (type, s) => {
        if (!admit(s)) return;
        if (type === 'DELETED') this.services.delete(key(s));
        else this.services.set(key(s), s);
      },
    });
  }

  stop(): void {
    this.abort.abort();
  }

  hasSynced(): boolean {
    return this.listed;
  }

  list(): readonly Service[] {
    return [...this.services.values()];
  }
}
