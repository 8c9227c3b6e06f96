/** A ProbeManager whose results the test sets; records what the kubelet tells it. */
import type { ApiPodStatus, Pod } from '../../src/api/types.js';
import type { ProbeManager } from '../../src/prober/types.js';

export class FakeProber implements ProbeManager {
  readonly updates: Array<{ uid: string; status: ApiPodStatus; terminal: boolean }> = [];
  readonly ready = new Map<string, boolean>();
  readonly removed: string[] = [];
  private listeners: Array<(uid: string) => void> = [];

  updatePod(pod: Pod, status: ApiPodStatus, terminal: boolean): void {
    this.updates.push({ uid: pod.metadata!.uid!, status, terminal });
  }
  stopLivenessAndStartup(): void {}
  removePod(uid: string): void {
    this.removed.push(uid);
  }
  cleanupPods(desired: ReadonlySet<string>): void {
    for (const u of this.updates) if (!desired.has(u.uid) && !this.removed.includes(u.uid)) this.removed.push(u.uid);
  }
  onResultChange(l: (uid: string) => void): void {
    this.listeners.push(l);
  }
  readiness(id: string): boolean | undefined {
    return this.ready.get(id);
  }
  startup(): boolean | undefined {
    return true;
  }
  probeFailure(): undefined {
    return undefined;
  }
  startupProbeSucceeded(): boolean | undefined {
    return true;
  }
  stop(): void {}
  /** A result changed for this pod (as a results manager would announce it). */
  fire(uid: string): void {
    for (const l of this.listeners) l(uid);
  }
}
