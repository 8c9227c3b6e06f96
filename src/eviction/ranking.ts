/**
 * Which pod goes first (upstream eviction/helpers.go rankMemoryPressure, rankDiskPressureFunc,
 * rankPIDPressure): pods using more than they requested before the others, then lower priority
 * first, then the larger usage above the request.
 */
import type { Pod } from '../api/types.js';
import { podRequests } from '../cm/helpers.js';
import type { PodSample } from '../stats/types.js';
import type { Signal } from './types.js';

export interface Candidate { pod: Pod; usage: bigint; request: bigint; sample?: PodSample }

const priority = (p: Pod): number => p.spec?.priority ?? 0;

function requestOf(pod: Pod, signal: Signal): bigint {
  if (signal !== 'memory.available') return 0n; // ephemeral-storage requests and pids: not tracked (0)
  try {
    return BigInt(Math.floor(podRequests(pod).memory));
  } catch {
    return 0n;
  }
}

function usageOf(s: PodSample | undefined, signal: Signal): bigint {
  if (!s) return 0n;
  switch (signal) {
    case 'memory.available': return s.memory.workingSetBytes ?? 0n;
    case 'pid.available': return s.pids ?? 0n;
    case 'nodefs.inodesFree':
    case 'imagefs.inodesFree': return s.ephemeralStorage?.inodesUsed ?? 0n;
    default: return s.ephemeralStorage?.usedBytes ?? 0n;
  }
}

export function rankForEviction(pods: readonly Pod[], samples: readonly PodSample[], signal: Signal): Candidate[] {
  const byUid = new Map(samples.map((s) => [s.uid, s]));
  const cands = pods.map((pod): Candidate => {
    const sample = byUid.get(pod.metadata!.uid!);
    return { pod, usage: usageOf(sample, signal), request: requestOf(pod, signal), ...(sample ? { sample } : {}) };
  });
  const cmpBig = (a: bigint, b: bigint) => (a > b ? -1 : a < b ? 1 : 0);
  return cands.sort((a, b) => {
    if (signal !== 'pid.available') {
      const ea = a.usage > a.request ? 1 : 0;
      const eb = b.usage > b.request ? 1 : 0;
      if (ea !== eb) return eb - ea;
    }
    if (priority(a.pod) !== priority(b.pod)) return priority(a.pod) - priority(b.pod);
    return signal === 'pid.available' ? cmpBig(a.usage, b.usage) : cmpBig(a.usage - a.request, b.usage - b.request);
  });
}
