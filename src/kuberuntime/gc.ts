/**
 * Container and sandbox garbage collection (upstream kuberuntime_gc.go containerGC), with
 * upstream's policy knobs:
 *
 *  - dead containers (not running) older than `minAgeMs` (by creation time) are grouped per
 *    (pod UID, container name), newest first; a pod that is no longer active loses all of them;
 *    an active pod keeps the newest `maxPerPodContainer` (1: `kubectl logs --previous`);
 *  - then, when `maxContainers` ≥ 0 and more dead containers remain, every group is cut to
 *    maxContainers / groups (at least 1) and, if still too many, the oldest go first across
 *    groups;
 *  - a container in state unknown is stopped before it is removed;
 *  - sandboxes that are not ready and hold no containers: all of a pod that is no longer active,
 *    all but the newest of an active pod;
 *  - log directories and volumes (torn down by the volume manager: tmpfs unmounted) of pods
 *    that are neither active nor have a sandbox left.
 *
 * Pod cgroups go in housekeeping (orphaned-pod-cgroups.ts), as upstream.
 *
 * Only objects with our labels are considered. Running containers and ready sandboxes are never
 * touched: stopping them is killPod's job (the kubelet kills orphans first). A failed step does
 * not stop the others; see garbageCollect.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container as CriContainer, PodSandbox, RuntimeService } from '../cri/types.js';
import { CriError, errorMessage, KubeletError } from '../errors.js';
import { log } from '../util/log.js';
import { podUIDOfLogsDirName } from '../util/pod-identity.js';
import { getContainerInfoFromLabels, getPodSandboxInfoFromLabels } from './labels.js';
import { killContainer } from './kill.js';
import { removeAllLogged, removeContainer, removeSandbox } from './remove.js';

/** upstream GCPolicy (kubecontainer.GCPolicy); -1 / 0 as upstream's flags mean. */
export interface GCPolicy {
  /** Minimum age (since creation) of a dead container before it may be collected; upstream MinAge (default 0). */
  minAgeMs: number;
  /** Dead containers kept per (pod, container name); negative: no limit. Upstream default 1. */
  maxPerPodContainer: number;
  /** Dead containers kept on the node; negative: no limit. Upstream default -1. */
  maxContainers: number;
}

export const DEFAULT_GC_POLICY: Readonly<GCPolicy> = Object.freeze({
  minAgeMs: 0,
  maxPerPodContainer: 1,
  maxContainers: -1,
});

/**
 * A container in state CREATED younger than this may be one SyncPod is about to start; removing
 * it would turn a good start into RunContainerError.
 */
const CREATED_GRACE_MS = 60_000;

export interface GcDeps {
  runtime: RuntimeService;
  podLogsDir: string;
  rootDir: string;
  now: () => number;
  policy?: GCPolicy | undefined;
  /** Tears down the volumes of a pod that is gone (the volume manager's unmountPodVolumes). */
  removePodVolumes: (uid: string) => Promise<void>;
  /** Then what volume plugins mounted outside pod dirs that no pod uses (CSI global mounts). */
  cleanupOrphanedVolumes?: () => Promise<void>;
}

/** The pods whose content is kept; only `has` is asked (the kubelet answers per pod, as upstream's podStateProvider). */
type ActivePods = Pick<ReadonlySet<string>, 'has'>;

interface GcInfo {
  id: string;
  name: string;
  createdAt: bigint;
  unknown: boolean;
}

function byCreatedDesc<T extends { createdAt: bigint }>(a: T, b: T): number {
  return a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0;
}

/**
 * One collection (upstream containerGC.GarbageCollect): every step runs even when one before it
 * failed; the failures come back as one error naming each step, for the caller's loop to log
 * and record (ContainerGCFailed). Failures to remove one object are logged where they happen and
 * do not fail the collection, as upstream.
 *
 * `active` is only asked `has(uid)`: a pod it holds keeps its newest dead instances, its newest
 * sandbox, its logs and volumes; the content of any other pod goes.
 */
