/**
 * Service environment variables (upstream pkg/kubelet/envvars FromServices and kubelet_pods.go
 * getServiceEnvVarMap): what in-cluster clients read to find the apiserver
 * (KUBERNETES_SERVICE_HOST/PORT) and, with spec.enableServiceLinks, the docker-link style
 * variables of every Service of the pod's namespace.
 *
 * They are computed when a container is created and never change a running container: a
 * Service made later reaches only containers started later (upstream's documented race).
 */

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
    if (!isServiceIPSet(s)) continue;
    const name = s.metadata?.name ?? '';
    const ns = s.metadata?.namespace ?? '';
    if (ns === MASTER_SERVICE_NAMESPACE && MASTER_SERVICES.has(name)) {
      if (!chosen.has(name)) chosen.set(name, s);
    } else if (ns === namespace && enableServiceLinks) chosen.set(name, s);
  }
  return new Map(fromServices([...chosen.values()]).map((e) => [e.name, e.value]));
}
