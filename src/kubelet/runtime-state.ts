/**
 * Runtime health as the syncLoop sees it (upstream runtimeState): updated every 5 s from CRI
 * Status, plus the PLEG's own health. While not ready, the syncLoop backs off.
 */
import type { Runtime } from '../kuberuntime/types.js';
import type { PodLifecycleEventGenerator } from '../pleg/types.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';

export class RuntimeState {
  private runtimeError: string | undefined = 'container runtime status check may not have completed yet';
  private lastLogged: string | undefined;

  constructor(private readonly runtime: Runtime, private readonly pleg: PodLifecycleEventGenerator) {}

  async update(): Promise<void> {
    try {
      const r = await this.runtime.ready();
      this.runtimeError = r.ready ? undefined : `container runtime is not ready: ${r.reason ?? 'unknown reason'}`;
    } catch (err) {
      this.runtimeError = `container runtime is down: ${errorMessage(err)}`;
    }
    if (this.runtimeError !== this.lastLogged) {
      if (this.runtimeError) log('kubelet').warn({ reason: this.runtimeError }, 'Container runtime not ready');
      else log('kubelet').info('Container runtime is ready');
      this.lastLogged = this.runtimeError;
    }
  }

  /** Errors that stop the syncLoop from dispatching work (runtime down). */
  runtimeErrors(): string | undefined {
    return this.runtimeError;
  }

  /** Everything /healthz reports: runtime plus PLEG. */
  healthErrors(): string[] {
    const errs: string[] = [];
    const pleg = this.pleg.healthy();
    if (!pleg.ok) errs.push(`PLEG is not healthy: ${pleg.message}`);
    return errs;
  }
}
