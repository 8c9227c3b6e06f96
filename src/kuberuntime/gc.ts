/**
 * Container and sandbox garbage collection (upstream kuberuntime_gc.go with the default policy:
 * MaxPerPodContainer 1, MaxContainers unlimited, MinAge 0):
 *
 *  - exited containers: all of a pod that is no longer active; otherwise all but the newest dead
 *    instance per (pod, container name), which `kubectl logs --previous` reads;
 *  - sandboxes that are not ready and hold no containers: all of a pod that is no longer active,
 *    all but the newest sandbox of an active pod;
 *  - the log directories and emptyDir volumes of pods that are gone.
 *
 * Running containers and ready sandboxes are never touched: stopping them is killPod's job.
 * Every failure is logged and the collection goes on.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container as CriContainer, PodSandbox, RuntimeService } from '../cri/types.js';
import { log } from '../util/log.js';
import { getContainerInfoFromLabels, getPodSandboxInfoFromLabels } from './labels.js';
import { removeAllLogged, removeContainer, removeSandbox } from './remove.js';
import { removePodEmptyDirs } from './volumes.js';

export interface GcDeps {
  runtime: RuntimeService;
  podLogsDir: string;
  rootDir: string;
  now: () => number;
}

/** Instances kept per (pod, container name) of an active pod. */
export const MAX_PER_POD_CONTAINER = 1;
/**
 * A container in state CREATED younger than this may be one SyncPod is about to start; removing
 * it would turn a good start into RunContainerError.
 */
export const CREATED_GRACE_MS = 60_000;

function byCreatedDesc<T extends { createdAt: bigint }>(a: T, b: T): number {
  return a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0;
}

export async function garbageCollect(deps: GcDeps, active: ReadonlySet<string>): Promise<void> {
  try {
    await evictContainers(deps, active);
    await evictSandboxes(deps, active);
    await evictPodLogsAndVolumes(deps, active);
  } catch (err) {
    log('kuberuntime').error({ err }, 'garbage collection failed');
  }
}

/** Exited (and stale created) containers of ours, grouped by pod UID and container name. */
function evictableContainers(containers: CriContainer[], now: number): Map<string, CriContainer[]> {
  const groups = new Map<string, CriContainer[]>();
  for (const c of containers) {
    const info = getContainerInfoFromLabels(c.labels);
    if (!info || c.state === 'CONTAINER_RUNNING') continue;
    if (c.state === 'CONTAINER_CREATED' && now - Number(c.createdAt / 1_000_000n) < CREATED_GRACE_MS) continue;
    const key = `${info.podUid}\u0000${info.containerName}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(c);
  }
  for (const g of groups.values()) g.sort(byCreatedDesc);
  return groups;
}

async function evictContainers(deps: GcDeps, active: ReadonlySet<string>): Promise<void> {
  const groups = evictableContainers(await deps.runtime.listContainers(), deps.now());
  const ids: string[] = [];
  for (const [key, list] of groups) {
    const uid = key.slice(0, key.indexOf('\u0000'));
    const keep = active.has(uid) ? MAX_PER_POD_CONTAINER : 0;
    ids.push(...list.slice(keep).map((c) => c.id));
  }
  if (ids.length > 0) log('kuberuntime').info({ count: ids.length }, 'removing dead containers');
  await removeAllLogged('container', ids, (id) => removeContainer(deps.runtime, id));
}

async function evictSandboxes(deps: GcDeps, active: ReadonlySet<string>): Promise<void> {
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

/** Log directories are <ns>_<name>_<uid>; the UID is after the last underscore. */
function uidOfLogDir(dir: string): string | undefined {
  const parts = dir.split('_');
  return parts.length >= 3 ? parts[parts.length - 1] : undefined;
}

/** Log directories and emptyDirs of pods that are neither active nor have a sandbox left. */
async function evictPodLogsAndVolumes(deps: GcDeps, active: ReadonlySet<string>): Promise<void> {
  const sandboxes = await deps.runtime.listPodSandbox();
  const present = new Set(sandboxes.map((s) => getPodSandboxInfoFromLabels(s.labels)?.podUid).filter((u): u is string => !!u));
  const gone = (uid: string) => !active.has(uid) && !present.has(uid);
  for (const dir of await readdir(deps.podLogsDir).catch(() => [] as string[])) {
    const uid = uidOfLogDir(dir);
    if (!uid || !gone(uid)) continue;
    await rm(join(deps.podLogsDir, dir), { recursive: true, force: true }).catch((err) => log('kuberuntime').error({ err, dir }, 'failed to remove pod log directory'));
  }
  for (const uid of await readdir(join(deps.rootDir, 'pods')).catch(() => [] as string[])) {
    if (!gone(uid)) continue;
    await removePodEmptyDirs(deps.rootDir, uid).catch((err) => log('kuberuntime').error({ err, uid }, 'failed to remove pod volumes'));
  }
}
