/**
 * The CRI security context of a container and of its pod's sandbox, as upstream builds them
 * (pkg/kubelet/kuberuntime security_context.go determineEffectiveSecurityContext and
 * convertToRuntimeSecurityContext, pkg/securitycontext/util.go, kuberuntime_sandbox.go
 * generatePodSandboxLinuxConfig):
 *
 *   - the effective context: the pod's seLinuxOptions, runAsUser, runAsGroup and runAsNonRoot
 *     (and Windows options), each replaced by the container's own when it sets one;
 *   - run_as_user from it, else the image's numeric user (run_as_username when it is a name);
 *   - supplemental groups: the pod's fsGroup, then its supplementalGroups (the sandbox: fsGroup
 *     then supplementalGroups too), with supplementalGroupsPolicy passed as is. Upstream's
 *     "extra" groups come from persistent volumes' pv.beta.kubernetes.io/gid annotations; no PV is
 *     served here (refused at admission), so there are none;
 *   - masked and read-only /proc and /sys paths by procMount: upstream's defaults, none for
 *     Unmasked (admitted only with hostUsers: false, upstream's API validation);
 *   - SELinux options passed through; on a host without SELinux the runtime ignores them, as it
 *     does for upstream's kubelet.
 *
 * Capabilities, no_new_privs, the read-only rootfs and the seccomp and AppArmor profiles are
 * container-config.ts's (hardening); namespaces come from sandbox-config.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Container, Pod } from '../api/types.js';
import { allPodContainers } from '../api/pod.js';
import { kubeletErrorClass } from '../errors.js';
import type {
  LinuxContainerSecurityContext,
  LinuxSandboxSecurityContext,
  SELinuxOption,
  SupplementalGroupsPolicy,
} from '../cri/types.js';

type PodSecurityContext = NonNullable<NonNullable<Pod['spec']>['securityContext']>;
type ContainerSecurityContext = NonNullable<Container['securityContext']>;
type SELinuxOptions = NonNullable<PodSecurityContext['seLinuxOptions']>;

/** Who the image runs as (run-as-non-root.ts getImageUser): exactly one of uid and username is set. */
export interface ImageUser {
  uid?: bigint;
  /** Non-empty only when uid is absent. */
  username: string;
}

const given = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

/** A security context the runtime cannot be given: CreateContainerConfigError (or the sandbox's error). */
export class SecurityContextError extends kubeletErrorClass('KTS_ERR_CONTAINER_CONFIG') {}

/** The container fields upstream's DetermineEffectiveSecurityContext lays over the pod's. */
const CONTAINER_OVER_POD = [
  'seLinuxOptions',
  'capabilities',
  'privileged',
  'runAsUser',
  'runAsGroup',
  'runAsNonRoot',
  'readOnlyRootFilesystem',
  'allowPrivilegeEscalation',
  'procMount',
] as const;

/** upstream securityContextFromPodSecurityContext: the pod fields a container inherits. */
function fromPod(podSc: PodSecurityContext): ContainerSecurityContext {
  const out: ContainerSecurityContext = {};
  if (given(podSc.seLinuxOptions)) out.seLinuxOptions = { ...podSc.seLinuxOptions };
  if (given(podSc.windowsOptions)) out.windowsOptions = { ...podSc.windowsOptions };
  if (given(podSc.runAsUser)) out.runAsUser = podSc.runAsUser;
  if (given(podSc.runAsGroup)) out.runAsGroup = podSc.runAsGroup;
  if (given(podSc.runAsNonRoot)) out.runAsNonRoot = podSc.runAsNonRoot;
  return out;
}

type WindowsOptions = NonNullable<ContainerSecurityContext['windowsOptions']>;

/** Only the Windows options the container sets replace the pod's; the two GMSA fields go together. */
function mergeWindowsOptions(base: WindowsOptions | undefined, own: WindowsOptions): WindowsOptions {
  const out: WindowsOptions = { ...base };
  if (given(own.gmsaCredentialSpecName) || given(own.gmsaCredentialSpec)) {
    out.gmsaCredentialSpecName = own.gmsaCredentialSpecName;
    out.gmsaCredentialSpec = own.gmsaCredentialSpec;
  }
  if (given(own.runAsUserName)) out.runAsUserName = own.runAsUserName;
  if (given(own.hostProcess)) out.hostProcess = own.hostProcess;
  for (const k of Object.keys(out) as (keyof WindowsOptions)[]) if (!given(out[k])) delete out[k];
  return out;
}

