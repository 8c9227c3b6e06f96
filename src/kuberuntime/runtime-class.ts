/**
 * RuntimeClass → CRI runtime handler (upstream pkg/kubelet/runtimeclass Manager.LookupRuntimeHandler).
 * The sandbox of a pod with spec.runtimeClassName runs under the handler its class names; no
 * class means the runtime's default handler (''). A class that cannot be resolved fails the
 * sandbox creation, so nothing of the pod runs.
 *
 * Standalone mode has no RuntimeClass objects: the class name is taken as the handler, and the
 * runtime itself refuses a handler it does not have. API server mode resolves the name through
 * the watched node.k8s.io/v1 RuntimeClass cache (src/apimode/runtime-class-cache.ts).
 */
import type { Pod } from '../api/types.js';

/** What a RuntimeClass contributes to a pod on this node. */
export interface RuntimeClassInfo {
  handler: string;
  /** overhead.podFixed (resource name → quantity), when the class declares one. */
  overhead?: Record<string, string>;
}

export interface RuntimeClassLookup {
  /**
   * The class named, or throws (KTS_ERR_SANDBOX) with upstream's message when it is unknown or
   * not known yet.
   */
  lookup(name: string): RuntimeClassInfo;
}

/** Standalone mode: the class name is the handler. */
export const nameIsHandler: RuntimeClassLookup = { lookup: (name) => ({ handler: name }) };

/** The runtime handler for the pod's sandbox ('' = the runtime's default). */
export function runtimeHandlerFor(pod: Pod, classes: RuntimeClassLookup | undefined): string {
  const name = pod.spec?.runtimeClassName;
  if (!name) return '';
  return (classes ?? nameIsHandler).lookup(name).handler;
}
