/**
 * The desired pods (upstream pod.Manager): what the sources want on this node, by UID only.
 * Mirror pods are not kept here: API server mode pairs them with their static pods in
 * src/apimode/mirror-pods.ts.
 */
import type { Pod } from '../api/types.js';

export class PodManager {
  private readonly byUid = new Map<string, Pod>();

  addPod(pod: Pod): void {
    const uid = pod.metadata?.uid;
    if (uid) this.byUid.set(uid, pod);
  }

  updatePod(pod: Pod): void {
    this.addPod(pod);
  }

  removePod(pod: Pod): void {
    const uid = pod.metadata?.uid;
    if (uid) this.byUid.delete(uid);
  }

  getPods(): Pod[] {
    return [...this.byUid.values()];
  }

  getPodByUID(uid: string): Pod | undefined {
    return this.byUid.get(uid);
  }
}