/**
 * upstream securitycontext.DetermineEffectiveSecurityContext: with both levels set, the pod's
 * seLinuxOptions, windowsOptions, runAsUser, runAsGroup and runAsNonRoot, each replaced by the
 * container's (seLinuxOptions whole, windowsOptions field by field), plus the container's
 * capabilities, privileged, readOnlyRootFilesystem, allowPrivilegeEscalation and procMount. With
 * one level only, that level as it is.
 */
export function effectiveSecurityContext(pod: Pod, container: Container): ContainerSecurityContext {
  const podSc = pod.spec?.securityContext;
  const sc = container.securityContext;
  if (!given(podSc)) return { ...sc };
  const out = fromPod(podSc);
  if (!given(sc)) return out;
  for (const k of CONTAINER_OVER_POD) if (given(sc[k])) Object.assign(out, { [k]: sc[k] });
  if (given(sc.windowsOptions)) out.windowsOptions = mergeWindowsOptions(out.windowsOptions, sc.windowsOptions);
  return out;
}

/** upstream convertToRuntimeSELinuxOption: every part, empty when unset. */
export function runtimeSELinuxOption(opts: SELinuxOptions): SELinuxOption {
  return { user: opts.user ?? '', role: opts.role ?? '', type: opts.type ?? '', level: opts.level ?? '' };
}

/** upstream: the policy's CRI enum value; a value the CRI does not know is an error of the pod. */
export function runtimeSupplementalGroupsPolicy(policy: string | undefined): SupplementalGroupsPolicy | undefined {
  if (!given(policy)) return undefined;
  if (policy === 'Merge' || policy === 'Strict') return policy;
  throw new SecurityContextError(`unsupported supplementalGroupsPolicy: ${policy}`);
}

/** The pod's groups for a container: fsGroup, then supplementalGroups (upstream's order). */
function podGroups(podSc: PodSecurityContext): number[] {
  return [podSc.fsGroup, ...(podSc.supplementalGroups ?? [])].filter(given);
}

// ---- masked and read-only paths (upstream pkg/securitycontext) -------------------------------

/** upstream defaultMaskedPaths (kept in sync with moby's), before the per-CPU thermal paths. */
export const BASE_MASKED_PATHS: readonly string[] = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/interrupts',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];

/** upstream defaultReadonlyPaths. */
export const DEFAULT_READONLY_PATHS: readonly string[] = [
  '/proc/bus',
  '/proc/fs',
  '/proc/irq',
  '/proc/sys',
  '/proc/sysrq-trigger',
];

