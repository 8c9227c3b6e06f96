/**
 * The garbage collection loops (upstream Kubelet.StartGarbageCollection): container GC every
 * minute (ContainerGCPeriod) and image GC every 5 minutes (ImageGCPeriod), each in a loop of its
 * own beside the syncLoop, so that a slow CRI list or image removal holds up no pod work.
 *
 * As upstream's wait.Until, a loop runs a pass at once, then one period after that pass ended:
 * passes of a loop never overlap, however slow one is. A failed pass is logged and recorded on
 * the Node as a Warning: ContainerGCFailed for every failed container pass; ImageGCFailed only
 * from the second failed image pass in a row (upstream: the first may only mean that stats were
 * not ready yet). Success is logged at debug level, at info when it ends a run of failures.
 *
 * Container GC is not gated on the sources: as upstream passes allSourcesReady to
 * GarbageCollect, it runs from the start, but until every source has been seen no pod counts as
 * deleted, so only surplus dead instances of a pod's containers and old dead sandboxes go; every
 * container, log directory, volume and cgroup of a pod that left its source waits for the
 * sources (otherwise a restart would wipe pods the sources have not yet sent again).
 */
import type { Runtime } from '../kuberuntime/types.js';
import { ImageGCFailedReason, ImageGCPeriodMs, type ImageGCManager } from '../images/index.js';
import type { EventRecorder, ObjectReference } from '../events/types.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';

/** upstream ContainerGCPeriod. */
export const ContainerGCPeriodMs = 60_000;
export const ContainerGCFailedReason = 'ContainerGCFailed';

/** What container GC asks the Kubelet: upstream's sourcesReadyProvider and podStateProvider. */
export interface PodStateProvider {
  allSourcesReady(): boolean;
  shouldPodContentBeRemoved(uid: string): boolean;
}

export interface GarbageCollectionDeps {
  runtime: Pick<Runtime, 'garbageCollect'>;
  pods: PodStateProvider;
  /** Image GC; absent or disabled (imageGCHighThresholdPercent 100): no image loop. */
  imageGC?: ImageGCManager;
  recorder?: EventRecorder;
  /** The Node the failure events are about. */
  node?: ObjectReference;
  clock?: Clock;
  containerGCPeriodMs?: number;
  imageGCPeriodMs?: number;
}

export interface GarbageCollection {
  start(): void;
  /** No pass starts after this; resolves once a pass in progress has ended. */
  stop(): Promise<void>;
}

/**
 * The pods whose content container GC keeps, in the shape the runtime's garbageCollect takes (a
 * set it only asks `has`). As upstream asks its podStateProvider per pod, `has` asks the Kubelet
 * at the moment of the question: a pod that arrives during a pass is never taken for deleted.
 */
class PodsKept extends Set<string> {
  constructor(private readonly keep: (uid: string) => boolean) {
    super();
  }
  override has(uid: string): boolean {
    return this.keep(uid);
  }
}

/** upstream containerGC.GarbageCollect: the runtime's collection, deleted pods only once the sources are ready. */
function containerGCPass(deps: GarbageCollectionDeps): () => Promise<void> {
  return () => {
    const allSourcesReady = deps.pods.allSourcesReady();
    const kept = new PodsKept((uid) => !allSourcesReady || !deps.pods.shouldPodContentBeRemoved(uid));
    return deps.runtime.garbageCollect(kept);
  };
}

/** One image pass: refresh the last-used records (upstream's detectImages loop), then collect. */
function imageGCPass(imageGC: NonNullable<GarbageCollectionDeps['imageGC']>, clock: Clock): () => Promise<void> {
  return async () => {
    await imageGC.detectImages(clock.now());
    await imageGC.garbageCollect();
  };
}

interface LoopSpec {
  what: string;
  /** The logger's component. */
  component: string;
  periodMs: number;
  pass: () => Promise<void>;
  /** Failures in a row (this one included) at which the event is recorded. */
  eventFromFailure: number;
  reason: string;
}

/** upstream wait.Until: `pass` now, then `periodMs` after each pass ends, until stopped. */
class Loop {
  private timer: { cancel(): void } | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private failures = 0;

  constructor(
    private readonly spec: LoopSpec,
    private readonly deps: GarbageCollectionDeps,
    private readonly clock: Clock,
  ) {}

  start(): void {
    this.run();
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    return this.running ?? Promise.resolve();
  }

  private run(): void {
    if (this.stopped) return;
    this.running = this.once().finally(() => {
      this.running = undefined;
      if (!this.stopped) this.timer = this.clock.setTimeout(() => this.run(), this.spec.periodMs);
    });
  }

  private async once(): Promise<void> {
    const { what, component } = this.spec;
    try {
      await this.spec.pass();
    } catch (err) {
      // A pass cut short by stop() (the runtime connection closing) is no failure of the node.
      if (this.stopped) return log(component).debug({ err: errorMessage(err) }, `${what} garbage collection stopped`);
      this.failed(err);
      return;
    }
    if (this.failures > 0) log(component).info(`${what} garbage collection succeeded`);
    else log(component).debug(`${what} garbage collection succeeded`);
    this.failures = 0;
  }

  private failed(err: unknown): void {
    const message = errorMessage(err);
    this.failures++;
    const { what, component, eventFromFailure, reason } = this.spec;
    if (this.failures < eventFromFailure) {
      log(component).warn(
        { err: message },
        `${what} garbage collection failed once; stats initialization may not have completed yet`,
      );
      return;
    }
    log(component).error({ err: message, failuresInARow: this.failures }, `${what} garbage collection failed`);
    if (this.deps.node) this.deps.recorder?.event(this.deps.node, 'Warning', reason, message);
  }
}

export function createGarbageCollection(deps: GarbageCollectionDeps): GarbageCollection {
  const clock = deps.clock ?? realClock;
  const loops = [
    new Loop(
      {
        what: 'Container',
        component: 'containergc',
        periodMs: deps.containerGCPeriodMs ?? ContainerGCPeriodMs,
        pass: containerGCPass(deps),
        eventFromFailure: 1,
        reason: ContainerGCFailedReason,
      },
      deps,
      clock,
    ),
  ];
  if (deps.imageGC?.enabled) {
    loops.push(
      new Loop(
        {
          what: 'Image',
          component: 'imagegc',
          periodMs: deps.imageGCPeriodMs ?? ImageGCPeriodMs,
          pass: imageGCPass(deps.imageGC, clock),
          eventFromFailure: 2,
          reason: ImageGCFailedReason,
        },
        deps,
        clock,
      ),
    );
  } else if (deps.imageGC) {
    log('imagegc').info('Image garbage collection disabled (imageGCHighThresholdPercent is 100)');
  }
  return {
    start: () => loops.forEach((l) => l.start()),
    stop: async () => {
      await Promise.all(loops.map((l) => l.stop()));
    },
  };
}
