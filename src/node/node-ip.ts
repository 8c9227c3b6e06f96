/**
 * The node's IPs (upstream component-helpers ParseNodeIPArgument, kubelet validateNodeIP and the
 * NodeAddress setter without a cloud provider):
 *
 * - `--node-ip` is one IP or a dual-stack pair (one IPv4, one IPv6, either first), comma
 *   separated, blanks around each trimmed; `0.0.0.0` / `::` alone ask for the detected address of
 *   that family and may not be part of a pair;
 * - a given IP must be on one of the host's interfaces and not multicast, link-local or
 *   unspecified;
 * - without one, the hostname override when it is an IP, else the first address of the host's
 *   interfaces (IPv4 preferred, IPv6 when `::` was given).
 *
 * Deliberate differences (docs/differences.md): an entry that is not an IP is refused where
 * upstream logs and ignores it; a loopback node IP is accepted (all-in-one and test nodes);
 * the IPs are validated once at start, which refuses a bad one, where upstream re-checks on each
 * status update and reports the node without addresses; no DNS lookup of the node name.
 */
import { isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';
import { ConfigError } from '../errors.js';

const CLOUD_PROVIDER_NONE = '';
const CLOUD_PROVIDER_EXTERNAL = 'external';

/**
 * upstream netutils.ParseIPSloppy, canonical form out: IPv4 octets may carry leading zeros
 * (decimal, as Go's old parser), IPv6 is written in its shortest form; undefined if not an IP.
 */
export function parseIPSloppy(raw: string): string | undefined {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(raw)) {
    const octets = raw.split('.').map(Number);
    return octets.every((o) => o <= 255) ? octets.join('.') : undefined;
  }
  if (!isIPv6(raw)) return undefined;
  // The URL parser writes IPv6 hosts canonically (RFC 5952): zeros compressed, lower case.
  return new URL(`http://[${raw}]/`).hostname.slice(1, -1);
}

export const ipFamilyIsV6 = (ip: string): boolean => ip.includes(':');
const isUnspecified = (ip: string): boolean => ip === '0.0.0.0' || ip === '::';

export interface ParsedNodeIPs {
  ips: string[];
  /** Entries that are not IPs (upstream: logged and ignored; ours: refused by the caller). */
  invalid: string[];
  error?: string;
}

/** upstream ParseNodeIPArgument: dual stack only without a cloud provider or with "external". */
export function parseNodeIPArgument(raw: string, cloudProvider: string): ParsedNodeIPs {
  const ips: string[] = [];
  const invalid: string[] = [];
  if (raw !== '') {
    for (const part of raw.split(',').map((p) => p.trim())) {
      const ip = parseIPSloppy(part);
      if (ip === undefined) invalid.push(part);
      else ips.push(ip);
    }
  }
  const allowDual = cloudProvider === CLOUD_PROVIDER_NONE || cloudProvider === CLOUD_PROVIDER_EXTERNAL;
  const [a, b] = ips;
  let error: string | undefined;
  if (ips.length > 2 || (a !== undefined && b !== undefined && ipFamilyIsV6(a) === ipFamilyIsV6(b)))
    error = 'must contain either a single IP or a dual-stack pair of IPs';
  else if (ips.length === 2 && !allowDual) error = 'dual-stack not supported in this configuration';
  else if (ips.length === 2 && (isUnspecified(a!) || isUnspecified(b!)))
    error = "dual-stack node IP cannot include '0.0.0.0' or '::'";
  return error ? { ips: [], invalid, error } : { ips, invalid };
}

/** The host's interface addresses (canonical), as upstream's net.InterfaceAddrs. */
export function hostAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((addrs) => addrs ?? [])
    .map((a) => parseIPSloppy(a.address.split('%')[0]!) ?? a.address);
}

const isMulticast = (ip: string): boolean =>
  ipFamilyIsV6(ip) ? /^ff/i.test(ip) : Number(ip.split('.')[0]) >= 224 && Number(ip.split('.')[0]) <= 239;
const isLinkLocalUnicast = (ip: string): boolean =>
  ipFamilyIsV6(ip) ? /^fe[89ab]/i.test(ip) : ip.startsWith('169.254.');
const isLoopback = (ip: string): boolean => (ipFamilyIsV6(ip) ? ip === '::1' : ip.startsWith('127.'));

/**
 * upstream validateNodeIP, without its loopback rule (ours: a loopback node IP is allowed when
 * given explicitly). Returns why the IP cannot be the node's, or undefined.
 */
export function validateNodeIP(ip: string, hostAddrs: readonly string[]): string | undefined {
  if (isMulticast(ip)) return "nodeIP can't be a multicast address";
  if (isLinkLocalUnicast(ip)) return "nodeIP can't be a link-local unicast address";
  if (isUnspecified(ip)) return "nodeIP can't be an all zeros address";
  if (!hostAddrs.includes(ip)) return `node IP: "${ip}" not found in the host's network interfaces`;
  return undefined;
}

/**
 * upstream ResolveBindAddress without a routing table: the first global unicast address of the
 * preferred family on the host's interfaces, else of the other family; 127.0.0.1 on a host with
 * none (ours: upstream reports no address then).
 */
export function detectHostIP(preferV6: boolean, hostAddrs: readonly string[]): string {
  const usable = hostAddrs.filter((ip) => !isLoopback(ip) && !isLinkLocalUnicast(ip) && !isMulticast(ip));
  return usable.find((ip) => ipFamilyIsV6(ip) === preferV6) ?? usable[0] ?? '127.0.0.1';
}

export interface NodeIPsInput {
  /** Parsed --node-ip (parseNodeIPArgument's ips). */
  nodeIPs: readonly string[];
  /** --hostname-override, when given (upstream step 2: an IP there is the node's). */
  hostnameOverride?: string | undefined;
  hostAddrs?: readonly string[];
}

/**
 * upstream NodeAddress, no cloud provider: both given IPs; or the one given; or the hostname
 * override when it is an IP; or the detected address. A given IP that fails: ConfigError.
 */
export function resolveNodeIPs(input: NodeIPsInput): string[] {
  const hostAddrs = input.hostAddrs ?? hostAddresses();
  const specified = input.nodeIPs.filter((ip) => !isUnspecified(ip));
  const problems = specified.flatMap((ip, i) => {
    const why = validateNodeIP(ip, hostAddrs);
    return why ? [`--node-ip: failed to validate ${i === 0 ? 'nodeIP' : 'secondaryNodeIP'}: ${why}`] : [];
  });
  if (problems.length > 0) throw new ConfigError(problems);
  if (specified.length > 0) return specified;
  const fromHostname = input.hostnameOverride ? parseIPSloppy(input.hostnameOverride) : undefined;
  if (fromHostname) return [fromHostname];
  return [detectHostIP(input.nodeIPs[0] === '::', hostAddrs)];
}

/** upstream GetNodeHostIPs: the primary node IP, then the first of the other family. */
export function hostIPsOf(nodeIPs: readonly string[]): string[] {
  const [primary] = nodeIPs;
  if (primary === undefined) return [];
  const other = nodeIPs.find((ip) => ipFamilyIsV6(ip) !== ipFamilyIsV6(primary));
  return other === undefined ? [primary] : [primary, other];
}
