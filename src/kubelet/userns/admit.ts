/**
 * Admission of `hostUsers: false` pods: where the pod's runtime handler does not report user
 * namespace support (CRI Status RuntimeHandlerFeatures.user_namespaces), the pod is refused
 * before anything of it runs, with upstream's words (which upstream's kubelet only says when the
 * sandbox is created, leaving the pod Pending). It never runs in the host's user namespace.
 */
import type { Pod } from '../../api/types.js';
import type { RuntimeHandler } from '../../cri/types.js';
import { handlerRefusal, UsernsError } from './manager.js';

/** Our reason for a pod field the node cannot act on (kubelet/admission.ts). */
export const USERNS_REFUSAL_REASON = 'PodFeatureUnsupported';

/**
 * upstream Kubelet.HandlerSupportsUserNamespaces over the handlers of the last Status reply:
 * throws when the runtime reported none, or not this one.
 */
export function handlerSupport(handlers: readonly RuntimeHandler[], handler: string): boolean {
  if (handlers.length === 0) throw new UsernsError('runtime handlers are not set');
  const h = handlers.find((x) => x.name === handler);
  if (!h) throw new UsernsError(`the handler "${handler}" is not known`);
  return h.supportsUserNamespaces;
}

export interface UsernsAdmitDeps {
  /** The runtime handlers of the last CRI Status reply. */
  handlers: () => readonly RuntimeHandler[];
  /** The pod's runtime handler; throws when its RuntimeClass is unknown (the sandbox reports that). */
  handlerFor: (pod: Pod) => string;
}

/** The admit handler (kubelet.addPodAdmitHandler). */
export function usernsAdmitHandler(deps: UsernsAdmitDeps) {
  return (pod: Pod): { admit: boolean; reason?: string; message?: string } => {
    if (pod.spec?.hostUsers !== false) return { admit: true };
    let handler: string;
    try {
      handler = deps.handlerFor(pod);
    } catch {
      return { admit: true };
    }
    const refusal = handlerRefusal(
      { handlerSupportsUserNamespaces: (h) => handlerSupport(deps.handlers(), h) },
      handler,
    );
    return refusal ? { admit: false, reason: USERNS_REFUSAL_REASON, message: refusal } : { admit: true };
  };
}