export async function garbageCollect(deps: GcDeps, active: ActivePods): Promise<void> {
  const failures: { what: string; err: unknown }[] = [];
  for (const [what, step] of [
    ['containers', evictContainers],
    ['sandboxes', evictSandboxes],
    ['pod directories', evictPodLogsAndVolumes],
  ] as const) {
    try {
      await step(deps, active);
    } catch (err) {
      failures.push({ what, err });
    }
  }
  if (failures.length > 0) throw gcFailure(failures);
}

/**
 * upstream's aggregate error. A step fails, as a rule, because a CRI list failed: then it is a
 * CRI failure (KTS_ERR_CRI) whose cause holds the runtime's own errors; other failures (a
 * volume teardown) are passed on as they were raised.
 */
function gcFailure(failures: { what: string; err: unknown }[]): Error {
  const message = failures.map((f) => `garbage collection of ${f.what} failed: ${errorMessage(f.err)}`).join('; ');
  const causes = failures.map((f) => f.err);
  if (!causes.some((e) => e instanceof CriError)) return new AggregateError(causes, message);
  return new KubeletError('KTS_ERR_CRI', message, {
    cause: causes.length === 1 ? causes[0] : new AggregateError(causes),
  });
}

/** upstream evictableContainers: dead containers of ours older than minAge, by (pod UID, name), newest first. */
function evictUnits(containers: CriContainer[], now: number, minAgeMs: number): Map<string, GcInfo[]> {
  const units = new Map<string, GcInfo[]>();
  const newestGCTime = BigInt(now - minAgeMs) * 1_000_000n;
  for (const c of containers) {
    const info = getContainerInfoFromLabels(c.labels);
    if (!info || c.state === 'CONTAINER_RUNNING') continue;
    // (MinAge 0 takes everything, even a clock of the runtime's that runs a little ahead.)
    if (minAgeMs > 0 && c.createdAt > newestGCTime) continue;
    if (c.state === 'CONTAINER_CREATED' && now - Number(c.createdAt / 1_000_000n) < CREATED_GRACE_MS) continue;
    const key = `${info.podUid}\u0000${info.containerName}`;
    let unit = units.get(key);
    if (!unit) units.set(key, (unit = []));
    unit.push({ id: c.id, name: info.containerName, createdAt: c.createdAt, unknown: c.state === 'CONTAINER_UNKNOWN' });
  }
  for (const u of units.values()) u.sort(byCreatedDesc);
  return units;
}

function uidOf(key: string): string {
  return key.slice(0, key.indexOf('\u0000'));
}

/** upstream removeOldestN: the last `count` of a newest-first list, oldest first; unknown ones are stopped first. */
async function removeOldest(deps: GcDeps, list: GcInfo[], count: number): Promise<void> {
  const victims = list.slice(Math.max(0, list.length - count)).reverse();
  await removeAllLogged(
    'container',
    victims.map((v) => v.id),
    async (id) => {
      const v = victims.find((x) => x.id === id)!;
      if (v.unknown) {
        await killContainer(
          { runtime: deps.runtime },
          {
            id,
            name: v.name,
            message: 'Container is in unknown state, try killing it before removal',
            reason: 'Unknown',
          },
        );
      }
      await removeContainer(deps.runtime, id);
    },
  );
}

