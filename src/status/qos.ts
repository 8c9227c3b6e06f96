/** Pod QoS class as upstream's GetPodQOS: Guaranteed, Burstable or BestEffort. */
import type { Container, Pod } from '../api/types.js';

const COMPUTE = ['cpu', 'memory'] as const;

export function podQOSClass(pod: Pod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers: Container[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  let anyRequestOrLimit = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    for (const r of COMPUTE) {
      const hasReq = req[r] !== undefined && String(req[r]) !== '0';
      const hasLim = lim[r] !== undefined && String(lim[r]) !== '0';
      if (hasReq || hasLim) anyRequestOrLimit = true;
      // Guaranteed needs a limit for cpu and memory on every container, and requests equal to
      // limits where both are given (a request defaults to the limit when omitted).
      if (!hasLim) guaranteed = false;
      else if (hasReq && String(req[r]) !== String(lim[r])) guaranteed = false;
    }
  }
  if (!anyRequestOrLimit) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
