/**
 * upstream kubelet.getPullSecretsForPod: each of the pod's spec.imagePullSecrets read through the
 * secret manager. A secret that cannot be read (absent, or its first sync not done within
 * SYNC_WAIT_MS, the time upstream's watch-based manager waits) is left out with a log line and
 * one FailedToRetrieveImagePullSecret Warning event naming them all; the pull goes on with the
 * rest (and the node's keyring), as upstream's. Entries with an empty name are skipped silently.
 * In standalone mode there is no secret manager: every pull secret a static pod names is missing.
 */
import type { Pod } from '../api/types.js';
import { podNamespace } from '../api/pod.js';
import { podEventRef } from '../events/refs.js';
import type { EventRecorder } from '../events/types.js';
import type { PullSecret } from '../images/index.js';
import { sleep } from '../util/clock.js';
import { log } from '../util/log.js';

/** upstream watch-based manager Get: PollImmediate(10ms, 1s, hasSynced). */
export const SYNC_WAIT_MS = 1000;
const POLL_MS = 10;

type SecretLookup = (namespace: string, name: string) => (PullSecret & object) | null | undefined;

/** The secret once synced: the object, null when it does not exist, undefined when still not synced. */
async function synced(
  lookup: SecretLookup,
  ns: string,
  name: string,
  waitMs: number,
): Promise<PullSecret | null | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const s = lookup(ns, name);
    if (s !== undefined || Date.now() >= deadline) return s;
    await sleep(POLL_MS);
  }
}

export function createPullSecretsLookup(
  secret: SecretLookup,
  recorder: EventRecorder | undefined,
  waitMs = SYNC_WAIT_MS,
): (pod: Pod) => Promise<readonly PullSecret[]> {
  return async (pod) => {
    const refs = pod.spec?.imagePullSecrets ?? [];
    if (refs.length === 0) return [];
    const ns = podNamespace(pod);
    const found: PullSecret[] = [];
    const failed: string[] = [];
    for (const ref of refs) {
      if (!ref.name) continue;
      const s = await synced(secret, ns, ref.name, waitMs);
      if (s) found.push({ ...s, metadata: { ...s.metadata, name: ref.name, namespace: ns } });
      else {
        failed.push(ref.name);
        log('images').warn(
          {
            pod: `${ns}/${pod.metadata?.name ?? ''}`,
            secret: `${ns}/${ref.name}`,
            err: s === null ? 'not found' : 'not synced',
          },
          'Unable to retrieve pull secret, the image pull may not succeed.',
        );
      }
    }
    if (failed.length > 0)
      recorder?.event(
        podEventRef(pod),
        'Warning',
        'FailedToRetrieveImagePullSecret',
        `Unable to retrieve some image pull secrets (${failed.join(', ')}); attempting to pull the image may not succeed.`,
      );
    return found;
  };
}