async function evictContainers(deps: GcDeps, active: ActivePods): Promise<void> {
  const policy = deps.policy ?? DEFAULT_GC_POLICY;
  const units = evictUnits(await deps.runtime.listContainers(), deps.now(), policy.minAgeMs);
  let removed = 0;
  // Pods that are gone lose every dead container.
  for (const [key, unit] of units) {
    if (active.has(uidOf(key))) continue;
    await removeOldest(deps, unit, unit.length);
    removed += unit.length;
    units.delete(key);
  }
  const enforcePerUnit = async (max: number) => {
    for (const [key, unit] of units) {
      if (unit.length <= max) continue;
      await removeOldest(deps, unit, unit.length - max);
      removed += unit.length - max;
      units.set(key, unit.slice(0, max));
    }
  };
  if (policy.maxPerPodContainer >= 0) await enforcePerUnit(policy.maxPerPodContainer);
  const total = () => [...units.values()].reduce((n, u) => n + u.length, 0);
  if (policy.maxContainers >= 0 && total() > policy.maxContainers) {
    // An equal share per unit (at least one), then the oldest first across all units.
    await enforcePerUnit(Math.max(1, Math.floor(policy.maxContainers / Math.max(1, units.size))));
    const left = total();
    if (left > policy.maxContainers) {
      const flat = [...units.values()].flat().sort(byCreatedDesc);
      await removeOldest(deps, flat, left - policy.maxContainers);
      removed += left - policy.maxContainers;
    }
  }
  if (removed > 0) log('kuberuntime').info({ count: removed }, 'removed dead containers');
}

async function evictSandboxes(deps: GcDeps, active: ActivePods): Promise<void> {
  const [containers, sandboxes] = await Promise.all([deps.runtime.listContainers(), deps.runtime.listPodSandbox()]);
  const withContainers = new Set(containers.map((c) => c.podSandboxId));
  const byPod = new Map<string, PodSandbox[]>();
  for (const s of sandboxes) {
    const info = getPodSandboxInfoFromLabels(s.labels);
    if (!info) continue;
    let list = byPod.get(info.podUid);
    if (!list) byPod.set(info.podUid, (list = []));
    list.push(s);
  }
  const ids: string[] = [];
  for (const [uid, list] of byPod) {
    list.sort(byCreatedDesc);
    // An active pod keeps its newest sandbox even when it is dead: SyncPod reads its attempt.
    const candidates = active.has(uid) ? list.slice(1) : list;
    for (const s of candidates) {
      if (s.state !== 'SANDBOX_READY' && !withContainers.has(s.id)) ids.push(s.id);
    }
  }
  if (ids.length > 0) log('kuberuntime').info({ count: ids.length }, 'removing dead sandboxes');
  await removeAllLogged('sandbox', ids, (id) => removeSandbox(deps.runtime, id));
}

/** Log directories and volumes of pods that are neither active nor have a sandbox or container left. */
async function evictPodLogsAndVolumes(deps: GcDeps, active: ActivePods): Promise<void> {
  const [sandboxes, containers] = await Promise.all([deps.runtime.listPodSandbox(), deps.runtime.listContainers()]);
  const present = new Set<string>();
  for (const s of sandboxes) {
    const uid = getPodSandboxInfoFromLabels(s.labels)?.podUid;
    if (uid) present.add(uid);
  }
  for (const c of containers) {
    const uid = getContainerInfoFromLabels(c.labels)?.podUid;
    if (uid) present.add(uid);
  }
  const gone = (uid: string) => !active.has(uid) && !present.has(uid);
  for (const dir of await readdir(deps.podLogsDir).catch(() => [] as string[])) {
    const uid = podUIDOfLogsDirName(dir);
    if (!uid || !gone(uid)) continue;
    await rm(join(deps.podLogsDir, dir), { recursive: true, force: true }).catch((err) =>
      log('kuberuntime').error({ err, dir }, 'failed to remove pod log directory'),
    );
  }
  for (const uid of await readdir(join(deps.rootDir, 'pods')).catch(() => [] as string[])) {
    if (!gone(uid)) continue;
    await deps
      .removePodVolumes(uid)
      .catch((err) => log('kuberuntime').error({ err: errorMessage(err), uid }, 'failed to remove pod volumes'));
  }
  await deps
    .cleanupOrphanedVolumes?.()
    .catch((err) => log('kuberuntime').error({ err: errorMessage(err) }, 'failed to clean up orphaned volumes'));
}
