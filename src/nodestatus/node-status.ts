/**
 * Registration and the node status loop (upstream registerWithAPIServer + syncNodeStatus).
 *
 * Registration POSTs the initial Node and retries with back-off (100 ms doubling to 7 s); an
 * existing Node (AlreadyExists) is adopted and its default labels reconciled. The loop runs every
 * nodeStatusUpdateFrequency with up to 10 % jitter through the heartbeat client: it reads the
 * Node (the node informer's copy; a GET after a failure, as upstream), computes the status, and patches nodes/<name>/status only when the status changed or
 * nodeStatusReportFrequency has passed since the last report. While not Ready it looks again
 * every second so that the first Ready status goes out at once (upstream fastStatusUpdateOnce).
 * A Node deleted behind our back (404) is registered again.
 */
import { ApiError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, sleep, type Clock } from '../util/clock.js';
import { apiTime } from '../util/time.js';
import {
  CONTROLLER_MANAGED_ATTACH_DETACH,
  initialNode,
  nodeStatus,
  statusFingerprint,
  statusPatch,
  zeroedExtendedResources,
  type NodeStatusInput,
} from './node-object.js';
import type { ApiNode, ContainerImage, NodeStatusDeps, NodeStatusManager } from './types.js';

const REGISTER_BACKOFF_MAX_MS = 7000;
const NOT_READY_RECHECK_MS = 1000;
/** The shortest gap between status passes that poke() can cause. */
const POKE_MIN_GAP_MS = 1000;

class NodeStatusLoop implements NodeStatusManager {
  private readonly clock: Clock;
  private readonly abort = new AbortController();
  private readonly path: string;
  private uid: string | undefined;
  private isRegistered = false;
  private registeredResolve!: () => void;
  private readonly registeredPromise = new Promise<void>((r) => (this.registeredResolve = r));
  private lastReport = 0;
  private lastFingerprint = '';
  private lastReady: string | undefined;
  private images: ContainerImage[] = [];
  private imagesAt = 0;
  private attached: ReadonlySet<string> = new Set();
  /** The next update GETs the Node rather than reading the informer's copy (after a failure). */
  private readFromServer = false;
  /** Aborted by poke(): ends the current wait between passes. */
  private wake: AbortController | undefined;
  /** A poke not yet served (it came during a pass). */
  private poked = false;

  constructor(private readonly deps: NodeStatusDeps) {
    this.clock = deps.clock ?? realClock;
    this.path = `/api/v1/nodes/${encodeURIComponent(deps.node.name)}`;
  }

  start(): void {
    void this.run();
  }

  poke(): void {
    this.poked = true;
    this.wake?.abort();
  }

  stop(): void {
    this.abort.abort();
  }

  registered(): Promise<void> {
    return this.registeredPromise;
  }

  nodeUID(): string | undefined {
    return this.uid;
  }

  volumesAttached(): ReadonlySet<string> {
    return this.attached;
  }

