/** upstream prober/results: the cached result per container ID, with change notifications. */
import type { CachedResult, ResultsManager, ResultUpdate } from './types.js';

export class ResultsCache implements ResultsManager {
  private readonly results = new Map<string, CachedResult>();
  private readonly listeners: Array<(u: ResultUpdate) => void> = [];

  constructor(private readonly probeType: ResultUpdate['probeType']) {}

  get(containerId: string): CachedResult | undefined {
    return this.results.get(containerId);
  }

  set(containerId: string, result: CachedResult, podUid: string): void {
    if (this.results.get(containerId) === result) return;
    this.results.set(containerId, result);
    const u: ResultUpdate = { containerId, result, podUid, probeType: this.probeType };
    for (const l of this.listeners) l(u);
  }

  remove(containerId: string): void {
    this.results.delete(containerId);
  }

  onUpdate(listener: (u: ResultUpdate) => void): void {
    this.listeners.push(listener);
  }
}
