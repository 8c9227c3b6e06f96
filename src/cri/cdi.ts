/**
 * Does the runtime apply CRI `CDI_devices` (ContainerConfig field 17)? Device plugins may answer
 * Allocate with CDI device names; a runtime without CDI drops the field without a word (containerd
 * 1.6 does not know it; 1.7 ignores it unless its CRI plugin has `enable_cdi = true`; 2.x has it on
 * by default). Upstream passes the names on regardless and the container starts without its
 * device; we refuse such a container instead (docs/differences.md), which needs to know.
 *
 * The runtime says it in `Status(verbose)`: containerd puts its CRI config, as JSON, in
 * `info["config"]`, with `enableCDI` and `cdiSpecDirs` (1.7 and 2.x; what `crictl info` prints).
 * A reply without them (1.6, another runtime) means no CDI.
 */

export interface CdiSupport {
  /** The runtime injects CDI devices named in CDI_devices. */
  enabled: boolean;
  /** Where it reads CDI specs (empty when not reported). */
  specDirs: string[];
}

const NO_CDI: CdiSupport = { enabled: false, specDirs: [] };

/** CdiSupport from a verbose Status reply's `info` map (containerd's `config` JSON). */
export function cdiSupportFromStatusInfo(info: Readonly<Record<string, string>> | undefined): CdiSupport {
  const raw = info?.config;
  if (!raw) return NO_CDI;
  let config: unknown;
  try {
    config = JSON.parse(raw);
  } catch {
    return NO_CDI;
  }
  if (typeof config !== 'object' || config === null) return NO_CDI;
  const { enableCDI, cdiSpecDirs } = config as { enableCDI?: unknown; cdiSpecDirs?: unknown };
  const dirs = Array.isArray(cdiSpecDirs) ? cdiSpecDirs.filter((d): d is string => typeof d === 'string') : [];
  return { enabled: enableCDI === true, specDirs: enableCDI === true ? dirs : [] };
}

/**
 * The refusal when a container's device options carry CDI names and the runtime would drop them:
 * the message of the container's CreateContainerConfigError.
 */
export function cdiUnsupportedMessage(names: readonly string[]): string {
  return (
    `the device plugin gave CDI devices ${names.join(', ')}, but the container runtime does not apply CDI ` +
    `devices (its CRI status reports no enableCDI: containerd 1.6 has no CDI, 1.7 needs enable_cdi = true in ` +
    `its CRI plugin config); refusing to start the container without them`
  );
}

/** How long an answer is kept: a runtime upgraded or reconfigured under the agent is seen within this. */
export const CDI_SUPPORT_TTL_MS = 60_000;

/**
 * The runtime's CDI support, asked lazily (only a container with CDI names needs it) and kept for
 * `ttlMs`. A failed Status call is not kept: the next container asks again.
 */
export class CdiSupportCache {
  private value: { at: number; support: Promise<CdiSupport> } | undefined;

  constructor(
    private readonly statusInfo: () => Promise<Record<string, string>>,
    private readonly ttlMs = CDI_SUPPORT_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<CdiSupport> {
    const t = this.now();
    if (this.value && t - this.value.at < this.ttlMs) return this.value.support;
    const support = this.statusInfo().then(cdiSupportFromStatusInfo);
    const entry = { at: t, support };
    this.value = entry;
    support.catch(() => {
      if (this.value === entry) this.value = undefined;
    });
    return support;
  }
}

/**
 * For container config generation: undefined when there are no CDI names or the runtime applies
 * them, else the refusal (cdiUnsupportedMessage). A runtime that cannot say (a fake without
 * cdiSupported) counts as one without CDI.
 */
export async function cdiRefusal(
  runtime: { cdiSupported?(): Promise<boolean> },
  names: readonly string[],
): Promise<string | undefined> {
  if (names.length === 0) return undefined;
  const applies = runtime.cdiSupported ? await runtime.cdiSupported() : false;
  return applies ? undefined : cdiUnsupportedMessage(names);
}
