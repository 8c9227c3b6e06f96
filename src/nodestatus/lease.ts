/**
 * The node lease (upstream pkg/kubelet/nodelease + component-helpers lease controller): a
 * coordination.k8s.io/v1 Lease named after the node in kube-node-lease, holder = node name,
 * leaseDurationSeconds, renewed every quarter of the duration through the heartbeat client.
 * The lease is created when missing and carries an owner reference to the Node once its UID is
 * known. A failed renewal retries with back-off (200 ms doubling to 7 s) until it works.
 */
import type { V1Lease } from '@kubernetes/client-node';
import { ApiError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, sleep, type Clock } from '../util/clock.js';
import type { LeaseController, LeaseDeps } from './types.js';

export const LEASE_NAMESPACE = 'kube-node-lease';
const RETRY_MAX_MS = 7000;

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

class NodeLease implements LeaseController {
  private readonly clock: Clock;
  private readonly abort = new AbortController();
  private readonly path: string;
  private lease: V1Lease | undefined;

  constructor(private readonly deps: LeaseDeps) {
    this.clock = deps.clock ?? realClock;
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`;
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.abort.abort();
  }

  private async run(): Promise<void> {
    const interval = this.deps.leaseDurationSeconds * 250;
    while (!this.abort.signal.aborted) {
      let backoff = 200;
      for (;;) {
        try {
          await this.renew();
          break;
        } catch (err) {
          if (this.abort.signal.aborted) return;
          log('nodestatus').warn(
            { err: errorMessage(err), retryInMs: backoff },
            'Failed to renew the node lease, will retry',
          );
          this.lease = undefined;
          this.deps.heartbeat.resetConnections();
          await sleep(backoff, this.abort.signal);
          backoff = Math.min(backoff * 2, RETRY_MAX_MS);
        }
      }
      await sleep(interval, this.abort.signal);
    }
  }

  private spec(): V1Lease['spec'] {
    return {
      holderIdentity: this.deps.nodeName,
      leaseDurationSeconds: this.deps.leaseDurationSeconds,
      renewTime: microTime(this.clock.now()) as unknown as Date,
    };
  }

  private ownerReferences(): NonNullable<V1Lease['metadata']>['ownerReferences'] {
    const uid = this.deps.nodeUID();
    return uid ? [{ apiVersion: 'v1', kind: 'Node', name: this.deps.nodeName, uid }] : undefined;
  }

  async renew(): Promise<void> {
    const { heartbeat, nodeName } = this.deps;
    if (!this.lease) {
      try {
        this.lease = await heartbeat.request<V1Lease>({
          method: 'GET',
          path: `${this.path}/${encodeURIComponent(nodeName)}`,
        });
      } catch (err) {
        if (!(err instanceof ApiError && err.statusCode === 404)) throw err;
        const owners = this.ownerReferences();
        this.lease = await heartbeat.request<V1Lease>({
          method: 'POST',
          path: this.path,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: nodeName, namespace: LEASE_NAMESPACE, ...(owners ? { ownerReferences: owners } : {}) },
            spec: this.spec(),
          },
        });
        return;
      }
    }
    const metadata = { ...this.lease.metadata };
    if (!metadata.ownerReferences?.length) {
      const owners = this.ownerReferences();
      if (owners) metadata.ownerReferences = owners;
    }
    // PUT with the resourceVersion we read: a 409 (someone else wrote it) re-reads next time.
    this.lease = await heartbeat.request<V1Lease>({
      method: 'PUT',
      path: `${this.path}/${encodeURIComponent(nodeName)}`,
      body: { ...this.lease, metadata, spec: { ...this.lease.spec, ...this.spec() } },
    });
  }
}

export function newLeaseController(deps: LeaseDeps): LeaseController {
  return new NodeLease(deps);
}
