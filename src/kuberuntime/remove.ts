/**
 * Removing containers and sandboxes (upstream removeContainer, removeContainerLog and the GC's
 * removeSandbox). A container's log file and its termination message file go first: the runtime
 * deletes neither, and a file whose container is gone can no longer be found by anyone.
 */
import { rm } from 'node:fs/promises';
import type { ContainerStatus, RuntimeService } from '../cri/types.js';
import { log } from '../util/log.js';
import { isNotFound } from '../cri/errors.js';
import { getContainerInfoFromAnnotations, getContainerInfoFromLabels } from './labels.js';
import { ownMessageFile, removeTerminationMessageFile } from './termination-message.js';

/** The termination message file this agent made for the container (termination-message.ts). */
async function removeMessageFile(st: ContainerStatus): Promise<void> {
  const labeled = getContainerInfoFromLabels(st.labels);
  if (!labeled) return;
  const { terminationMessagePath } = getContainerInfoFromAnnotations(st.annotations).info;
  const file = ownMessageFile(st, { ...labeled, terminationMessagePath });
  if (file) await removeTerminationMessageFile(file);
}

/** Removes the container's log file, its termination message file and the container; NOT_FOUND counts as removed. */
export async function removeContainer(runtime: RuntimeService, id: string): Promise<void> {
  try {
    const st = await runtime.containerStatus(id);
    if (st.logPath) await rm(st.logPath, { force: true });
    await removeMessageFile(st);
  } catch (err) {
    if (isNotFound(err)) return;
    log('kuberuntime').warn(
      { containerId: id, err },
      'cannot remove container log or termination message file; removing the container anyway',
    );
  }
  try {
    await runtime.removeContainer(id);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Stops (a sandbox may still hold a network namespace) and removes a sandbox. */
export async function removeSandbox(runtime: RuntimeService, id: string): Promise<void> {
  try {
    await runtime.stopPodSandbox(id);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  try {
    await runtime.removePodSandbox(id);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Runs removals one after another, logging (not throwing) each failure; returns how many failed. */
export async function removeAllLogged(
  what: string,
  ids: string[],
  remove: (id: string) => Promise<void>,
): Promise<number> {
  let failed = 0;
  for (const id of ids) {
    try {
      await remove(id);
    } catch (err) {
      failed++;
      log('kuberuntime').error({ id, err }, `failed to remove ${what}`);
    }
  }
  return failed;
}
