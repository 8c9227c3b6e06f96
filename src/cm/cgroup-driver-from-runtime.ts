/**
 * The cgroup driver in effect (upstream getCgroupDriverFromCRI, KubeletCgroupDriverFromCRI, GA in
 * 1.34): the runtime's RuntimeConfig answer wins over cgroupDriver, because the two must agree and
 * the runtime's runc option is the one that cannot be changed without restarting every pod. A
 * runtime without RuntimeConfig (containerd 1.6 and 1.7) keeps the configured driver, as released
 * upstream kubelets do, and sets kubelet_cri_losing_support.
 *
 * Unlike upstream, a runtime that does not answer at all (socket absent, or every call timing
 * out) does not stop start-up: the agent starts with the configured driver and reports the node
 * NotReady until the runtime is up, as it does for every other call. What still stops it is an
 * answer it cannot use.
 */
import { CriError } from '../errors.js';
import { sleep as sleepMs } from '../util/clock.js';
import type { RuntimeConfigInfo } from '../cri/index.js';
import type { CgroupDriver } from '../config/cgroup-drivers.js';

export interface RuntimeConfigSource {
  runtimeConfig(): Promise<RuntimeConfigInfo>;
}

export interface CgroupDriverChoice {
  driver: CgroupDriver;
  /**
   * runtime: RuntimeConfig named it. Otherwise the configured driver, because the runtime has no
   * RuntimeConfig (unimplemented: kubelet_cri_losing_support), its reply has no Linux part
   * (no-linux), or it did not answer (unreachable: a guess the runtime may contradict later).
   */
  from: 'runtime' | 'unimplemented' | 'no-linux' | 'unreachable';
  /** Why the configured driver was kept (every `from` but runtime). */
  reason?: string;
}

export interface CgroupDriverOptions {
  /** Upstream: 3 attempts, 2 s apart, for a runtime still starting. */
  attempts?: number;
  retryDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** No answer at all, as opposed to an answer the agent cannot use. */
const UNREACHABLE: ReadonlySet<string> = new Set(['KTS_ERR_CRI_UNAVAILABLE', 'KTS_ERR_CRI_TIMEOUT']);

export async function cgroupDriverFromRuntime(
  runtime: RuntimeConfigSource,
  configured: CgroupDriver,
  opts: CgroupDriverOptions = {},
): Promise<CgroupDriverChoice> {
  const attempts = opts.attempts ?? 3;
  const sleep = opts.sleep ?? sleepMs;
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    let info: RuntimeConfigInfo;
    try {
      info = await runtime.runtimeConfig();
    } catch (err) {
      // Unimplemented is an answer, not a failure: it is not retried.
      if (err instanceof CriError && err.code === 'KTS_ERR_CRI_UNIMPLEMENTED') {
        return { driver: configured, from: 'unimplemented', reason: 'the runtime does not implement RuntimeConfig' };
      }
      last = err;
      if (i + 1 < attempts) await sleep(opts.retryDelayMs ?? 2000);
      continue;
    }
    if (!info.cgroupDriver)
      return {
        driver: configured,
        from: 'no-linux',
        reason: "the runtime's RuntimeConfig reply has no Linux configuration",
      };
    return { driver: info.cgroupDriver, from: 'runtime' };
  }
  const detail = last instanceof Error ? last.message : String(last);
  if (last instanceof CriError && UNREACHABLE.has(last.code)) {
    return {
      driver: configured,
      from: 'unreachable',
      reason: `the runtime did not answer RuntimeConfig in ${attempts} attempts (${detail})`,
    };
  }
  throw new CriError(
    last instanceof CriError ? last.code : 'KTS_ERR_CRI',
    'RuntimeConfig',
    `the cgroup driver could not be read from the runtime after ${attempts} attempts (${detail}); the agent does not start`,
    { grpcCode: last instanceof CriError ? last.grpcCode : undefined, cause: last },
  );
}
