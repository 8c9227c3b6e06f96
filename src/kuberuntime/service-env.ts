/**
 * Service environment variables (upstream pkg/kubelet/envvars FromServices and kubelet_pods.go
 * getServiceEnvVarMap): what in-cluster clients read to find the apiserver
 * (KUBERNETES_SERVICE_HOST/PORT) and, with spec.enableServiceLinks, the docker-link style
 * variables of every Service of the pod's namespace.
 *
 * They are computed when a container is created and never change a running container: a
 * Service made later reaches only containers started later (upstream's documented race).
 *
 * The Services come from the apiserver unvalidated: serviceProblem refuses, as upstream's
 * ValidateService would have, any value that could add or rename a variable ('=', a newline, a
 * name that is no DNS label) before it reaches an env var name.
 */
import { isIP } from 'node:net';
import { isDns1123Label } from '../util/pod-identity.js';

/** The fields of a v1 Service we read. */
export interface Service {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: {
    clusterIP?: string;
    ports?: { name?: string; port: number; protocol?: string }[];
  };
}

/** The Services the kubelet knows (upstream serviceLister + serviceHasSynced). */
export interface ServiceLister {
  /** Whether the Services were listed at least once. */
  hasSynced(): boolean;
  list(): readonly Service[];
}

/** The Services every pod gets, whatever enableServiceLinks says (upstream masterServices). */
const MASTER_SERVICES: ReadonlySet<string> = new Set(['kubernetes']);
const MASTER_SERVICE_NAMESPACE = 'default';

export interface NamedValue {
  name: string;
  value: string;
}

/** upstream v1helper.IsServiceIPSet: headless ("None") and ExternalName ("") services have none. */
export function isServiceIPSet(s: Service): boolean {
  const ip = s.spec?.clusterIP;
  return ip !== undefined && ip !== '' && ip !== 'None';
}

/** upstream ValidateService's DNS-1035 label: the Service name starts with a letter. */
const DNS1035_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
const PROTOCOLS: ReadonlySet<string> = new Set(['TCP', 'UDP', 'SCTP']);

/** The problem with a port (upstream validateServicePort), or undefined. */
function portProblem(p: unknown, i: number): string | undefined {
  const sp = p as { name?: unknown; port?: unknown; protocol?: unknown } | null;
  if (typeof sp !== 'object' || sp === null) return `spec.ports[${i}] is not an object`;
  if (typeof sp.port !== 'number' || !Number.isInteger(sp.port) || sp.port < 1 || sp.port > 65535)
    return `spec.ports[${i}].port ${JSON.stringify(sp.port)} is not a port number`;
  if (sp.name !== undefined && sp.name !== '' && (typeof sp.name !== 'string' || !isDns1123Label(sp.name)))
    return `spec.ports[${i}].name ${JSON.stringify(sp.name)} is not a DNS-1123 label`;
  if (sp.protocol !== undefined && sp.protocol !== '' && !PROTOCOLS.has(sp.protocol as string))
    return `spec.ports[${i}].protocol ${JSON.stringify(sp.protocol)} is not TCP, UDP or SCTP`;
  return undefined;
}

/**
 * What upstream's ValidateService would refuse among the fields we read, naming the field;
 * undefined for a Service the env vars can be made from.
 */
export function serviceProblem(s: unknown): string | undefined {
  if (typeof s !== 'object' || s === null) return 'not an object';
  const { metadata: m, spec } = s as Service;
  if (typeof m?.name !== 'string' || !DNS1035_LABEL.test(m.name))
    return `metadata.name ${JSON.stringify(m?.name)} is not a DNS-1035 label`;
  if (typeof m.namespace !== 'string' || !isDns1123Label(m.namespace))
    return `metadata.namespace ${JSON.stringify(m.namespace)} is not a DNS-1123 label`;
  const ip: unknown = spec?.clusterIP;
  if (ip !== undefined && ip !== '' && ip !== 'None' && (typeof ip !== 'string' || isIP(ip) === 0))
    return `spec.clusterIP ${JSON.stringify(ip)} is not an IP address`;
  const ports: unknown = spec?.ports ?? [];
  if (!Array.isArray(ports)) return 'spec.ports is not a list';
  for (const [i, p] of ports.entries()) {
    const problem = portProblem(p, i);
    if (problem) return problem;
  }
  return undefined;
}

/** upstream makeEnvVariableName: upper case, '-' → '_' (dots and leading digits stay). */
function envName(s: string): string {
  return s.replaceAll('-', '_').toUpperCase();
}

/** net.JoinHostPort: an IPv6 address is bracketed. */
function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** upstream makeLinkVariables: {NAME}_PORT for the first port, then per port _PORT_{n}_{PROTO}[_PROTO|_PORT|_ADDR]. */
function linkVariables(prefix: string, ip: string, ports: NonNullable<NonNullable<Service['spec']>['ports']>) {
  const out: NamedValue[] = [];
  ports.forEach((sp, i) => {
    const proto = (sp.protocol || 'TCP').toLowerCase();
    const url = `${proto}://${joinHostPort(ip, sp.port)}`;
    if (i === 0) out.push({ name: `${prefix}_PORT`, value: url });
    const p = `${prefix}_PORT_${sp.port}_${proto.toUpperCase()}`;
    out.push(
      { name: p, value: url },
      { name: `${p}_PROTO`, value: proto },
      { name: `${p}_PORT`, value: String(sp.port) },
      { name: `${p}_ADDR`, value: ip },
    );
  });
  return out;
}

/** upstream envvars.FromServices: the variables of each service with a cluster IP, in order. */
export function fromServices(services: readonly Service[]): NamedValue[] {
  const out: NamedValue[] = [];
  for (const s of services) {
    if (!isServiceIPSet(s)) continue;
    const ip = s.spec!.clusterIP!;
    const prefix = envName(s.metadata?.name ?? '');
    const ports = s.spec?.ports ?? [];
    out.push({ name: `${prefix}_SERVICE_HOST`, value: ip });
    // The apiserver refuses a cluster IP without ports; upstream would index past the end.
    if (ports.length === 0) continue;
    out.push({ name: `${prefix}_SERVICE_PORT`, value: String(ports[0]!.port) });
    for (const sp of ports)
      if (sp.name) out.push({ name: `${prefix}_SERVICE_PORT_${envName(sp.name)}`, value: String(sp.port) });
    out.push(...linkVariables(prefix, ip, ports));
  }
  return out;
}

/**
 * upstream getServiceEnvVarMap: the master `kubernetes` Service of namespace default always;
 * every Service of the pod's namespace when enableServiceLinks. A Service of the pod's own
 * namespace named `kubernetes` wins over the master one.
 */
export function serviceEnvVarMap(
  services: readonly Service[],
  namespace: string,
  enableServiceLinks: boolean,
): Map<string, string> {
  const chosen = new Map<string, Service>();
  for (const s of services) {
    if (serviceProblem(s) !== undefined || !isServiceIPSet(s)) continue;
    const name = s.metadata?.name ?? '';
    const ns = s.metadata?.namespace ?? '';
    if (ns === MASTER_SERVICE_NAMESPACE && MASTER_SERVICES.has(name)) {
      if (!chosen.has(name)) chosen.set(name, s);
    } else if (ns === namespace && enableServiceLinks) chosen.set(name, s);
  }
  return new Map(fromServices([...chosen.values()]).map((e) => [e.name, e.value]));
}