/** upstream possibleCPUs: the ranges of /sys/devices/system/cpu/possible ("0-3,5"); undefined if unreadable. */
export function parsePossibleCPUs(text: string): number[] | undefined {
  const cpus: number[] = [];
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return undefined;
    const start = Number(m[1]);
    const end = m[2] === undefined ? start : Number(m[2]);
    for (let cpu = start; cpu <= end; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** Where the masked paths' host facts come from (the tests give their own). */
export interface HostPaths {
  possibleCPUs(): string | undefined;
  exists(path: string): boolean;
}

const HOST: HostPaths = {
  possibleCPUs: () => {
    try {
      return readFileSync('/sys/devices/system/cpu/possible', 'utf8');
    } catch {
      return undefined;
    }
  },
  exists: (p) => existsSync(p),
};

/**
 * upstream defaultMaskedPaths (1.33+, the thermal side channel): the base list plus each possible
 * CPU's thermal_throttle directory that the host has (a CPU without one has nothing to hide).
 */
export function defaultMaskedPaths(host: HostPaths = HOST): string[] {
  const cpus = parsePossibleCPUs(host.possibleCPUs() ?? '') ?? [];
  const thermal = cpus.map((cpu) => `/sys/devices/system/cpu/cpu${cpu}/thermal_throttle`).filter((p) => host.exists(p));
  return [...BASE_MASKED_PATHS, ...thermal];
}

let hostMasked: string[] | undefined;

/** upstream ConvertToRuntimeMaskedPaths: none for Unmasked, else the defaults (read once). */
export function maskedPathsFor(procMount: string | undefined): string[] {
  if (procMount === 'Unmasked') return [];
  hostMasked ??= defaultMaskedPaths();
  return [...hostMasked];
}

/** upstream ConvertToRuntimeReadonlyPaths: none for Unmasked, else the defaults. */
export function readonlyPathsFor(procMount: string | undefined): string[] {
  return procMount === 'Unmasked' ? [] : [...DEFAULT_READONLY_PATHS];
}

// ---- the container and the sandbox -----------------------------------------------------------

/**
 * The identity part of upstream's determineEffectiveSecurityContext for one container: privileged,
 * SELinux, the user (the spec's, else the image's), run_as_group, supplemental groups and their
 * policy, and the /proc paths by procMount. `image` absent: no image user known (unit tests).
 */
export function containerIdentity(pod: Pod, container: Container, image?: ImageUser): LinuxContainerSecurityContext {
  const eff = effectiveSecurityContext(pod, container);
  const podSc: PodSecurityContext = pod.spec?.securityContext ?? {};
  const out: LinuxContainerSecurityContext = { privileged: eff.privileged === true };
  if (given(eff.seLinuxOptions)) out.selinuxOptions = runtimeSELinuxOption(eff.seLinuxOptions);
  if (given(eff.runAsUser)) out.runAsUser = { value: eff.runAsUser };
  else if (image?.uid !== undefined) out.runAsUser = { value: Number(image.uid) };
  if (!given(eff.runAsUser) && image?.username) out.runAsUsername = image.username;
  if (given(eff.runAsGroup)) out.runAsGroup = { value: eff.runAsGroup };
  const groups = podGroups(podSc);
  if (groups.length > 0) out.supplementalGroups = groups;
  const policy = runtimeSupplementalGroupsPolicy(podSc.supplementalGroupsPolicy);
  if (policy) out.supplementalGroupsPolicy = policy;
  out.maskedPaths = maskedPathsFor(eff.procMount);
  out.readonlyPaths = readonlyPathsFor(eff.procMount);
  return out;
}

/**
 * upstream generatePodSandboxLinuxConfig's security context, less the namespaces: privileged when
 * any container is, seccomp RuntimeDefault always (upstream #84623: the pause process never
 * needs more, so a pod-level profile can be as tight as its containers need), and the pod's
 * runAsUser, runAsGroup, groups (fsGroup then supplementalGroups), policy and SELinux options.
 * The sandbox's root filesystem is left writable, as upstream leaves readonly_rootfs unset.
 */
export function sandboxSecurityContext(pod: Pod): Omit<LinuxSandboxSecurityContext, 'namespaceOptions'> {
  const podSc: PodSecurityContext = pod.spec?.securityContext ?? {};
  const out: Omit<LinuxSandboxSecurityContext, 'namespaceOptions'> = {
    privileged: hasPrivilegedContainer(pod),
    seccomp: { profileType: 'RuntimeDefault' },
  };
  if (given(podSc.runAsUser)) out.runAsUser = { value: podSc.runAsUser };
  if (given(podSc.runAsGroup)) out.runAsGroup = { value: podSc.runAsGroup };
  const groups = podGroups(podSc);
  if (groups.length > 0) out.supplementalGroups = groups;
  const policy = runtimeSupplementalGroupsPolicy(podSc.supplementalGroupsPolicy);
  if (policy) out.supplementalGroupsPolicy = policy;
  if (given(podSc.seLinuxOptions)) out.selinuxOptions = runtimeSELinuxOption(podSc.seLinuxOptions);
  return out;
}

/**
 * upstream HasPrivilegedContainer (every container kind, ephemeral ones too): the sandbox must be
 * privileged for any privileged container to be allowed in it.
 */
function hasPrivilegedContainer(pod: Pod): boolean {
  return allPodContainers(pod).some((c) => c.securityContext?.privileged === true);
}
