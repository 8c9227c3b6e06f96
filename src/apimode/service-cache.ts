/**
 * The v1 Service informer of API server mode (upstream NewMainKubelet's service informer: one
 * list+watch of /api/v1/services in all namespaces, so the number of watches does not grow with
 * the pods). Container creation reads it for the Service environment variables
 * (src/kuberuntime/service-env.ts); until its first list succeeds, containers of API pods fail
 * with upstream's "services have not yet been read at least once" and are retried.
 *
 * Standalone mode has no informer: upstream's empty lister that has always synced, i.e. no
 * Service variables.
 */
import type { ApiClient } from '../apiclient/types.js';
import { runReflector } from '../apiclient/reflector.js';
import type { Service, ServiceLister } from '../kuberuntime/index.js';

export const SERVICES_PATH = '/api/v1/services';

const key = (s: Service) => `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`;

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
        for (const s of items) this.services.set(key(s), s);
        this.listed = true;
      },
      onEvent: (type, s) => {
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
