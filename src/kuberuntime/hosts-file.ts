/**
 * The kubelet-managed /etc/hosts (upstream kubelet_pods.go makeHostsMount, ensureHostsFile,
 * managedHostsFileContent, nodeHostsFileContent, hostsEntriesFromHostAliases): one file per pod,
 * `<pod dir>/etc-hosts`, rewritten before each container start and bound read-write at /etc/hosts
 * into every container that does not mount its own /etc/hosts, once the pod has IPs. A pod on the
 * pod network gets the localhost lines and one line per pod IP (FQDN first when it has a
 * subdomain); a hostNetwork pod gets the node's /etc/hosts. hostAliases are appended to both.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Pod } from '../api/types.js';
import type { Mount } from '../cri/types.js';
import { errorMessage, VolumeError } from '../errors.js';
import { hostAliasProblems, isDns1123Label } from '../util/pod-identity.js';

/** upstream etcHostsPath: where the file goes in the container, and the node's own hosts file. */
export const ETC_HOSTS_PATH = '/etc/hosts';
const MANAGED_HOSTS_HEADER = '# Kubernetes-managed hosts file.\n';
const MANAGED_HOSTS_HEADER_WITH_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';

type HostAliases = NonNullable<NonNullable<Pod['spec']>['hostAliases']>;

/** What the hosts file of one pod is made from. */
export interface HostsFileInput {
  /** upstream getPodDir: `<root-dir>/pods/<uid>`; the file is its `etc-hosts`. */
  podDir: string;
  /** The pod's IPs (a hostNetwork pod's are the node's); none: no hosts file yet. */
  podIPs: readonly string[];
  hostname: string;
  /** `<subdomain>.<namespace>.svc.<clusterDomain>`, or '' without a subdomain. */
  hostDomain: string;
  /** The node's hosts file, for hostNetwork pods (default /etc/hosts). */
  nodeHostsFile?: string;
}

/** upstream hostsEntriesFromHostAliases: a blank line, a comment, then one line per alias IP. */
export function hostsEntriesFromHostAliases(aliases: HostAliases | undefined): string {
  if (!aliases || aliases.length === 0) return '';
  const lines = aliases.map((a) => `${a.ip ?? ''}\t${(a.hostnames ?? []).join('\t')}\n`);
  return `\n# Entries added by HostAliases.\n${lines.join('')}`;
}

/** upstream managedHostsFileContent. */
export function managedHostsFileContent(
  podIPs: readonly string[],
  hostname: string,
  hostDomain: string,
  aliases: HostAliases | undefined,
): string {
  const names = hostDomain ? `${hostname}.${hostDomain}\t${hostname}` : hostname;
  return [
    MANAGED_HOSTS_HEADER,
    '127.0.0.1\tlocalhost\n',
    '::1\tlocalhost ip6-localhost ip6-loopback\n',
    'fe00::0\tip6-localnet\n',
    'fe00::0\tip6-mcastprefix\n',
    'fe00::1\tip6-allnodes\n',
    'fe00::2\tip6-allrouters\n',
    ...podIPs.map((ip) => `${ip}\t${names}\n`),
    hostsEntriesFromHostAliases(aliases),
  ].join('');
}

/** upstream nodeHostsFileContent: the node's file under the host-network header, then the aliases. */
export async function nodeHostsFileContent(nodeHostsFile: string, aliases: HostAliases | undefined): Promise<string> {
  const node = await readFile(nodeHostsFile, 'utf8');
  return MANAGED_HOSTS_HEADER_WITH_HOST_NETWORK + node + hostsEntriesFromHostAliases(aliases);
}

/** The pod name fallback and the domain: the apiserver allows DNS names; no blank, '#' or control. */
const HOST_NAME_CHARS = /^[A-Za-z0-9_.-]+$/;
const HOST_NAME_MSG = "must hold only letters, digits, '-', '.' and '_'";

/**
 * Upstream's API validation (ValidateHostAliases, the hostname and subdomain DNS labels) and
 * GeneratePodHostNameAndDomain, for pods the apiserver sent unvalidated: every value written
 * into the file must be an IP or a DNS name, so no value can add a line (newline, '#', NUL).
 * The first problem, naming its field; undefined when all is well.
 */
export function hostsFileProblem(pod: Pod, input: HostsFileInput): string | undefined {
  const spec = pod.spec;
  for (const k of ['hostname', 'subdomain'] as const) {
    const v = spec?.[k];
    if (v && !isDns1123Label(v)) return `spec.${k} ${JSON.stringify(v)} is not a valid DNS-1123 label`;
  }
  for (const [what, v] of [
    ['hostname', input.hostname],
    ['host domain', input.hostDomain],
  ])
    if (v && !HOST_NAME_CHARS.test(v)) return `${what} ${JSON.stringify(v)} ${HOST_NAME_MSG}`;
  const badIP = input.podIPs.find((ip) => isIP(ip) === 0);
  if (badIP !== undefined) return `pod IP ${JSON.stringify(badIP)} is not a valid IP address`;
  const alias = hostAliasProblems(spec?.hostAliases)[0];
  return alias && `${alias.field}: ${alias.detail}`;
}

/** upstream ensureHostsFile: (re)writes the pod's file, mode 0644. */
async function ensureHostsFile(path: string, pod: Pod, input: HostsFileInput): Promise<void> {
  const aliases = pod.spec?.hostAliases;
  const content =
    pod.spec?.hostNetwork === true
      ? await nodeHostsFileContent(input.nodeHostsFile ?? ETC_HOSTS_PATH, aliases)
      : managedHostsFileContent(input.podIPs, input.hostname, input.hostDomain, aliases);
  await writeFile(path, content, { mode: 0o644 });
  await chmod(path, 0o644);
}

/**
 * upstream makeMounts' hosts part: the managed /etc/hosts mount for a container, or undefined when
 * the pod has no IPs yet or the container mounts its own /etc/hosts. A file that cannot be
 * written fails the container's config (CreateContainerConfigError), as upstream's error does.
 */
export async function makeHostsMount(
  pod: Pod,
  containerMountPaths: readonly string[],
  input: HostsFileInput,
): Promise<Mount | undefined> {
  if (input.podIPs.length === 0 || containerMountPaths.includes(ETC_HOSTS_PATH)) return undefined;
  const hostPath = join(input.podDir, 'etc-hosts');
  const problem = hostsFileProblem(pod, input);
  if (problem) throw new VolumeError(`refusing to write the pod's hosts file ${hostPath}: ${problem}`);
  try {
    await ensureHostsFile(hostPath, pod, input);
  } catch (err) {
    throw new VolumeError(`cannot write the pod's hosts file ${hostPath}: ${errorMessage(err)}`, { cause: err });
  }
  return { containerPath: ETC_HOSTS_PATH, hostPath, readonly: false };
}
