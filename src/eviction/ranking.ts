/**
 * Which pod goes first (upstream eviction/helpers.go rankMemoryPressure, rankDiskPressureFunc,
 * rankPIDPressure): pods using more than they requested before the others, then lower priority
 * first, then the larger usage above the request. A pod with no stats goes before the pods with
 * stats at each usage step, as upstream (it may be one whose usage cannot be seen).
 */
import type { Container, Pod } from '../api/types.js';
import { podUID } from '../api/pod.js';
import { podRequests } from '../util/pod-resources.js';
import type { PodSample } from '../stats/types.js';
import { tryParseQuantity } from '../util/quantity.js';
import type { Signal } from './types.js';

export interface Candidate {
  pod: Pod;
  usage: bigint;
  request: bigint;
  sample?: PodSample;
}

const priority = (p: Pod): number => p.spec?.priority ?? 0;

/** A container's ephemeral-storage request in bytes; the limit when only the limit is set (as the apiserver defaults it). */
function ephemeralRequest(c: Container): number {
  const r = c.resources as { requests?: Record<string, unknown>; limits?: Record<string, unknown> } | undefined;
  const v = r?.requests?.['ephemeral-storage'] ?? r?.limits?.['ephemeral-storage'];
  return typeof v === 'string' || typeof v === 'number' ? Math.max(0, Math.ceil(tryParseQuantity(v) ?? 0)) : 0;
}

/** upstream podRequest for ephemeral storage: the containers' sum, or the largest init container if larger. */
function ephemeralStorageRequest(pod: Pod): bigint {
  const sum = (pod.spec?.containers ?? []).reduce((n, c) => n + ephemeralRequest(c), 0);
  const init = Math.max(0, ...(pod.spec?.initContainers ?? []).map(ephemeralRequest));
  return BigInt(Math.max(sum, init));
}

/** Requests the ranking compares usage with: memory, ephemeral storage; inodes and pids have none. */
function requestOf(pod: Pod, signal: Signal): bigint {
  try {
    if (signal === 'memory.available') return BigInt(Math.floor(podRequests(pod, { excludeOverhead: true }).memory));
    if (signal === 'nodefs.available' || signal === 'imagefs.available') return ephemeralStorageRequest(pod);
  } catch {
    // An unparsable request counts as none.
  }
  return 0n;
}

function usageOf(s: PodSample | undefined, signal: Signal): bigint {
  if (!s) return 0n;
  switch (signal) {
    case 'memory.available':
      return s.memory.workingSetBytes ?? 0n;
    case 'pid.available':
      return s.pids ?? 0n;
    case 'nodefs.inodesFree':
    case 'imagefs.inodesFree':
      return s.ephemeralStorage?.inodesUsed ?? 0n;
    default:
      return s.ephemeralStorage?.usedBytes ?? 0n;
  }
}

type Cmp = (a: Candidate, b: Candidate) => number;

/** upstream cmpBool over "has no stats": the pod without stats first; 0 when both or neither have them. */
const noStatsFirst: Cmp = (a, b) => Number(b.sample === undefined) - Number(a.sample === undefined);
const withStats =
  (cmp: Cmp): Cmp =>
  (a, b) =>
    a.sample && b.sample ? cmp(a, b) : noStatsFirst(a, b);
const bigDesc = (x: bigint, y: bigint) => (x > y ? -1 : x < y ? 1 : 0);

/** upstream exceedMemoryRequests / exceedDiskRequests. */
const exceedsRequest = withStats((a, b) => Number(b.usage > b.request) - Number(a.usage > a.request));
/** upstream priority: the lower priority first. */
const byPriority: Cmp = (a, b) => priority(a.pod) - priority(b.pod);
/** upstream memory / disk / process: the larger usage above the request first. */
const byUsage = withStats((a, b) => bigDesc(a.usage - a.request, b.usage - b.request));

/** upstream orderedBy: the first comparator that tells two pods apart decides. */
const orderedBy =
  (...cmps: Cmp[]): Cmp =>
  (a, b) => {
    for (const cmp of cmps) {
      const r = cmp(a, b);
      if (r !== 0) return r;
    }
    return 0;
  };

export function rankForEviction(pods: readonly Pod[], samples: readonly PodSample[], signal: Signal): Candidate[] {
  const byUid = new Map(samples.map((s) => [s.uid, s]));
  const cands = pods.map((pod): Candidate => {
    const sample = byUid.get(podUID(pod));
    return { pod, usage: usageOf(sample, signal), request: requestOf(pod, signal), ...(sample ? { sample } : {}) };
  });
  // rankPIDPressure has no "exceeds requests" step: pids cannot be requested.
  const cmp =
    signal === 'pid.available' ? orderedBy(byPriority, byUsage) : orderedBy(exceedsRequest, byPriority, byUsage);
  return cands.sort(cmp);
}
