/**
 * The message an evicted pod carries (upstream eviction/helpers.go evictionMessage): the resource
 * the node ran low on, the threshold and what was available, then each container using more of
 * it than it requested (memory), and, ours, the signal.
 */
import type { Pod } from '../api/types.js';
import { containerMemory } from '../util/pod-resources.js';
import type { Candidate } from './ranking.js';
import { formatQuantity, SIGNAL_RESOURCE, thresholdAmount } from './thresholds.js';
import type { Observation, Threshold } from './types.js';

function memoryRequestOf(pod: Pod, name: string): bigint {
  const c = pod.spec?.containers?.find((x) => x.name === name);
  try {
    return c ? BigInt(Math.floor(containerMemory(c, 'requests'))) : 0n;
  } catch {
    return 0n;
  }
}

export function evictionMessage(t: Threshold, o: Observation, victim: Candidate): string {
  const resource = SIGNAL_RESOURCE[t.signal];
  const q = (v: bigint) => formatQuantity(v, t.signal);
  let message = `The node was low on resource: ${resource}. Threshold quantity: ${q(thresholdAmount(t, o.capacity))}, available: ${q(o.available)}. `;
  if (t.signal === 'memory.available') {
    for (const c of victim.sample?.containers ?? []) {
      const usage = c.memory.workingSetBytes ?? 0n;
      const request = memoryRequestOf(victim.pod, c.name);
      // upstream names only the containers above their request: they are what the pod is evicted for.
      if (usage > request)
        message += `Container ${c.name} was using ${q(usage)}, request is ${q(request)}, has larger consumption of ${resource}. `;
    }
  }
  return `${message}Eviction signal: ${t.signal}.`;
}
