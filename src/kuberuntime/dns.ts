/**
 * Pod DNS for the sandbox config (upstream pkg/kubelet/network/dns/dns.go GetPodDNS):
 *
 *  - dnsPolicy None: only the pod's spec.dnsConfig;
 *  - ClusterFirst (the default) on the pod network, or ClusterFirstWithHostNet: the cluster DNS
 *    servers, searches `<ns>.svc.<domain> svc.<domain> <domain>` + the host's, options ndots:5;
 *    without cluster DNS configured it falls back to Default;
 *  - Default, and ClusterFirst on the host network: the host's resolv.conf (servers, searches,
 *    options); with no resolv.conf configured, 127.0.0.1 and search ".";
 *  - spec.dnsConfig is then merged in (duplicates dropped, pod options override by name), and the
 *    result trimmed to the resolver's limits (3 servers, 32 searches).
 */
import { readFile } from 'node:fs/promises';
import type { Pod } from '../api/types.js';
import { podNamespace } from '../api/pod.js';
import type { DNSConfig } from '../cri/types.js';
import { log } from '../util/log.js';
import { errorMessage, KubeletError } from '../errors.js';

export interface DnsSettings {
  clusterDNS: string[];
  clusterDomain: string;
  /** Path of the host resolv.conf; '' disables host DNS (upstream --resolv-conf=""). */
  resolvConf: string;
}

const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS = 32;
const DEFAULT_DNS_OPTIONS = ['ndots:5'];

/**
 * Parses resolv.conf text as upstream parseResolvConf: `nameserver` lines accumulate, the last
 * `search` line wins (trailing dots dropped, "." skipped), `options` merge by name; a line whose
 * first non-blank character is `#` is a comment (a `#` later on a line is not special: upstream
 * takes only the field after the keyword). A `nameserver` line without an address is an error.
 */
export function parseResolvConf(text: string): DNSConfig {
  const servers: string[] = [];
  let searches: string[] = [];
  let options: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#')) continue;
    const [key, ...rest] = line.split(/\s+/).filter(Boolean);
    if (key === 'nameserver') {
      if (rest[0] === undefined) throw new KubeletError('KTS_ERR_SANDBOX', 'nameserver list is empty');
      servers.push(rest[0]);
    } else if (key === 'search') searches = rest.filter((s) => s !== '.').map((s) => s.replace(/\.$/, ''));
    else if (key === 'options') options = mergeOptions(options, rest);
  }
  return { servers, searches, options };
}

function omitDuplicates(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** Options by name ("ndots:5" is named "ndots"); later ones override earlier ones. */
function mergeOptions(base: string[], extra: string[]): string[] {
  const byName = new Map<string, string>();
  for (const o of [...base, ...extra]) byName.set(o.split(':')[0]!, o);
  return [...byName.values()];
}

type DnsType = 'none' | 'cluster' | 'host';

function podDnsType(pod: Pod): DnsType {
  switch (pod.spec?.dnsPolicy ?? 'ClusterFirst') {
    case 'None':
      return 'none';
    case 'ClusterFirstWithHostNet':
      return 'cluster';
    case 'Default':
      return 'host';
    case 'ClusterFirst':
      return pod.spec?.hostNetwork ? 'host' : 'cluster';
    default:
      log('kuberuntime').warn(
        { pod: pod.metadata?.name, dnsPolicy: pod.spec?.dnsPolicy },
        'invalid dnsPolicy; using ClusterFirst',
      );
      return 'cluster';
  }
}

/** Builds the DNS config from the host resolv.conf contents (pure; see podDNS for the I/O). */
export function buildPodDNS(pod: Pod, settings: DnsSettings, host: DNSConfig): DNSConfig {
  let cfg: DNSConfig = { servers: [...host.servers], searches: [...host.searches], options: [...host.options] };
  let type = podDnsType(pod);
  if (type === 'none') cfg = { servers: [], searches: [], options: [] };
  if (type === 'cluster' && settings.clusterDNS.length > 0) {
    cfg.servers = [...settings.clusterDNS];
    cfg.searches = clusterSearches(pod, settings.clusterDomain, cfg.searches);
    cfg.options = [...DEFAULT_DNS_OPTIONS];
  } else if (type === 'cluster') {
    // No cluster DNS configured (standalone): behave as dnsPolicy Default, as upstream does.
    type = 'host';
  }
  if (type === 'host' && settings.resolvConf === '') {
    cfg.servers = ['127.0.0.1'];
    cfg.searches = ['.'];
  }
  const extra = pod.spec?.dnsConfig;
  if (extra) {
    cfg.servers = omitDuplicates([...cfg.servers, ...(extra.nameservers ?? [])]);
    cfg.searches = omitDuplicates([...cfg.searches, ...(extra.searches ?? [])]);
    cfg.options = mergeOptions(
      cfg.options,
      (extra.options ?? []).map((o) =>
        o.value !== undefined && o.value !== null ? `${o.name}:${o.value}` : `${o.name ?? ''}`,
      ),
    );
  }
  cfg.servers = cfg.servers.slice(0, MAX_DNS_NAMESERVERS);
  cfg.searches = cfg.searches.slice(0, MAX_DNS_SEARCH_PATHS);
  return cfg;
}

function clusterSearches(pod: Pod, domain: string, hostSearches: string[]): string[] {
  if (!domain) return hostSearches;
  const ns = podNamespace(pod);
  return omitDuplicates([`${ns}.svc.${domain}`, `svc.${domain}`, domain, ...hostSearches]);
}

/**
 * Reads the host resolv.conf and builds the config. A resolvConf that cannot be read or parsed
 * fails the pod's sandbox config, as upstream getHostDNSConfig does (the pod waits, with
 * FailedCreatePodSandBox, until the file is fixed). Nothing else is done about systemd-resolved's
 * stub (nameserver 127.0.0.53): as upstream, the kubelet uses the file it is given, and picking
 * /run/systemd/resolve/resolv.conf is the installer's job (kubeadm's mutateResolverConfig).
 */
export async function podDNS(pod: Pod, settings: DnsSettings): Promise<DNSConfig> {
  let host: DNSConfig = { servers: [], searches: [], options: [] };
  if (settings.resolvConf !== '') {
    let text: string;
    try {
      text = await readFile(settings.resolvConf, 'utf8');
    } catch (err) {
      throw new KubeletError('KTS_ERR_SANDBOX', `cannot read resolvConf ${settings.resolvConf}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    try {
      host = parseResolvConf(text);
    } catch (err) {
      throw new KubeletError(
        'KTS_ERR_SANDBOX',
        `Encountered error while parsing resolv conf file ${settings.resolvConf}: ${errorMessage(err)}`,
        { cause: err },
      );
    }
  }
  return buildPodDNS(pod, settings, host);
}
