/**
 * The PodSandboxConfig for RunPodSandbox (upstream kuberuntime_sandbox.go
 * generatePodSandboxConfig): metadata with the attempt, hostname, log directory, DNS, port
 * mappings, our labels and the pod's annotations, and the Linux namespace options and security
 * context (security-context.ts).
 */
import type { Pod } from '../api/types.js';
import { podNames, podNamespace } from '../api/pod.js';
import { isDns1123Label, podLogsDirectory } from '../util/pod-identity.js';
import { KubeletError } from '../errors.js';
import type {
  DNSConfig,
  NamespaceMode,
  NamespaceOption,
  PodSandboxConfig,
  PortMapping,
  Protocol,
  UserNamespace,
} from '../cri/types.js';
import { newPodAnnotations, newPodLabels } from './labels.js';
import { podSysctls } from '../util/sysctl.js';
import { sandboxSecurityContext, SecurityContextError } from './security-context.js';

const MAX_HOSTNAME_LENGTH = 63;
const MAX_FQDN_LENGTH = 64;
/** upstream's words (GeneratePodHostNameAndDomain with IsDNS1123Label's message). */
const NOT_A_LABEL =
  "is not a valid DNS label: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', " +
  'and must start and end with an alphanumeric character (at most 63 characters)';
const q = (v: string): string => JSON.stringify(v);

/**
 * upstream NamespacesForPod. `userns`: the pod's user namespace (kubelet/userns
 * GetOrCreateUserNamespaceMappings), the same for the sandbox and each container; absent: not sent.
 */
export function namespacesForPod(pod: Pod, userns?: UserNamespace): NamespaceOption {
  const pid: NamespaceMode = pod.spec?.hostPID ? 'NODE' : pod.spec?.shareProcessNamespace ? 'POD' : 'CONTAINER';
  return {
    network: pod.spec?.hostNetwork ? 'NODE' : 'POD',
    pid,
    ipc: pod.spec?.hostIPC ? 'NODE' : 'POD',
    ...(userns ? { usernsOptions: userns } : {}),
  };
}

/** upstream truncatePodHostnameIfNeeded: at most 63 characters, no trailing '-' or '.'. */
function truncateHostname(name: string): string {
  if (name.length <= MAX_HOSTNAME_LENGTH) return name;
  return name.slice(0, MAX_HOSTNAME_LENGTH).replace(/[-.]+$/, '');
}

/**
 * upstream GeneratePodHostNameAndDomain: spec.hostname or the pod name (truncated to 63), and with
 * a subdomain the domain `<subdomain>.<namespace>.svc.<clusterDomain>` (the managed /etc/hosts).
 */
export function podHostnameAndDomain(pod: Pod, clusterDomain: string): { hostname: string; hostDomain: string } {
  // The apiserver validates both; a pod that skipped it must not reach the runtime's hostname.
  for (const [what, v] of [
    ['Hostname', pod.spec?.hostname],
    ['Subdomain', pod.spec?.subdomain],
  ] as const)
    if (v && !isDns1123Label(v)) throw new KubeletError('KTS_ERR_SANDBOX', `pod ${what} ${q(v)} ${NOT_A_LABEL}`);
  const hostname = truncateHostname(pod.spec?.hostname || pod.metadata?.name || '');
  const sub = pod.spec?.subdomain;
  return { hostname, hostDomain: sub ? `${sub}.${podNamespace(pod)}.svc.${clusterDomain}` : '' };
}

/**
 * upstream GeneratePodHostNameAndDomain + GetNodenameForKernel: spec.hostname or the pod name;
 * with setHostnameAsFQDN and a subdomain, the fully qualified name.
 */
export function podHostname(pod: Pod, clusterDomain: string): string {
  const { hostname, hostDomain } = podHostnameAndDomain(pod, clusterDomain);
  return nodenameForKernel(hostname, clusterDomain ? hostDomain : '', pod.spec?.setHostnameAsFQDN === true);
}

/** upstream GetNodenameForKernel: the FQDN when asked for and there is a domain; 64 characters at most. */
export function nodenameForKernel(hostname: string, hostDomain: string, setHostnameAsFQDN: boolean): string {
  if (!setHostnameAsFQDN || !hostDomain) return hostname;
  const fqdn = `${hostname}.${hostDomain}`;
  // The kernel's hostname field holds 64 characters.
  if (fqdn.length > MAX_FQDN_LENGTH)
    throw new KubeletError(
      'KTS_ERR_SANDBOX',
      `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long ` +
        `(${MAX_FQDN_LENGTH} characters is the max, ${fqdn.length} characters requested)`,
    );
  return fqdn;
}

function toProtocol(p: string | undefined): Protocol {
  return p === 'UDP' || p === 'SCTP' ? p : 'TCP';
}

/** Every container port (upstream MakePortMappings); the runtime maps only those with a hostPort. */
function portMappings(pod: Pod): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      out.push({
        protocol: toProtocol(p.protocol),
        containerPort: p.containerPort,
        hostPort: p.hostPort ?? 0,
        hostIp: p.hostIP ?? '',
      });
    }
  }
  return out;
}

export interface SandboxConfigInput {
  pod: Pod;
  attempt: number;
  podLogsDir: string;
  clusterDomain: string;
  dns: DNSConfig;
  /** The pod cgroup (cgroupfs form, e.g. /kubepods/burstable/pod<uid>); '' lets the runtime choose. */
  cgroupParent?: string;
  /** The pod's user namespace options (kubelet/userns); absent: not sent. */
  userns?: UserNamespace | undefined;
}

export function generatePodSandboxConfig({
  pod,
  attempt,
  podLogsDir,
  clusterDomain,
  dns,
  cgroupParent,
  userns,
}: SandboxConfigInput): PodSandboxConfig {
  const hostNetwork = pod.spec?.hostNetwork === true;
  return {
    metadata: { ...podNames(pod), attempt },
    // The host network's hostname is the node's: the runtime must not set one.
    hostname: hostNetwork ? '' : podHostname(pod, clusterDomain),
    logDirectory: podLogsDirectory(podLogsDir, podNames(pod)),
    dnsConfig: dns,
    portMappings: portMappings(pod),
    labels: newPodLabels(pod),
    annotations: newPodAnnotations(pod),
    linux: {
      // The pod cgroup under the QoS hierarchy (src/cm); empty lets the runtime choose.
      cgroupParent: cgroupParent ?? '',
      securityContext: { namespaceOptions: namespacesForPod(pod, userns), ...sandboxContext(pod) },
      // Admission let only safe, namespaced ones through (kubelet/sysctls.ts).
      sysctls: podSysctls(pod.spec?.securityContext?.sysctls),
    },
  };
}

/** security-context.ts's sandbox context; a policy the CRI does not know is the sandbox's error. */
function sandboxContext(pod: Pod): ReturnType<typeof sandboxSecurityContext> {
  try {
    return sandboxSecurityContext(pod);
  } catch (err) {
    if (err instanceof SecurityContextError) throw new KubeletError('KTS_ERR_SANDBOX', err.message, { cause: err });
    throw err;
  }
}
