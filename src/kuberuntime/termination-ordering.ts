/**
 * Termination order of a pod with sidecars (upstream kuberuntime_termination_order.go): regular
 * containers stop first, all at once; each sidecar (restartable init container) waits until every
 * regular container has stopped and, in reverse spec order, until the sidecar declared after it
 * has stopped. Containers that are not running count as stopped already. Waiting is bounded by
 * the container's remaining grace period.
 */
import type { Pod } from '../api/types.js';
import { isRestartableInitContainer } from '../api/pod.js';

interface Latch {
  promise: Promise<void>;
  open(): void;
  opened: boolean;
}

function latch(): Latch {
  let open!: () => void;
  const l: Latch = {
    promise: new Promise<void>((resolve) => {
      open = resolve;
    }),
    open: () => {
      l.opened = true;
      open();
    },
    opened: false,
  };
  return l;
}

export class TerminationOrdering {
  /** Container name → what it must wait for. */
  private readonly prereqs = new Map<string, Latch[]>();
  /** Container name → opened when it has stopped. */
  private readonly terminated = new Map<string, Latch>();

  constructor(pod: Pod, runningContainerNames: readonly string[]) {
    const running = new Set(runningContainerNames);
    const main: Latch[] = [];
    for (const c of pod.spec?.containers ?? []) {
      const l = latch();
      this.terminated.set(c.name, l);
      main.push(l);
      if (!running.has(c.name)) l.open();
    }
    let previousSidecar: string | undefined;
    const inits = pod.spec?.initContainers ?? [];
    for (let i = inits.length - 1; i >= 0; i--) {
      const ic = inits[i]!;
      const l = latch();
      this.terminated.set(ic.name, l);
      if (!running.has(ic.name)) l.open();
      if (!isRestartableInitContainer(ic)) continue;
      const waits = [...main];
      if (previousSidecar !== undefined) waits.push(this.terminated.get(previousSidecar)!);
      this.prereqs.set(ic.name, waits);
      previousSidecar = ic.name;
    }
  }

  /** Waits (at most graceSeconds) for the containers this one must outlive; returns the seconds waited. */
  async waitForTurn(name: string, graceSeconds: number): Promise<number> {
    if (graceSeconds <= 0) return 0;
    const waits = (this.prereqs.get(name) ?? []).filter((l) => !l.opened);
    if (waits.length === 0) return 0;
    const start = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceSeconds * 1000);
    });
    await Promise.race([Promise.all(waits.map((l) => l.promise)), timeout]);
    clearTimeout(timer);
    return (Date.now() - start) / 1000;
  }

  containerTerminated(name: string): void {
    this.terminated.get(name)?.open();
  }
}