  /** Keeps what a read or written Node says (its UID, the volumes attached to it). */
  private saw(node: ApiNode | undefined): void {
    if (!node) return;
    this.uid = node.metadata?.uid ?? this.uid;
    // A status-less answer (a PATCH a proxy cut short) says nothing about attachments: keep them.
    if (node.status) this.attached = attachedNames(node.status.volumesAttached);
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      if (!this.isRegistered) await this.register();
      if (signal.aborted) return;
      try {
        await this.updateNodeStatus();
      } catch (err) {
        if (err instanceof ApiError && err.statusCode === 404) {
          log('nodestatus').warn(
            { node: this.deps.node.name },
            'Node not found on the API server; registering it again',
          );
          this.isRegistered = false;
          continue;
        }
        log('nodestatus').warn({ err: errorMessage(err) }, 'Error updating node status, will retry');
        this.deps.heartbeat.resetConnections();
      }
      const ready = this.lastReady === 'True';
      const period = ready
        ? this.deps.updateFrequencyMs * (1 + Math.random() * 0.1)
        : Math.min(NOT_READY_RECHECK_MS, this.deps.updateFrequencyMs);
      await this.pause(period);
    }
  }

  /**
   * The wait between passes: ends early on stop() or poke(), but not within POKE_MIN_GAP_MS of
   * the last pass, so a plugin flipping health cannot flood the API server.
   */
  private async pause(ms: number): Promise<void> {
    const start = this.clock.now();
    const early = this.poked || (await this.wakeableSleep(ms));
    this.poked = false;
    const left = Math.min(POKE_MIN_GAP_MS, ms) - (this.clock.now() - start);
    if (early && left > 0) await sleep(left, this.abort.signal);
  }

  /** True when poke() ended it. */
  private async wakeableSleep(ms: number): Promise<boolean> {
    const wake = new AbortController();
    this.wake = wake;
    const onStop = () => wake.abort();
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    try {
      await sleep(ms, wake.signal);
    } finally {
      this.abort.signal.removeEventListener('abort', onStop);
      this.wake = undefined;
    }
    return this.poked && !this.abort.signal.aborted;
  }

  private async input(previous: ApiNode | undefined): Promise<NodeStatusInput> {
    const runtimeVersion = await this.deps.runtimeVersion().catch(() => undefined);
    // The image list changes rarely and costs a CRI call: refresh it at most every 30 s.
    if (this.clock.now() - this.imagesAt > 30_000) {
      this.images = await this.deps.images().catch(() => this.images);
      this.imagesAt = this.clock.now();
    }
    return { deps: this.deps, runtimeVersion, images: this.images, previous, now: apiTime(this.clock.now()) };
  }

  /** upstream registerWithAPIServer: create, or adopt the existing Node; retried until it works. */
  private async register(): Promise<void> {
    let backoff = 100;
    const { client, node } = this.deps;
    while (!this.abort.signal.aborted) {
      try {
        let existing: ApiNode;
        if (this.deps.registerNode) {
          try {
            existing = await client.request<ApiNode>({
              method: 'POST',
              path: '/api/v1/nodes',
              body: initialNode(await this.input(undefined)),
            });
            log('nodestatus').info({ node: node.name }, 'Successfully registered node');
            this.deps.recorder?.event(
              { kind: 'Node', name: node.name, uid: node.name },
              'Normal',
              'RegisteredNode',
              `Node ${node.name} event: Registered Node ${node.name} in Controller`,
            );
          } catch (err) {
            if (!(err instanceof ApiError && err.statusCode === 409)) throw err;
            existing = await this.reconcileExisting();
          }
        } else {
          existing = await client.request<ApiNode>({ method: 'GET', path: this.path });
        }
        this.saw(existing);
        this.isRegistered = true;
        this.lastFingerprint = '';
        this.registeredResolve();
        return;
      } catch (err) {
        log('nodestatus').warn(
          { node: node.name, err: errorMessage(err), retryInMs: backoff },
          'Unable to register node with API server',
        );
        await sleep(backoff, this.abort.signal);
        backoff = Math.min(backoff * 2, REGISTER_BACKOFF_MAX_MS);
      }
    }
  }

  /**
   * The Node exists already (a restart): keep it, and put back the default labels we own and the
   * controller-managed-attach-detach annotation (upstream reconcileCMADAnnotationWithExistingNode).
   */
  private async reconcileExisting(): Promise<ApiNode> {
    const existing = await this.deps.client.request<ApiNode>({ method: 'GET', path: this.path });
    const labels = existing.metadata?.labels ?? {};
    const missing = Object.entries(this.deps.node.labels).filter(([k, v]) => labels[k] !== v);
    const cmad = existing.metadata?.annotations?.[CONTROLLER_MANAGED_ATTACH_DETACH] === 'true';
    await this.zeroExtendedResources(existing);
    if (missing.length === 0 && cmad) return existing;
    const metadata = {
      ...(missing.length > 0 ? { labels: Object.fromEntries(missing) } : {}),
      ...(cmad ? {} : { annotations: { [CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' } }),
    };
    return this.deps.client.request<ApiNode>({
      method: 'PATCH',
      path: this.path,
      contentType: 'application/merge-patch+json',
      body: { metadata },
    });
  }

  /** upstream reconcileExtendedResource, when the device checkpoint was missing at start. */
  private async zeroExtendedResources(existing: ApiNode): Promise<void> {
    const zeroed = this.deps.resetExtendedResources ? zeroedExtendedResources(existing) : undefined;
    if (!zeroed) return;
    log('nodestatus').info(
      { node: this.deps.node.name, resources: Object.keys(zeroed.capacity ?? {}) },
      'Zero out resource capacity in existing node',
    );
    await this.deps.client.request<ApiNode>({
      method: 'PATCH',
      path: `${this.path}/status`,
      contentType: 'application/strategic-merge-patch+json',
      body: { status: zeroed },
    });
  }

  /**
   * The Node this update starts from: the informer's copy, as upstream's first try (in a large
   * cluster the Node GETs every 10 s were most of the apiserver's load); the apiserver's own
   * after a failed update or when the informer has none (not synced, deleted).
   */
  private async currentNode(): Promise<ApiNode> {
    const cached = this.readFromServer ? undefined : this.deps.cachedNode?.();
    this.readFromServer = true; // until this update succeeds
    return cached ?? (await this.deps.heartbeat.request<ApiNode>({ method: 'GET', path: this.path }));
  }

  async updateNodeStatus(): Promise<void> {
    const { heartbeat, node } = this.deps;
    const current = await this.currentNode();
    this.saw(current);
    const status = nodeStatus(await this.input(current));
    const fingerprint = statusFingerprint(status);
    const due = this.clock.now() - this.lastReport >= this.deps.reportFrequencyMs;
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    if (fingerprint === this.lastFingerprint && !due) {
      this.readFromServer = false;
      return;
    }
    this.saw(
      await heartbeat.request<ApiNode>({
        method: 'PATCH',
        path: `${this.path}/status`,
        contentType: 'application/strategic-merge-patch+json',
        body: statusPatch(status, current),
      }),
    );
    this.lastReport = this.clock.now();
    this.lastFingerprint = fingerprint;
    this.readFromServer = false;
    if (ready && ready.status !== this.lastReady) {
      const reason = ready.status === 'True' ? 'NodeReady' : 'NodeNotReady';
      this.deps.recorder?.event(
        { kind: 'Node', name: node.name, uid: node.name },
        'Normal',
        reason,
        `Node ${node.name} status is now: ${reason}`,
      );
      log('nodestatus').info(
        { node: node.name, ready: ready.status, message: ready.message },
        'Node readiness changed',
      );
    }
    this.lastReady = ready?.status;
  }
}

/**
 * The names in status.volumesAttached. A malformed list (not an array, entries without a string
 * name) counts as the entries it can read, so a bad Node never stops the status loop.
 */
function attachedNames(list: unknown): ReadonlySet<string> {
  if (!Array.isArray(list)) return new Set();
  const names = list.map((v: unknown) => (v as { name?: unknown } | null)?.name);
  return new Set(names.filter((n): n is string => typeof n === 'string'));
}

export function newNodeStatusManager(deps: NodeStatusDeps): NodeStatusManager {
  return new NodeStatusLoop(deps);
}
