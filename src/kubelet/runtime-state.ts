/**
 * Runtime health as the syncLoop sees it (upstream runtimeState): updated every 5 s from CRI
 * Status, plus the PLEG's own health (upstream's health checks: "PLEG is not healthy: pleg has
 * yet to be successful" until its first relist). While either is not ready (a
 * KTS_ERR_RUNTIME_NOT_READY error; the runtime's logged once per change with its code), the
 * syncLoop skips pod syncs and backs off.
 */
import type { Runtime } from '../kuberuntime/types.js';
import type { PodLifecycleEventGenerator } from '../pleg/types.js';
import { errorMessage, KubeletError } from '../errors.js';
import { log } from '../util/log.js';

export class RuntimeState {
  private runtimeError: KubeletError | undefined = notReady(
    'container runtime status check may not have completed yet',
  );
  private lastLogged: string | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly pleg: PodLifecycleEventGenerator,
  ) {}

  async update(): Promise<void> {
    try {
      const r = await this.runtime.ready();
      this.runtimeError = r.ready
        ? undefined
        : notReady(`container runtime is not ready: ${r.reason ?? 'unknown reason'}`);
    } catch (err) {
      this.runtimeError = notReady(`container runtime is down: ${errorMessage(err)}`, err);
    }
    const reason = this.runtimeError?.message;
    if (reason !== this.lastLogged) {
      if (this.runtimeError)
        log('kubelet').warn({ code: this.runtimeError.code, reason }, 'Container runtime not ready');
      else log('kubelet').info('Container runtime is ready');
      this.lastLogged = reason;
    }
  }

  /** The error that stops the syncLoop from dispatching work (runtime not ready or down, PLEG unhealthy). */
  runtimeErrors(): KubeletError | undefined {
    if (this.runtimeError) return this.runtimeError;
    const pleg = this.plegProblem();
    return pleg === undefined ? undefined : notReady(pleg);
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

function notReady(message: string, cause?: unknown): KubeletError {
  return new KubeletError('KTS_ERR_RUNTIME_NOT_READY', message, { cause });
}
