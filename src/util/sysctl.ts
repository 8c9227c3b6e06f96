/** Sysctl names as the kernel and the runtime take them. */

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
