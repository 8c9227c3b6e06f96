/**
 * Pod sysctls (upstream pkg/kubelet/sysctl): admission lets through upstream's safe set (those
 * the running kernel namespaces) and the node's `allowedUnsafeSysctls` (names, or prefixes
 * ending in `*`, each known to be namespaced: checked when the config is loaded) — never one in a
 * namespace the pod shares with the host (hostNetwork for net.*, hostIPC for the IPC ones) — and
 * rejects the others with upstream's SysctlForbidden. The sandbox then gets them
 * (kuberuntime/sandbox-config.ts).
 */
import { release } from 'node:os';
import type { Pod } from '../api/types.js';
import { newSysctlAllowlist, sysctlForbidden, type SysctlAllowlist } from '../util/sysctl.js';

export type { SysctlAllowlist } from '../util/sysctl.js';

export const SysctlForbiddenReason = 'SysctlForbidden';

/** admission.ts AdmitResult (not imported: admission.ts imports this file). */
interface SysctlAdmitResult {
  admit: boolean;
  reason?: string;
  message?: string;
}

type KernelVersion = [number, number];

/** upstream safeSysctls (1.35), in its order: name and the kernel that namespaced it, if newer than 3.x. */
const SAFE_SYSCTLS: readonly [string, KernelVersion?][] = [
  ['kernel.shm_rmid_forced'],
  ['net.ipv4.ip_local_port_range'],
  ['net.ipv4.tcp_syncookies'],
  ['net.ipv4.ping_group_range'],
  ['net.ipv4.ip_unprivileged_port_start'],
  ['net.ipv4.ip_local_reserved_ports', [3, 16]],
  ['net.ipv4.tcp_keepalive_time', [4, 5]],
  ['net.ipv4.tcp_fin_timeout', [4, 6]],
  ['net.ipv4.tcp_keepalive_intvl', [4, 5]],
  ['net.ipv4.tcp_keepalive_probes', [4, 5]],
  ['net.ipv4.tcp_rmem', [4, 15]],
  ['net.ipv4.tcp_wmem', [4, 15]],
];

/** The running kernel's major.minor; undefined when unreadable (only the unversioned ones pass). */
export function kernelVersion(text = release()): KernelVersion | undefined {
  const m = /^(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

const atLeast = (k: KernelVersion, want: KernelVersion): boolean =>
  k[0] > want[0] || (k[0] === want[0] && k[1] >= want[1]);

/** upstream getSafeSysctlAllowlist: the safe sysctls `kernel` namespaces. */
export function safeSysctlAllowlist(kernel: KernelVersion | undefined): string[] {
  return SAFE_SYSCTLS.filter(([, since]) => !since || (kernel && atLeast(kernel, since))).map(([name]) => name);
}

/**
 * The node's allowlist (upstream NewMainKubelet): the safe set plus `allowedUnsafeSysctls`, which
 * config validation already checked (a bad pattern throws ConfigError here too).
 */
export function nodeSysctlAllowlist(allowedUnsafe: readonly string[] = [], kernel = kernelVersion()): SysctlAllowlist {
  return newSysctlAllowlist([...safeSysctlAllowlist(kernel), ...allowedUnsafe]);
}

const DEFAULT_ALLOWLIST = nodeSysctlAllowlist();

/** The sysctl admission check (upstream patternAllowlist.Admit). */
export function admitSysctls(pod: Pod, allowlist: SysctlAllowlist = DEFAULT_ALLOWLIST): SysctlAdmitResult {
  const host = { net: pod.spec?.hostNetwork === true, ipc: pod.spec?.hostIPC === true };
  for (const s of pod.spec?.securityContext?.sysctls ?? []) {
    const why = sysctlForbidden(allowlist, s.name, host);
    if (why) return { admit: false, reason: SysctlForbiddenReason, message: `forbidden sysctl: ${why}` };
  }
  return { admit: true };
}
