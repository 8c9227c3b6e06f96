/**
 * Runtime health as the syncLoop sees it (upstream runtimeState): updated every 5 s from CRI
 * Status (upstream updateRuntimeUp), plus the PLEG's own health (upstream's health checks: "PLEG
 * is not healthy: pleg has yet to be successful" until its first relist). Two gates, as upstream:
 * - runtimeErrors (RuntimeReady false, the runtime down, the PLEG unhealthy): the syncLoop skips
 *   pod syncs and backs off;
 * - networkErrors (NetworkReady false or missing, e.g. no CNI config yet): only pods on the pod
 *   network wait (Kubelet.syncPod fails them with NetworkNotReady); hostNetwork pods run, so the
 *   DaemonSet that installs the CNI config can start.
 * Both are KTS_ERR_RUNTIME_NOT_READY errors with upstream's messages, logged once per change.
 */
import type { RuntimeCondition, RuntimeFeatures, RuntimeHandler } from '../cri/types.js';
import type { Runtime } from '../kuberuntime/types.js';
import type { PodLifecycleEventGenerator } from '../pleg/types.js';
import { errorMessage, KubeletError } from '../errors.js';
import { log } from '../util/log.js';

export class RuntimeState {
  private runtimeError: KubeletError | undefined = notReady(
    'container runtime status check may not have completed yet',
  );
  /** upstream ErrNetworkUnknown until the first status. */
  private networkError: KubeletError | undefined = notReady('network state unknown');
  private readonly lastLogged = new Map<'runtime' | 'network', string | undefined>();
  private handlers: readonly RuntimeHandler[] = [];
  private features: RuntimeFeatures | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly pleg: PodLifecycleEventGenerator,
  ) {}

  /** upstream updateRuntimeUp: a failed Status call leaves the network state as it was. */
  async update(): Promise<void> {
    try {
      const { conditions, handlers, features } = await this.runtime.status();
      // upstream setRuntimeHandlers/setRuntimeFeatures: the last good reply's, kept over failures.
      this.handlers = handlers;
      this.features = features;
      const network = conditions.find((c) => c.type === 'NetworkReady');
      this.networkError = network?.status
        ? undefined
        : notReady(`container runtime network not ready: ${conditionString(network)}`);
      const runtime = conditions.find((c) => c.type === 'RuntimeReady');
      this.runtimeError = runtime?.status
        ? undefined
        : notReady(`container runtime not ready: ${conditionString(runtime)}`);
    } catch (err) {
      this.runtimeError = notReady(`container runtime is down: ${errorMessage(err)}`, err);
    }
    this.logChange('runtime', this.runtimeError, 'Container runtime not ready', 'Container runtime is ready');
    this.logChange(
      'network',
      this.networkError,
      'Container runtime network not ready',
      'Container runtime network is ready',
    );
  }

  private logChange(what: 'runtime' | 'network', err: KubeletError | undefined, bad: string, good: string): void {
    const reason = err?.message;
    if (reason === this.lastLogged.get(what)) return;
    if (err) log('kubelet').warn({ code: err.code, reason }, bad);
    else if (this.lastLogged.has(what)) log('kubelet').info(good);
    this.lastLogged.set(what, reason);
  }

  /** The error that stops the syncLoop from dispatching work (runtime not ready or down, PLEG unhealthy). */
  runtimeErrors(): KubeletError | undefined {
    if (this.runtimeError) return this.runtimeError;
    const pleg = this.plegProblem();
    return pleg === undefined ? undefined : notReady(pleg);
  }

  /**
   * What upstream's node Ready setter aggregates: the runtime's error, the PLEG's, then the
   * network's (node-object.ts joins them as upstream's Aggregate does).
   */
  nodeReadyErrors(): string[] {
    return [this.runtimeError?.message, this.plegProblem(), this.networkError?.message].filter(
      (m): m is string => m !== undefined,
    );
  }

  /** The runtime handlers of the last Status reply (node status.runtimeHandlers). */
  runtimeHandlers(): readonly RuntimeHandler[] {
    return this.handlers;
  }

  /** StatusResponse.features of the last reply; undefined when the runtime sent none. */
  runtimeFeatures(): RuntimeFeatures | undefined {
    return this.features;
  }

  /** upstream networkErrors: set while the runtime's NetworkReady is false or missing. */
  networkErrors(): KubeletError | undefined {
    return this.networkError;
  }

  /** Everything /healthz reports: runtime plus PLEG. */
  healthErrors(): string[] {
    const pleg = this.plegProblem();
    return pleg === undefined ? [] : [pleg];
  }

  /** upstream's PLEG health check message, or undefined while it is healthy. */
  private plegProblem(): string | undefined {
    const pleg = this.pleg.healthy();
    return pleg.ok ? undefined : `PLEG is not healthy: ${pleg.message}`;
  }
}

/** upstream RuntimeCondition.String(), "<nil>" for a condition the runtime did not report. */
export function conditionString(c: RuntimeCondition | undefined): string {
  return c ? `${c.type}=${c.status} reason:${c.reason} message:${c.message}` : '<nil>';
}

function notReady(message: string, cause?: unknown): KubeletError {
  return new KubeletError('KTS_ERR_RUNTIME_NOT_READY', message, { cause });
}
