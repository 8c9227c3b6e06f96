/**
 * Pod sysctls (upstream pkg/kubelet/sysctl): admission lets through the safe, namespaced ones
 * upstream allows by default — none of them in a namespace the pod shares with the host — and
 * rejects the others with upstream's SysctlForbidden; the sandbox then gets them
 * (kuberuntime/sandbox-config.ts). `allowedUnsafeSysctls` is not read: no unsafe sysctl is
 * allowed, upstream's default.
 */
import { release } from 'node:os';
import type { Pod } from '../api/types.js';
import { sysctlDotted } from '../util/sysctl.js';

export const SysctlForbiddenReason = 'SysctlForbidden';

/** admission.ts AdmitResult (not imported: admission.ts imports this file). */
interface SysctlAdmitResult {
  admit: boolean;
  reason?: string;
  message?: string;
}

/** upstream SafeSysctlAllowlist (1.35): name → the kernel that namespaced it, if newer than 3.x. */
const SAFE_SYSCTLS: Readonly<Record<string, [number, number] | undefined>> = {
  'kernel.shm_rmid_forced': undefined,
  'net.ipv4.ip_local_port_range': undefined,
  'net.ipv4.tcp_syncookies': undefined,
  'net.ipv4.ping_group_range': undefined,
  'net.ipv4.ip_unprivileged_port_start': undefined,
  'net.ipv4.ip_local_reserved_ports': [3, 16],
  'net.ipv4.tcp_keepalive_time': [4, 5],
  'net.ipv4.tcp_fin_timeout': [4, 6],
  'net.ipv4.tcp_keepalive_intvl': [4, 5],
  'net.ipv4.tcp_keepalive_probes': [4, 5],
  'net.ipv4.tcp_rmem': [4, 15],
  'net.ipv4.tcp_wmem': [4, 15],
};

/** The running kernel's major.minor ([0, 0] when unreadable: only the unversioned ones pass). */
function kernelVersion(text = release()): [number, number] {
  const m = /^(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

const atLeast = (k: [number, number], want: [number, number]): boolean =>
  k[0] > want[0] || (k[0] === want[0] && k[1] >= want[1]);

/** upstream patternAllowlist.validateSysctl: why `name` may not be set by `pod`, or undefined. */
function forbidden(name: string, pod: Pod, kernel: [number, number]): string | undefined {
  const dotted = sysctlDotted(name);
  const since = SAFE_SYSCTLS[dotted];
  if (!(dotted in SAFE_SYSCTLS) || (since && !atLeast(kernel, since))) return `"${dotted}" not allowlisted`;
  if (dotted.startsWith('net.') && pod.spec?.hostNetwork) return `"${dotted}" not allowed with host net enabled`;
  if (dotted.startsWith('kernel.shm') && pod.spec?.hostIPC) return `"${dotted}" not allowed with host ipc enabled`;
  return undefined;
}

/** The sysctl admission check (upstream allowlist.Admit). */
export function admitSysctls(pod: Pod, kernel = kernelVersion()): SysctlAdmitResult {
  for (const s of pod.spec?.securityContext?.sysctls ?? []) {
    const why = forbidden(s.name, pod, kernel);
    if (why) return { admit: false, reason: SysctlForbiddenReason, message: `forbidden sysctl: ${why}` };
  }
  return { admit: true };
}
