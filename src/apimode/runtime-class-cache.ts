/**
 * The node.k8s.io/v1 RuntimeClass cache of API server mode (upstream pkg/kubelet/runtimeclass
 * Manager: an informer over every RuntimeClass, cluster-scoped). One reflector lists and watches
 * them all; lookups read the copy.
 *
 * It also does, on this side, what upstream's RuntimeClass admission plugin does in the
 * apiserver: a pod that names a class and has no spec.overhead gets the class's
 * overhead.podFixed (`withOverhead`), so admission and the pod cgroup count it.
 */
import type { Pod } from '../api/types.js';
import { podUID } from '../api/pod.js';
import type { ApiClient } from '../apiclient/types.js';
import { ReflectedStore } from '../apiclient/reflected-store.js';
import { KubeletError } from '../errors.js';
import type { RuntimeClassInfo, RuntimeClassLookup } from '../kuberuntime/runtime-class.js';
import type { PodSource, PodUpdate } from '../podconfig/types.js';
import { log } from '../util/log.js';

/** The fields of a node.k8s.io/v1 RuntimeClass we read. */
export interface RuntimeClass {
  metadata?: { name?: string; resourceVersion?: string };
  handler?: string;
  overhead?: { podFixed?: Record<string, string> };
}

export const RUNTIME_CLASSES_PATH = '/apis/node.k8s.io/v1/runtimeclasses';
/** How long the pod source waits for the first RuntimeClass list. */
export const RUNTIME_CLASS_SYNC_TIMEOUT_MS = 30_000;

export class RuntimeClassCache implements RuntimeClassLookup {
  private readonly classes: ReflectedStore<RuntimeClass>;
  private stopped = false;

  constructor(client: ApiClient) {
    this.classes = new ReflectedStore<RuntimeClass>({
      client,
      path: RUNTIME_CLASSES_PATH,
      what: 'runtimeclasses',
      key: (rc) => rc.metadata?.name || undefined,
      admit: hasHandler,
    });
  }

  start(): void {
    this.classes.start();
  }

  stop(): void {
    this.stopped = true;
    this.classes.stop();
  }

  /**
   * Resolves after the first list (or stop), so pods are not admitted before classes are known;
   * or after `timeoutMs` with a warning, so that a cluster that will not list RuntimeClasses
   * (RBAC, an old apiserver) still runs its pods without a class (those with one fail their
   * sandbox until the list succeeds).
   */
  async synced(timeoutMs = RUNTIME_CLASS_SYNC_TIMEOUT_MS): Promise<void> {
    if (this.stopped) return;
    const listed = await this.classes.waitSynced(timeoutMs);
    if (!listed && !this.stopped) {
      log('kubelet').warn({ timeoutMs }, 'RuntimeClasses not listed yet; starting pods without them');
    }
  }

  /** upstream LookupRuntimeHandler: the handler, or the apiserver's NotFound words. */
  lookup(name: string): RuntimeClassInfo {
    const rc = this.classes.get(name);
    if (!rc) {
      const why = this.classes.hasSynced()
        ? `runtimeclasses.node.k8s.io "${name}" not found`
        : `failed to lookup RuntimeClass ${name}: runtimeclasses not synced yet`;
      throw new KubeletError('KTS_ERR_SANDBOX', why);
    }
    const podFixed = rc.overhead?.podFixed;
    return podFixed ? { handler: rc.handler ?? '', overhead: podFixed } : { handler: rc.handler ?? '' };
  }

  /** Whether the class is known (listed or watched). */
  has(name: string): boolean {
    return this.classes.has(name);
  }

  /** The pod with its class's overhead when it names a known class and has none of its own. */
  withOverhead(pod: Pod): Pod {
    const name = pod.spec?.runtimeClassName;
    if (!pod.spec || !name || pod.spec.overhead) return pod;
    const overhead = this.classes.get(name)?.overhead?.podFixed;
    return overhead ? { ...pod, spec: { ...pod.spec, overhead: { ...overhead } } } : pod;
  }
}

/** handler is required and immutable upstream; a class without one is unusable, not default. */
function hasHandler(rc: RuntimeClass): boolean {
  if (!rc.handler) log('kubelet').warn({ runtimeClass: rc.metadata?.name }, 'RuntimeClass has no handler; ignored');
  return Boolean(rc.handler);
}

/**
 * A pod source whose pods carry their RuntimeClass overhead (see withOverhead). The overhead a
 * pod got the first time it was seen stays its overhead for life, as upstream's (set once by
 * admission when the pod is created): a later change to its class does not resize a running
 * pod's cgroup. Pods whose class is not known yet are filled in when it is.
 */
export function withRuntimeClassOverhead(source: PodSource, classes: RuntimeClassCache): PodSource {
  const fixed = new Map<string, Record<string, string> | null>();
  // The same incoming object gets the same filled object back, so PodStorage still recognises a
  // pod the source re-sends unchanged (every event re-sends all of them) without comparing it.
  const filled = new WeakMap<Pod, { overhead: Record<string, string>; pod: Pod }>();
  const filledWith = (pod: Pod, overhead: Record<string, string>): Pod => {
    const memo = filled.get(pod);
    if (memo?.overhead === overhead) return memo.pod;
    const out = { ...pod, spec: { ...pod.spec!, overhead: { ...overhead } } };
    filled.set(pod, { overhead, pod: out });
    return out;
  };
  const fill = (pod: Pod): Pod => {
    const uid = pod.metadata?.uid;
    const name = pod.spec?.runtimeClassName;
    if (!uid || !name || !pod.spec || pod.spec.overhead) return pod;
    if (!fixed.has(uid)) {
      if (!classes.has(name)) return pod;
      fixed.set(uid, classes.withOverhead(pod).spec?.overhead ?? null);
    }
    const overhead = fixed.get(uid);
    return overhead ? filledWith(pod, overhead) : pod;
  };
  const forget = (u: PodUpdate) => {
    if (u.op === 'REMOVE') for (const p of u.pods) fixed.delete(podUID(p));
    if (u.op === 'SET') {
      const live = new Set(u.pods.map((p) => p.metadata?.uid));
      for (const uid of fixed.keys()) if (!live.has(uid)) fixed.delete(uid);
    }
  };
  return {
    start: (push) =>
      source.start((u: PodUpdate) => {
        forget(u);
        push({ ...u, pods: u.pods.map(fill) });
      }),
    stop: () => source.stop(),
  };
}
