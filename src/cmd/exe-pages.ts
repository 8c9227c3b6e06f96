/**
 * Takes the node binary's pages that the agent no longer uses out of its RSS: 10 s after start
 * (module loading, snapshot deserialization and the sources' first sync are over by then) and
 * every minute after, the addon's releaseExecutablePages drops the process's mappings of the
 * executable's read-only, never-written pages (madvise MADV_DONTNEED; native/src/
 * release_exe_pages.cc says why that is safe). They stay in the page cache; those still in use
 * are mapped again by the next touch (a minor fault), so RSS settles at what the last minute
 * used. At 100 pods: the binary's pages 44 → ~20 MiB, ~2 ms per release plus the re-faults
 * (docs/performance.md). Without the addon (or with KUBELET_TS_NATIVE=0) nothing runs.
 */
import { addonFunction } from '../native/index.js';
import { log } from '../util/log.js';

export const EXE_PAGES_FIRST_MS = 10_000;
export const EXE_PAGES_INTERVAL_MS = 60_000;

/** What one release did: mappings advised, their length, and how much of them was resident. */
export interface ExePagesRelease {
  mappings: number;
  bytes: number;
  residentBytes: number;
}

/** The addon's releaseExecutablePages, or undefined (no addon, native disabled, or a binary without it). */
export function addonReleaseExecutablePages(): (() => ExePagesRelease | null) | undefined {
  return addonFunction<() => ExePagesRelease | null>('releaseExecutablePages');
}

/** Calls `release` after `firstMs`, then every `intervalMs` (not keeping the process alive), until stop(). */
export function startExePagesRelease(
  release: (() => ExePagesRelease | null) | undefined,
  firstMs = EXE_PAGES_FIRST_MS,
  intervalMs = EXE_PAGES_INTERVAL_MS,
): { stop(): void } {
  if (!release) return { stop: () => undefined };
  const once = () => {
    const r = release();
    if (r)
      log('exe-pages').debug(
        { mappings: r.mappings, residentMiB: Math.round(r.residentBytes / 2 ** 20) },
        "Released the executable's pages from RSS",
      );
  };
  let timer: NodeJS.Timeout = setTimeout(() => {
    once();
    timer = setInterval(once, intervalMs);
    timer.unref();
  }, firstMs);
  timer.unref();
  return { stop: () => clearTimeout(timer) };
}
