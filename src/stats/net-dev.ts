/**
 * Network numbers for the Summary API from /proc/<pid>/net/dev: a process's file shows the
 * counters of the network namespace it lives in, so the node's come from our own process (the
 * agent runs in the host's namespace) and a pod's from a process in its sandbox, without
 * entering any namespace.
 */
import { readFileSync } from 'node:fs';
import type { NetworkStats } from './types.js';

/** cAdvisor's ignored devices: loopback, and the host ends of container links. */
const IGNORED_PREFIXES = ['lo', 'veth', 'docker', 'nerdctl'];

/** upstream network.DefaultInterfaceName: the interface the top-level fields describe. */
export const DEFAULT_INTERFACE = 'eth0';

type Iface = NonNullable<NetworkStats['interfaces']>[number];

/** Every interface of a net/dev text, but the ignored ones. */
export function parseNetDevInterfaces(text: string): Iface[] {
  const out: Iface[] = [];
  for (const line of text.split('\n').slice(2)) {
    const m = /^\s*([^:\s]+):\s*(.*)$/.exec(line);
    if (!m || IGNORED_PREFIXES.some((p) => m[1]!.startsWith(p))) continue;
    const n = m[2]!.trim().split(/\s+/);
    if (n.length < 16) continue;
    out.push({
      name: m[1]!,
      rxBytes: BigInt(n[0]!),
      rxErrors: BigInt(n[2]!),
      txBytes: BigInt(n[8]!),
      txErrors: BigInt(n[10]!),
    });
  }
  return out;
}

/**
 * NetworkStats in upstream's shape: `interfaces` lists them all, the top level repeats the default
 * one (`preferred`, else eth0, else the first, so a node whose uplink is not eth0 still says
 * something useful). Undefined when there is no interface to report.
 */
export function parseNetDev(text: string, time: Date, preferred?: string): NetworkStats | undefined {
  const interfaces = parseNetDevInterfaces(text);
  if (interfaces.length === 0) return undefined;
  const def =
    interfaces.find((i) => i.name === preferred) ??
    interfaces.find((i) => i.name === DEFAULT_INTERFACE) ??
    interfaces[0]!;
  return { time, ...def, interfaces };
}

/** The interface of the default IPv4 route in a /proc/net/route text. */
export function defaultRouteInterface(routeText: string): string | undefined {
  for (const line of routeText.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 2 && f[1] === '00000000' && f[7] === '00000000') return f[0];
  }
  return undefined;
}

/** The node's network: the host namespace, as this process sees it. */
export function nodeNetwork(time: Date): NetworkStats | undefined {
  try {
    let uplink: string | undefined;
    try {
      uplink = defaultRouteInterface(readFileSync('/proc/net/route', 'latin1'));
    } catch {
      // no IPv4 routing table: eth0 or the first interface
    }
    return parseNetDev(readFileSync('/proc/self/net/dev', 'latin1'), time, uplink);
  } catch {
    return undefined;
  }
}
