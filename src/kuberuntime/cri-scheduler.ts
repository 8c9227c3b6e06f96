/**
 * Bounded, fair scheduling of the CRI calls that bring pods up (RunPodSandbox, CreateContainer,
 * StartContainer). Upstream lets every pod worker call the runtime at once; with 100 pods
 * written together, containerd then works on 100 sandboxes in parallel and every pod waits for
 * all of them (issue 18: the first container started ~24 s after its sandbox). Here at most
 * `limit` such calls run at a time, and the next free slot goes to, in order:
 *
 *   1. restarts (a pod that already had a sandbox: a crashed container, a dead sandbox), so a
 *      burst of new pods does not delay bringing running pods back;
 *   2. the pod that queued first: a pod keeps its place in line from its first call until its
 *      sync ends, so a pod whose sandbox is up gets its containers before later pods get their
 *      sandboxes (pods finish one after another instead of all waiting);
 *   3. within a pod, call order.
 *
 * One serial worker per pod is unchanged: this only orders calls that workers already make.
 */

export type StartClass = 'restart' | 'new';

/**
 * The default bound: containerd on this project's 2-vCPU machines finishes a burst soonest with
 * a few calls in flight (bench/agent-bench.ts --burst; docs/perf-log.md). 8 rather than 4 since
 * issue 30: of seven same-hour pairs of 100-pod containerd bursts (loads 5–60), 8 was faster in
 * four, by 7–59 % (7 % on the only quiet machine), and 4 in three, by 15–39 %.
 */
export const CRI_START_CONCURRENCY = 8;

export interface CriStartScheduler {
  /** Runs fn once a slot is free (see the order above). A signal aborted while waiting rejects with its reason. */
  run<T>(podUid: string, cls: StartClass, fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** The pod's sync ended: it gives up its place in line (its next sync queues anew). */
  release(podUid: string): void;
  /** Calls running and waiting (tests, debug logs). */
  stats(): { running: number; waiting: number };
}

interface Waiter {
  rank: number;
  ticket: number;
  seq: number;
  go: () => void;
}

const RANK: Record<StartClass, number> = { restart: 0, new: 1 };

class FairScheduler implements CriStartScheduler {
  private running = 0;
  private seq = 0;
  private readonly waiting: Waiter[] = [];
  /** A pod's place in line: the seq of its first call since its last release. */
  private readonly tickets = new Map<string, number>();

  constructor(private readonly limit: number) {}

  async run<T>(podUid: string, cls: StartClass, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    const seq = this.seq++;
    let ticket = this.tickets.get(podUid);
    if (ticket === undefined) this.tickets.set(podUid, (ticket = seq));
    if (this.running >= this.limit || this.waiting.length > 0)
      await this.wait({ rank: RANK[cls], ticket, seq }, signal);
    else this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.next();
    }
  }

  release(podUid: string): void {
    this.tickets.delete(podUid);
  }

  stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Queues a call; resolves once it holds a slot (counted in running). */
  private wait(key: Omit<Waiter, 'go'>, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(w);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal!.reason);
      };
      const w: Waiter = {
        ...key,
        go: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.waiting.push(w);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.next();
    });
  }

  /** Hands free slots to the first waiters in order (a linear scan: the queue is pods, not thousands). */
  private next(): void {
    while (this.running < this.limit && this.waiting.length > 0) {
      let best = 0;
      for (let i = 1; i < this.waiting.length; i++) if (before(this.waiting[i]!, this.waiting[best]!)) best = i;
      const [w] = this.waiting.splice(best, 1);
      this.running++;
      w!.go();
    }
  }
}

function before(a: Waiter, b: Waiter): boolean {
  if (a.rank !== b.rank) return a.rank < b.rank;
  if (a.ticket !== b.ticket) return a.ticket < b.ticket;
  return a.seq < b.seq;
}

/** Every call at once (a limit of 0 or less: upstream's behaviour). */
const unbounded: CriStartScheduler = {
  run: (_uid, _cls, fn, signal) => {
    signal?.throwIfAborted();
    return fn();
  },
  release: () => undefined,
  stats: () => ({ running: 0, waiting: 0 }),
};

/** At most `limit` calls at a time (limit <= 0 or not finite: no bound). */
export function createCriStartScheduler(limit: number): CriStartScheduler {
  return limit > 0 && Number.isFinite(limit) ? new FairScheduler(Math.floor(limit)) : unbounded;
}
