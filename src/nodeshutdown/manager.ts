/**
 * The node shutdown manager (upstream managerImpl without shutdownGracePeriodByPodPriority): two
 * groups, as upstream's migrateConfig builds them: pods with priority below
 * SystemCriticalPriority (2 000 000 000) get shutdownGracePeriod − shutdownGracePeriodCriticalPods,
 * then critical pods get shutdownGracePeriodCriticalPods. Each pod's grace period is the smaller
 * of its own terminationGracePeriodSeconds and its group's budget; a group that is not done within
 * its budget is left behind and the next group starts, so the total never exceeds
 * shutdownGracePeriod. Killed pods end Failed with upstream's reason and message.
 *
 * Standalone pods have no admission plugin to resolve spec.priority from priorityClassName, so
 * the two built-in classes count at their upstream values (system-node-critical 2 000 001 000,
 * system-cluster-critical 2 000 000 000).
 */
import type { Pod } from '../api/types.js';
import { podTerminationGracePeriodSeconds, klogRef } from '../api/pod.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import type { KillPodForShutdown, NodeShutdownManager, ShutdownTrigger } from './types.js';

export const SystemCriticalPriority = 2_000_000_000;
const BUILTIN_PRIORITY: Record<string, number> = {
  'system-node-critical': 2_000_001_000,
  'system-cluster-critical': 2_000_000_000,
};
export const NodeShutdownReason = 'Terminated';
export const NodeShutdownMessage = 'Pod was terminated in response to imminent node shutdown.';
const NodeShutdownNotAdmittedReason = 'NodeShutdown';
const NodeShutdownNotAdmittedMessage = 'Pod was rejected as the node is shutting down.';

export interface NodeShutdownOptions {
  shutdownGracePeriodMs: number;
  shutdownGracePeriodCriticalPodsMs: number;
  activePods: () => Pod[];
  killPod: KillPodForShutdown;
  trigger: ShutdownTrigger;
}

export function podPriority(pod: Pod): number {
  return pod.spec?.priority ?? BUILTIN_PRIORITY[pod.spec?.priorityClassName ?? ''] ?? 0;
}

/** The two upstream groups, in kill order, each with its budget in ms. */
export function shutdownGroups(
  pods: Pod[],
  totalMs: number,
  criticalMs: number,
): Array<{ critical: boolean; budgetMs: number; pods: Pod[] }> {
  const critical = pods.filter((p) => podPriority(p) >= SystemCriticalPriority);
  const regular = pods.filter((p) => podPriority(p) < SystemCriticalPriority);
  return [
    { critical: false, budgetMs: totalMs - criticalMs, pods: regular },
    { critical: true, budgetMs: criticalMs, pods: critical },
  ];
}

class Manager implements NodeShutdownManager {
  private announced = false;
  private running: Promise<void> | undefined;

  constructor(private readonly opts: NodeShutdownOptions) {}

  get enabled(): boolean {
    return this.opts.shutdownGracePeriodMs > 0;
  }

  start(): void {
    if (!this.enabled) return;
    log('nodeshutdown').info(
      {
        shutdownGracePeriodMs: this.opts.shutdownGracePeriodMs,
        shutdownGracePeriodCriticalPodsMs: this.opts.shutdownGracePeriodCriticalPodsMs,
      },
      'Graceful node shutdown manager started',
    );
    this.opts.trigger.start((why) => void this.processShutdownEvent(why));
  }

  stop(): void {
    this.opts.trigger.stop();
  }

  shuttingDown(): boolean {
    return this.announced;
  }

  admit(_pod: Pod): { admit: boolean; reason?: string; message?: string } {
    return this.announced
      ? { admit: false, reason: NodeShutdownNotAdmittedReason, message: NodeShutdownNotAdmittedMessage }
      : { admit: true };
  }

  processShutdownEvent(why: string): Promise<void> {
    this.running ??= this.run(why);
    return this.running;
  }

  private async run(why: string): Promise<void> {
    this.announced = true;
    const t0 = Date.now();
    const groups = shutdownGroups(
      this.opts.activePods(),
      this.opts.shutdownGracePeriodMs,
      this.opts.shutdownGracePeriodCriticalPodsMs,
    );
    log('nodeshutdown').warn(
      { why, pods: groups.map((g) => g.pods.length) },
      'Node is shutting down: terminating pods, non-critical first',
    );
    for (const g of groups) {
      if (g.pods.length === 0) continue;
      const graceCap = Math.floor(g.budgetMs / 1000);
      const kills = g.pods.map((pod) => {
        const grace = Math.min(podTerminationGracePeriodSeconds(pod), graceCap);
        log('nodeshutdown').info(
          { pod: klogRef(pod.metadata), gracePeriodSeconds: grace, critical: g.critical },
          'Shutdown manager killing pod',
        );
        return this.opts.killPod(pod, grace, NodeShutdownMessage).catch((err: unknown) => {
          log('nodeshutdown').error(
            { pod: pod.metadata?.name, err: errorMessage(err) },
            'Shutdown manager failed killing pod',
          );
        });
      });
      let timer: NodeJS.Timeout | undefined;
      const outOfTime = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), g.budgetMs)));
      const result = await Promise.race([Promise.all(kills).then(() => 'done' as const), outOfTime]);
      clearTimeout(timer);
      if (result === 'timeout')
        log('nodeshutdown').warn(
          { critical: g.critical, budgetMs: g.budgetMs },
          'Shutdown grace period for this group ran out; continuing',
        );
    }
    log('nodeshutdown').info({ ms: Date.now() - t0 }, 'Node shutdown: pods terminated');
  }
}

export function newNodeShutdownManager(opts: NodeShutdownOptions): NodeShutdownManager {
  return new Manager(opts);
}

/**
 * The documented trigger where no logind exists: a signal to the agent (default SIGPWR, which
 * init systems send on power failure) announces the node's shutdown.
 */
export function signalTrigger(signal: NodeJS.Signals = 'SIGPWR'): ShutdownTrigger {
  let handler: (() => void) | undefined;
  return {
    start(cb) {
      handler = () => cb(signal);
      process.once(signal, handler);
    },
    stop() {
      if (handler) process.off(signal, handler);
      handler = undefined;
    },
  };
}
