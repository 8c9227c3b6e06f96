/**
 * Every upstream field and flag kubelet-ts does not act on, with upstream v1.35's default: such a
 * name is accepted only when it holds that default (so kubeadm's files and command lines load),
 * and any other value is refused naming it, rather than accepted and ignored. Read from
 * kubernetes/kubernetes pkg/kubelet/apis/config/v1beta1/defaults.go, staging/.../kubelet/config/
 * v1beta1/types.go (the defaults its comments give), cmd/kubelet/app/options/options.go and
 * globalflags_linux.go (flag-only and cAdvisor flag defaults), component-base logs/api/v1
 * (logging). Where defaults.go turns a zero value into the default (`if obj.X == zeroDuration`),
 * the zero value is the default here too. A deprecated name upstream says has no effect is
 * accepted with any well-typed value, as upstream does.
 */
import { parseDuration } from '../util/duration.js';
import { tryParseQuantity } from '../util/quantity.js';

/** One name's default: how it is shown, the check, and a default and a non-default sample value. */
export interface UnactedDefault {
  readonly shown: string;
  readonly isDefault: (v: unknown) => boolean;
  /** A value equal to the default (the file's form) and one that is not (absent: any value is accepted). */
  readonly sample: unknown;
  readonly other?: unknown;
  /** What kubelet-ts does instead, added to the refusal of a non-default value. */
  readonly why?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The zero values defaults.go turns into the default (0, "", "0s"; a flag's "0"). */
const isZero = (v: unknown): boolean =>
  v === null || v === 0 || v === '' || (typeof v === 'string' && parseDuration(v) === 0);

/** A flag gives a string; a file a typed value: both compare by meaning. */
const asNumber = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : undefined;

/** zero: defaults.go turns the zero value into the default; other: a non-default sample of the field's type. */
type Opts = { zero?: boolean; why?: string; other?: unknown };
const withZero =
  (ok: (v: unknown) => boolean, o: Opts) =>
  (v: unknown): boolean =>
    (o.zero === true && isZero(v)) || ok(v);

const bool = (d: boolean, o: Opts = {}): UnactedDefault => ({
  shown: String(d),
  isDefault: withZero((v) => v === d || v === String(d), o),
  sample: d,
  other: !d,
  why: o.why,
});

const int = (d: number, o: Opts = {}): UnactedDefault => ({
  shown: String(d),
  isDefault: withZero((v) => asNumber(v) === d, o),
  sample: d,
  other: d + 1,
  why: o.why,
});

const num = (d: number, o: Opts = {}): UnactedDefault => ({ ...int(d, o), other: d / 2 });

const durationIs = (v: unknown, ms: number | undefined): boolean => typeof v === 'string' && parseDuration(v) === ms;

const dur = (d: string, o: Opts = {}): UnactedDefault => ({
  shown: d,
  isDefault: withZero((v) => durationIs(v, parseDuration(d)), o),
  sample: d,
  other: '1h7m',
  why: o.why,
});

/** A string, equal to one of `alts` too (upstream spells some defaults two ways). */
const str = (d: string, o: Opts & { alts?: readonly string[] } = {}): UnactedDefault => ({
  shown: JSON.stringify(d),
  isDefault: (v) => (o.zero === true && (v === '' || v === null)) || v === d || (o.alts ?? []).includes(v as string),
  sample: d,
  other: d === 'x' ? 'y' : 'x',
  why: o.why,
});

const quantity = (d: string): UnactedDefault => ({
  shown: JSON.stringify(d),
  isDefault: (v) => (typeof v === 'string' || typeof v === 'number') && tryParseQuantity(v) === tryParseQuantity(d),
  sample: d,
  other: '1Gi',
});

/** nil / empty: a map, a list of objects or a "k=v,..." flag left empty. */
const empty = (shown: '{}' | '[]', o: Opts = {}): UnactedDefault => ({
  shown,
  isDefault: (v) =>
    v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isObj(v) && Object.keys(v).length === 0),
  sample: shown === '{}' ? {} : [],
  other: o.other ?? (shown === '{}' ? { x: '1' } : ['x']),
  why: o.why,
});

/** An object: every member given must hold its default; an absent member is its default. */
const obj = (
  members: Readonly<Record<string, UnactedDefault>>,
  shown: string,
  other: unknown,
  why?: string,
): UnactedDefault => ({
  shown,
  why,
  isDefault: (v) =>
    v === null ||
    (isObj(v) && Object.entries(v).every(([k, x]) => members[k] !== undefined && members[k].isDefault(x))),
  sample: {},
  other,
});

/** Deprecated upstream with no effect there: any value, as upstream. */
const noEffect = (d: number | string, why: string): UnactedDefault => ({
  shown: `${JSON.stringify(d)}; deprecated, no effect upstream: any value accepted`,
  isDefault: () => true,
  sample: d,
  why,
});

const infoBufferSize = quantity('0');
const logFormatOptions = obj({ splitStream: bool(false), infoBufferSize }, '{}', {});

/** Config field (JSON name) → its default. */
export const UNACTED_FIELDS: Readonly<Record<string, UnactedDefault>> = {
  enableServer: bool(true, { why: 'the main port (10250) is always served' }),
  tlsCurvePreferences: empty('[]', { other: [23] }),
  registryPullQPS: int(5, { why: 'image pulls are not rate-limited' }),
  registryBurst: int(10, { zero: true, why: 'image pulls are not rate-limited' }),
  enableContentionProfiling: bool(false),
  oomScoreAdj: int(-999, { why: "the agent's own oom_score_adj is left as started" }),
  volumeStatsAggPeriod: dur('1m', { zero: true }),
  kubeletCgroups: str('', { why: 'the agent is not moved into a cgroup' }),
  systemCgroups: str(''),
  cpuManagerPolicy: str('none', { zero: true, why: 'the CPU manager is not implemented' }),
  singleProcessOOMKill: {
    ...bool(false),
    isDefault: (v) => v === null || v === false,
    shown: 'unset (false on cgroup v2)',
    why: 'memory.oom.group is not managed (containers get containerd/runc defaults)',
  },
  cpuManagerPolicyOptions: empty('{}', { why: 'the CPU manager is not implemented' }),
  cpuManagerReconcilePeriod: dur('10s', { zero: true, why: 'the CPU manager is not implemented' }),
  draManagerReconcilePeriod: dur('60s', { zero: true, why: 'dynamic resource allocation is not implemented' }),
  memoryManagerPolicy: str('None', { zero: true, why: 'the memory manager is not implemented' }),
  topologyManagerPolicy: str('none', { zero: true, why: 'the topology manager is not implemented' }),
  topologyManagerScope: str('container', { zero: true, why: 'the topology manager is not implemented' }),
  topologyManagerPolicyOptions: empty('{}', { why: 'the topology manager is not implemented' }),
  qosReserved: empty('{}'),
  hairpinMode: str('promiscuous-bridge', { zero: true, why: 'pod networking is left to the CNI plugin' }),
  podCIDR: str('', { why: 'pod addresses come from the CNI configuration' }),
  runOnce: bool(false, { why: 'use the --runonce flag' }),
  cpuCFSQuota: bool(true),
  cpuCFSQuotaPeriod: dur('100ms'),
  nodeStatusMaxImages: int(50),
  maxOpenFiles: int(1000000, { zero: true, why: "the agent's open-file limit is left as started" }),
  contentType: str('application/vnd.kubernetes.protobuf', { zero: true, why: 'the API client speaks JSON' }),
  evictionMinimumReclaim: empty('{}'),
  mergeDefaultEvictionSettings: bool(false, { why: 'evictionHard given replaces the defaults here, as with false' }),
  podsPerCore: int(0),
  enableControllerAttachDetach: bool(true, {
    why: 'the attach/detach controller attaches volumes (the Node is annotated controller-managed-attach-detach); the agent never attaches one itself',
  }),
  protectKernelDefaults: bool(false),
  makeIPTablesUtilChains: bool(true, { why: 'no iptables chains are made' }),
  iptablesMasqueradeBit: noEffect(14, 'upstream: "Deprecated: no longer has any effect"'),
  iptablesDropBit: noEffect(15, 'upstream: "Deprecated: no longer has any effect"'),
  memorySwap: obj(
    { swapBehavior: str('NoSwap', { zero: true, why: 'only NoSwap is implemented' }) },
    '{swapBehavior: NoSwap}',
    { swapBehavior: 'LimitedSwap' },
    'only NoSwap is implemented: no swap is given to pods (see failSwapOn)',
  ),
  containerLogMaxWorkers: int(1, { zero: true, why: 'container logs are rotated by one worker' }),
  configMapAndSecretChangeDetectionStrategy: str('Watch', { zero: true }),
  reservedSystemCPUs: str(''),
  showHiddenMetricsForVersion: str(''),
  volumePluginDir: str('/usr/libexec/kubernetes/kubelet-plugins/volume/exec/', {
    zero: true,
    alts: ['/usr/libexec/kubernetes/kubelet-plugins/volume/exec'],
    why: 'FlexVolume plugins are not implemented',
  }),
  providerID: str(''),
  kernelMemcgNotification: bool(false),
  logging: obj(
    {
      format: str('text', { zero: true }),
      // a duration, or nanoseconds as a number
      flushFrequency: { ...dur('5s', { zero: true }), isDefault: (v) => isZero(v) || v === 5e9 || durationIs(v, 5000) },
      verbosity: int(0),
      vmodule: empty('[]'),
      options: obj({ json: logFormatOptions, text: logFormatOptions }, '{}', {}),
    },
    '{format: text, flushFrequency: 5s, verbosity: 0}',
    { format: 'json' },
    'set the log format and verbosity with --logging-format and -v',
  ),
  enableSystemLogHandler: bool(true),
  enableSystemLogQuery: bool(false),
  shutdownGracePeriodByPodPriority: empty('[]', {
    why: 'graceful shutdown by pod priority is not implemented',
    other: [{ priority: 0, shutdownGracePeriodSeconds: 30 }],
  }),
  crashLoopBackOff: obj(
    {
      maxContainerRestartPeriod: {
        ...dur('5m'),
        isDefault: (v) => durationIs(v, 0) || durationIs(v, 300_000),
      },
    },
    '{}',
    { maxContainerRestartPeriod: '1m' },
    'maxContainerRestartPeriod (KubeletCrashLoopBackOffMax) is not implemented: the back-off tops out at 5m',
  ),
  reservedMemory: empty('[]', {
    why: 'the memory manager is not implemented',
    other: [{ numaNode: 0, limits: { memory: '1Gi' } }],
  }),
  enableProfilingHandler: bool(true),
  enableDebugFlagsHandler: bool(true),
  memoryThrottlingFactor: num(0.9, { why: 'MemoryQoS is not implemented' }),
  memoryReservationPolicy: str('None', { zero: true, why: 'MemoryQoS is not implemented' }),
  tracing: empty('{}', { why: 'OpenTelemetry tracing is not implemented' }),
  localStorageCapacityIsolation: bool(true),
  podHousekeepingPeriod: dur('2s'),
};

const CADVISOR = "a cAdvisor flag: kubelet-ts's stats are read from cgroups, not cAdvisor";

/** Flag → the config field it sets (its default is the field's), or its own default (flag-only names). */
export const UNACTED_FLAGS: Readonly<Record<string, string | UnactedDefault>> = {
  'runtime-cgroups': str(''),
  'config-dir': str('', { why: 'drop-in configuration directories are not implemented' }),
  'cloud-provider': str('', { why: 'cloud providers are not implemented' }),
  'cloud-config': str('', { why: 'cloud providers are not implemented' }),
  'minimum-container-ttl-duration': dur('0s', { zero: true }),
  'maximum-dead-containers-per-container': int(1),
  'maximum-dead-containers': int(-1),
  'experimental-mounter-path': str(''),
  'experimental-allocatable-ignore-eviction': bool(false),
  'enable-server': 'enableServer',
  'registry-qps': 'registryPullQPS',
  'registry-burst': 'registryBurst',
  'contention-profiling': 'enableContentionProfiling',
  'oom-score-adj': 'oomScoreAdj',
  'volume-plugin-dir': 'volumePluginDir',
  'volume-stats-agg-period': 'volumeStatsAggPeriod',
  'kubelet-cgroups': 'kubeletCgroups',
  'system-cgroups': 'systemCgroups',
  'provider-id': 'providerID',
  'cpu-manager-policy': 'cpuManagerPolicy',
  'cpu-manager-policy-options': 'cpuManagerPolicyOptions',
  'cpu-manager-reconcile-period': 'cpuManagerReconcilePeriod',
  'qos-reserved': 'qosReserved',
  'topology-manager-policy': 'topologyManagerPolicy',
  'topology-manager-scope': 'topologyManagerScope',
  'topology-manager-policy-options': 'topologyManagerPolicyOptions',
  'hairpin-mode': 'hairpinMode',
  'pod-cidr': 'podCIDR',
  'cpu-cfs-quota': 'cpuCFSQuota',
  'cpu-cfs-quota-period': 'cpuCFSQuotaPeriod',
  'enable-controller-attach-detach': 'enableControllerAttachDetach',
  'make-iptables-util-chains': 'makeIPTablesUtilChains',
  'iptables-masquerade-bit': 'iptablesMasqueradeBit',
  'iptables-drop-bit': 'iptablesDropBit',
  'node-status-max-images': 'nodeStatusMaxImages',
  'kernel-memcg-notification': 'kernelMemcgNotification',
  'local-storage-capacity-isolation': 'localStorageCapacityIsolation',
  'max-open-files': 'maxOpenFiles',
  'kube-api-content-type': 'contentType',
  'eviction-minimum-reclaim': 'evictionMinimumReclaim',
  'pods-per-core': 'podsPerCore',
  'protect-kernel-defaults': 'protectKernelDefaults',
  'reserved-cpus': 'reservedSystemCPUs',
  'memory-manager-policy': 'memoryManagerPolicy',
  'reserved-memory': 'reservedMemory',
  // component-base logging: --logging-format and -v are acted on
  'log-flush-frequency': dur('5s'),
  vmodule: str(''),
  'log-json-split-stream': bool(false),
  'log-json-info-buffer-size': quantity('0'),
  'log-text-split-stream': bool(false),
  'log-text-info-buffer-size': quantity('0'),
  // cAdvisor's flags (globalflags_linux.go): --housekeeping-interval is acted on
  'docker-root': str('/var/lib/docker', { why: CADVISOR }),
  'application-metrics-count-limit': int(100, { why: CADVISOR }),
  'boot-id-file': str('/proc/sys/kernel/random/boot_id', { why: CADVISOR }),
  'container-hints': str('/etc/cadvisor/container_hints.json', { why: CADVISOR }),
  containerd: str('/run/containerd/containerd.sock', { why: CADVISOR }),
  docker: str('unix:///var/run/docker.sock', { why: CADVISOR }),
  'docker-env-metadata-whitelist': str('', { why: CADVISOR }),
  'docker-only': bool(false, { why: CADVISOR }),
  'docker-tls': bool(false, { why: CADVISOR }),
  'docker-tls-ca': str('ca.pem', { why: CADVISOR }),
  'docker-tls-cert': str('cert.pem', { why: CADVISOR }),
  'docker-tls-key': str('key.pem', { why: CADVISOR }),
  'enable-load-reader': bool(false, { why: CADVISOR }),
  'event-storage-age-limit': str('default=0', { why: CADVISOR }),
  'event-storage-event-limit': str('default=0', { why: CADVISOR }),
  'global-housekeeping-interval': dur('1m', { why: CADVISOR }),
  'log-cadvisor-usage': bool(false, { why: CADVISOR }),
  'machine-id-file': str('/etc/machine-id,/var/lib/dbus/machine-id', { why: CADVISOR }),
  'storage-driver-user': str('root', { why: CADVISOR }),
  'storage-driver-password': str('root', { why: CADVISOR }),
  'storage-driver-host': str('localhost:8086', { why: CADVISOR }),
  'storage-driver-db': str('cadvisor', { why: CADVISOR }),
  'storage-driver-table': str('stats', { why: CADVISOR }),
  'storage-driver-secure': bool(false, { why: CADVISOR }),
  'storage-driver-buffer-duration': dur('1m', { why: CADVISOR }),
  'containerd-namespace': str('k8s.io', { why: CADVISOR }),
};

/** The default of flag `name` (through the field it sets). */
export function unactedFlagDefault(name: string): UnactedDefault | undefined {
  const entry = UNACTED_FLAGS[name];
  return typeof entry === 'string' ? UNACTED_FIELDS[entry] : entry;
}

function refusal(where: string, entry: UnactedDefault | undefined, got: unknown): string | undefined {
  if (entry?.isDefault(got)) return undefined;
  const shown = entry ? `upstream's default (${entry.shown})` : "upstream's default";
  const why = entry?.why ? ` (${entry.why})` : '';
  return `${where}: kubelet-ts accepts only ${shown} (got ${JSON.stringify(got)}): kubelet-ts does not implement it${why}`;
}

/** A problem when config field `name` does not hold upstream's default. */
export function unactedDefaultProblem(name: string, value: unknown): string | undefined {
  return refusal(`config field ${name}`, UNACTED_FIELDS[name], value);
}

/** A problem when flag `name` (its raw command-line string) does not hold upstream's default. */
export function unactedFlagProblem(name: string, raw: string): string | undefined {
  return refusal(`--${name}`, unactedFlagDefault(name), raw);
}
