/** Sysctl names as the kernel and the runtime take them, and upstream's allowlist of them. */
import { ConfigError } from '../errors.js';

/**
 * upstream ConvertSysctlVariableToDotsSeparator: a name whose first separator is '/'
 * (`net/ipv4/ip_forward`) swaps '/' and '.', so a '.' inside a component survives.
 */
export function sysctlDotted(name: string): string {
  const first = /[./]/.exec(name);
  if (!first || first[0] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '/' ? '.' : '/'));
}

/** A pod's sysctls for its sandbox (upstream generatePodSandboxLinuxConfig), dotted names. */
export function podSysctls(list: readonly { name: string; value: string }[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of list ?? []) out[sysctlDotted(s.name)] = s.value;
  return out;
}

/** The kernel namespace a sysctl lives in (upstream component-helpers sysctl.Namespace); '' unknown. */
export type SysctlNamespace = 'ipc' | 'net' | '';

/** upstream NamespacedBy: kernel.sem exactly; kernel.shm*, kernel.msg*, fs.mqueue.* (ipc); net.* (net). */
export function namespacedBy(name: string): SysctlNamespace {
  if (name === 'kernel.sem') return 'ipc';
  if (['kernel.shm', 'kernel.msg', 'fs.mqueue.'].some((p) => name.startsWith(p))) return 'ipc';
  return name.startsWith('net.') ? 'net' : '';
}

/** upstream apivalidation.SysctlMaxLength. */
const SYSCTL_MAX_LENGTH = 253;
/** upstream policy validation SysctlContainSlashPatternFmt: dotted or slashed segments, a last one may end in `*`. */
const SYSCTL_PATTERN_FMT = '([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]';
const SYSCTL_PATTERN = new RegExp(`^${SYSCTL_PATTERN_FMT}$`);

/** A set of sysctl names and `prefix*` patterns, each known to be namespaced (upstream patternAllowlist). */
export interface SysctlAllowlist {
  readonly sysctls: ReadonlyMap<string, SysctlNamespace>;
  readonly prefixes: ReadonlyMap<string, SysctlNamespace>;
}

/** Why `pattern` cannot be allowlisted (upstream NewAllowlist's errors, word for word), or undefined. */
export function sysctlPatternProblem(pattern: string): string | undefined {
  if (pattern.length > SYSCTL_MAX_LENGTH || !SYSCTL_PATTERN.test(pattern))
    return `sysctl "${pattern}" must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_PATTERN_FMT}`;
  const dotted = sysctlDotted(pattern);
  if (namespacedBy(dotted.endsWith('*') ? dotted.slice(0, -1) : dotted) !== '') return undefined;
  return dotted.endsWith('*')
    ? `the sysctls "${dotted}" are not known to be namespaced`
    : `the sysctl "${dotted}" are not known to be namespaced`;
}

/** upstream NewAllowlist: a ConfigError for the first pattern sysctlPatternProblem refuses. */
export function newSysctlAllowlist(patterns: readonly string[]): SysctlAllowlist {
  const sysctls = new Map<string, SysctlNamespace>();
  const prefixes = new Map<string, SysctlNamespace>();
  for (const p of patterns) {
    const problem = sysctlPatternProblem(p);
    if (problem) throw new ConfigError([problem]);
    const dotted = sysctlDotted(p);
    if (dotted.endsWith('*')) prefixes.set(dotted.slice(0, -1), namespacedBy(dotted.slice(0, -1)));
    else sysctls.set(dotted, namespacedBy(dotted));
  }
  return { sysctls, prefixes };
}

/**
 * upstream patternAllowlist.validateSysctl: why a pod (sharing the host's network or IPC
 * namespace, or not) may not set `name`, or undefined.
 */
export function sysctlForbidden(
  list: SysctlAllowlist,
  name: string,
  host: { net: boolean; ipc: boolean },
): string | undefined {
  const dotted = sysctlDotted(name);
  const exact = list.sysctls.get(dotted);
  const ns = exact ?? [...list.prefixes].find(([p]) => dotted.startsWith(p))?.[1];
  if (exact === undefined && ns === undefined) return `"${dotted}" not allowlisted`;
  if ((ns === 'ipc' && host.ipc) || (ns === 'net' && host.net))
    return `"${dotted}" not allowed with host ${ns} enabled`;
  return undefined;
}
