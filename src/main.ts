/**
 * The composition root (upstream NewMainKubelet + RunKubelet): every subsystem is constructed
 * here and only here, from one validated Config. Nothing else wires implementations together.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from './api/types.js';
import type { Config } from './config/index.js';
import { connectRuntime } from './cri/index.js';
import { createRuntimeManager, createImageGCManager } from './kuberuntime/index.js';
import { createGenericPLEG, createPodStatusCache, criRawSource, CgroupExitWatcher, findUnifiedRoot } from './pleg/index.js';
import { createStatusManager } from './status/index.js';
import { createPodConfig, createFileSource, createUrlSource, type PodSource } from './podconfig/index.js';
import { startServers, reviewClientFromKubeconfig, type RunningServers } from './server/index.js';
import { renderConfigz } from './config/index.js';
import { mainServerProvider } from './kubelet/server-provider.js';
import { hotPaths, nativeStatus } from './native/index.js';
import { metrics, registry } from './metrics/index.js';
import { Kubelet } from './kubelet/kubelet.js';
import { RunOnce, type RunOnceResult } from './kubelet/run-once.js';
import { detectNodeIP } from './kubelet/node-ip.js';
import { computeNodeInfo } from './kubelet/node-info.js';
import { createRecorder } from './events/index.js';
import { createNodeShutdownManager, signalTrigger, NodeShutdownReason } from './nodeshutdown/index.js';
import { createProbeManager } from './prober/index.js';
import { probeRegistry } from './metrics/probes.js';
import { createLogRotation, type ContainerLogsDeps } from './logs/index.js';
import { parseQuantity } from './util/quantity.js';
import { log } from './util/log.js';
import { birthCry } from './version.js';
import { buildSummary, cadvisorMetrics, createStatsProvider, resourceMetrics, stringifyExact, type OomCount, type StatsPodInfo, type StatsProvider } from './stats/index.js';
import { createOomWatcher, type OomEvent, type OomWatcher } from './oom/index.js';
import { createEvictionManager, type NodePressure } from './eviction/index.js';
import { defaultPressureConditions } from './nodestatus/index.js';
import type { EventRecorder } from './events/types.js';
import type { PodStatusCache } from './pleg/types.js';
import type { Runtime } from './kuberuntime/types.js';
import type { ImageService } from './cri/types.js';
import { setupApiServerMode, type ApiMode } from './main-apiserver.js';

export const VERSION = 'v0.1.0-kubelet-ts';

export interface Daemon {
  kubelet: Kubelet;
  /** Every event the agent raised (log sink always; apiserver sink in API server mode). */
  recorder: ReturnType<typeof createRecorder>;
  servers: RunningServers;
  /** What handleContainerLogs (src/server/container-logs.ts) needs; mount it on the authenticated port. */
  containerLogs: ContainerLogsDeps;
  /** Resolves when the sync loop has stopped. */
  done: Promise<void>;
  /** --runonce: waits for the pods of the sources and reports one result per pod. */
  runOnce?: () => Promise<RunOnceResult[]>;
  stop(): Promise<void>;
  stats: StatsProvider;
  oom: OomWatcher;
}

function reportNative(): void {
  const status = nativeStatus();
  for (const [path, impl] of Object.entries(status)) metrics.nativeEnabled.set({ path }, impl === 'native' ? 1 : 0);
  log('native').info({ hotPaths: status }, 'Hot path implementations');
}

export async function startDaemon(config: Config): Promise<Daemon> {
  const kc = config.kubelet;
  const rootDir = config.flags.rootDir;
  await mkdir(join(rootDir, 'pods'), { recursive: true });
  await mkdir(kc.podLogsDir, { recursive: true });
  reportNative();
  const recorder = createRecorder();
  birthCry(recorder, config, VERSION);

  const { runtime: criRuntime, images } = connectRuntime(kc.containerRuntimeEndpoint, { timeoutMs: kc.runtimeRequestTimeoutMs });
  const hostIP = detectNodeIP(config.flags.nodeIP);
  const node = computeNodeInfo({
    nodeName: config.nodeName, maxPods: kc.maxPods, systemReserved: kc.systemReserved, kubeReserved: kc.kubeReserved,
    evictionHard: kc.evictionHard, nodeLabels: config.flags.nodeLabels,
  });
  log('kubelet').info({ capacity: node.capacity, allocatable: node.allocatable, labels: node.labels }, 'Node allocatable for admission');
  const prober = createProbeManager({ runtime: criRuntime, recorder });
  // API server mode (--kubeconfig): node status, lease, pod source, status sync, mirror pods,
  // events, configMaps/secrets/tokens. Set up before the runtime manager, which reads the objects.
  let apiMode: ApiMode | undefined;
  // The eviction manager is built further down; the node status asks it only once running.
  let pressure: NodePressure | undefined;
  if (config.flags.kubeconfig) {
    apiMode = await setupApiServerMode({
      config, kubeletVersion: VERSION, node, hostIP, runtimeVersion: () => runtime.version(), images, recorder,
      pressureConditions: () => (pressure ? pressure.nodeConditions().map(({ type, status, reason, message }) => ({ type, status, reason, message })) : defaultPressureConditions()),
    });
  }
  const runtime = createRuntimeManager({
    runtime: criRuntime, images, podLogsDir: kc.podLogsDir, rootDir, nodeName: config.nodeName,
    clusterDNS: kc.clusterDNS, clusterDomain: kc.clusterDomain, hostIP,
    memoryCapacity: node.capacity.memory, nodeAllocatable: { cpuMilli: node.allocatable.milliCPU, memoryBytes: node.allocatable.memory },
    cgroupsPerQOS: kc.cgroupsPerQOS, cgroupRoot: kc.cgroupRoot || '/', objects: apiMode?.objects,
    imagePulls: { serialize: kc.serializeImagePulls, maxParallel: kc.maxParallelImagePulls },
    probeFailure: (id) => prober.probeFailure(id), startupProbeSucceeded: (id) => prober.startupProbeSucceeded(id), recorder,
  });
  const version = await runtime.version().catch((err: unknown) => {
    log('kubelet').warn({ err: String(err) }, 'Container runtime version check failed; will keep retrying');
    return undefined;
  });
  if (version) log('kubelet').info(version, 'Container runtime initialized');

  const cache = createPodStatusCache();
  const unifiedRoot = findUnifiedRoot();
  if (!unifiedRoot) log('pleg').warn('No cgroup v2 / unified hierarchy: container exits are seen by the periodic relist only');
  const pleg = createGenericPLEG({
    runtime, cache, relistPeriodMs: 1000,
    source: criRawSource(criRuntime),
    differ: hotPaths().pleg.createRelistDiffer(),
    subscribeContainerEvents: (onEvent, onError) => criRuntime.getContainerEvents(onEvent, onError),
    createExitWatcher: unifiedRoot
      ? (onExit) => new CgroupExitWatcher({ root: unifiedRoot, createFsWatcher: hotPaths().inotify.createFsWatcher, onExit, cgroupRoot: kc.cgroupRoot || '/' })
      : undefined,
  });
  const statusManager = apiMode?.statusManager ?? createStatusManager();

  const sources = new Map<string, PodSource>();
  if (kc.staticPodPath) {
    sources.set('file', createFileSource({
      path: kc.staticPodPath, nodeName: config.nodeName, periodMs: kc.fileCheckFrequencyMs, createFsWatcher: hotPaths().inotify.createFsWatcher,
    }));
  }
  if (kc.staticPodURL) {
    sources.set('http', createUrlSource({ url: kc.staticPodURL, headers: kc.staticPodURLHeader, nodeName: config.nodeName, periodMs: kc.httpCheckFrequencyMs }));
  }
  const podConfig = createPodConfig(sources);

  const memoryCapacity = BigInt(node.capacity.memory);
  const stats = createStatsProvider({
    nodeName: config.nodeName, listPods: () => statsPods(runtime, () => kubeletRef), cgroupRoot: kc.cgroupRoot || '/', rootDir, podLogsDir: kc.podLogsDir,
    imageFsPath: imageFsMount(images), memoryCapacity, housekeepingIntervalMs: config.flags.housekeepingIntervalMs,
  });
  let kubeletRef: Kubelet | undefined;
  const oomCounts = new Map<string, OomCount>();
  const oom = createOomWatcher({ onEvent: (e) => onOomEvent(e, { kubelet: () => kubeletRef, cache, recorder, nodeName: config.nodeName, oomCounts }) });
  stats.onPass((snap) => oom.observeCounters(snap.pods.flatMap((p) => p.containers.filter((c) => c.oomKills !== undefined).map((c) => ({ memcg: c.cgroup, podUid: p.uid, containerId: c.id, oomKills: c.oomKills! })))));
  const eviction = createEvictionManager({
    evictionHard: kc.evictionHard, evictionSoft: kc.evictionSoft, evictionSoftGracePeriod: kc.evictionSoftGracePeriod, stats, recorder, memoryCapacity,
    kubelet: { activePods: () => kubeletRef?.activePods() ?? [], evictPod: (pod, msg, grace) => kubeletRef!.evictPod(pod, msg, grace) },
    pressureTransitionPeriodMs: kc.evictionPressureTransitionPeriodMs, maxPodGracePeriodSeconds: kc.evictionMaxPodGracePeriod, monitoringPeriodMs: config.flags.housekeepingIntervalMs,
  });

  const kubelet = new Kubelet({
    nodeName: config.nodeName, hostIP, rootDir, maxPods: kc.maxPods, node, syncFrequencyMs: kc.syncFrequencyMs,
    runtime, pleg, cache, statusManager, sources: new Set([...sources.keys(), ...(apiMode ? [apiMode.sourceName] : [])]), recorder,
    admitHandlers: [(pod) => nodeShutdown.admit(pod), (pod) => eviction.admit(pod)], wasOomKilled: (id) => oom.wasOomKilled(id),
    probes: prober, prober,
  });
  kubeletRef = kubelet;
  pressure = eviction;
  apiMode?.start(podConfig, kubelet);

  const readProvider = {
    podsWithStatus: () => kubelet.podManager.getPods().map((p): Pod => ({ ...p, status: statusManager.getPodStatus(p.metadata!.uid!) ?? p.status ?? {} })),
    healthErrors: () => kubelet.healthErrors(),
    metrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    probeMetrics: async () => ({ contentType: probeRegistry.contentType, body: await probeRegistry.metrics() }),
    stats: statsRoutesProvider(stats, oomCounts, memoryCapacity),
  };
  const containerLogs: ContainerLogsDeps = {
    podLogsDir: kc.podLogsDir,
    getPod: (ns, name) => kubelet.podManager.getPods().find((p) => p.metadata?.name === name && (p.metadata?.namespace ?? 'default') === ns),
    isContainerRunning: async (pod, container) => {
      const s = await runtime.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace ?? 'default');
      return s.containerStatuses.find((c) => c.name === container)?.state === 'running';
    },
  };
  const servers = await startServers({
    healthz: { address: kc.healthzBindAddress, port: kc.healthzPort },
    readOnly: { address: kc.address, port: kc.readOnlyPort },
    provider: readProvider,
    main: {
      address: kc.address, port: kc.port, nodeName: config.nodeName, rootDir, nodeIPs: hostIP ? [hostIP] : [],
      tlsCertFile: kc.tlsCertFile, tlsPrivateKeyFile: kc.tlsPrivateKeyFile, tlsMinVersion: kc.tlsMinVersion, tlsCipherSuites: kc.tlsCipherSuites,
      authentication: kc.authentication, authorization: kc.authorization,
      reviewClient: config.flags.kubeconfig ? reviewClientFromKubeconfig(config.flags.kubeconfig) : undefined,
      enableDebuggingHandlers: kc.enableDebuggingHandlers, streamingConnectionIdleTimeoutMs: kc.streamingConnectionIdleTimeoutMs,
      provider: mainServerProvider(readProvider, runtime, criRuntime, () => renderConfigz(kc)),
      containerLogs,
    },
  });
  stats.start();
  oom.start();
  eviction.start();

  const once = config.flags.runOnce
    ? new RunOnce({ sources: sources.keys(), podConfig, status: (uid) => statusManager.getPodStatus(uid) })
    : undefined;
  const imageGC = createImageGCManager({
    images, listContainers: () => criRuntime.listContainers(), recorder,
    policy: { highThresholdPercent: kc.imageGCHighThresholdPercent, lowThresholdPercent: kc.imageGCLowThresholdPercent, minAgeMs: kc.imageMinimumGCAgeMs },
    pinnedImages: [config.flags.podInfraContainerImage],
    node: { kind: 'Node', name: config.nodeName, uid: config.nodeName },
  });
  if (!config.flags.runOnce) imageGC.start();
  const nodeShutdown = createNodeShutdownManager({
    shutdownGracePeriodMs: kc.shutdownGracePeriodMs, shutdownGracePeriodCriticalPodsMs: kc.shutdownGracePeriodCriticalPodsMs,
    activePods: () => kubelet.activePods(), trigger: signalTrigger('SIGPWR'),
    killPod: (pod, grace, message) => kubelet.evictPod(pod, message, grace, NodeShutdownReason),
  });
  if (!config.flags.runOnce) nodeShutdown.start();
  const logRotation = createLogRotation({
    runtime: criRuntime, maxSizeBytes: parseQuantity(kc.containerLogMaxSize), maxFiles: kc.containerLogMaxFiles, intervalMs: kc.containerLogMonitorIntervalMs,
  });
  logRotation.start();
  const done = kubelet.run(once ? once.tap(podConfig.updates()) : podConfig.updates());
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      podConfig.stop();
      imageGC.stop();
      nodeShutdown.stop();
      eviction.stop();
      oom.stop();
      stats.stop();
      apiMode?.stop();
      kubelet.stop();
      prober.stop();
      logRotation.stop();
      await done.catch(() => undefined);
      await servers.close();
      criRuntime.close();
      images.close();
    })();
    return stopping;
  };
  return { kubelet, recorder, servers, containerLogs, done, stop, runOnce: once && (() => once.run()), stats, oom };
}

// ---- stats, OOM and eviction wiring (issue 5) ---------------------------------------------

/** Running pods and containers for a stats pass. */
async function statsPods(runtime: Runtime, kubelet: () => Kubelet | undefined): Promise<StatsPodInfo[]> {
  return (await runtime.getPods(false)).map((p) => {
    // The image as the spec names it (cAdvisor's image label), else the runtime's reference.
    const spec = kubelet()?.podManager.getPodByUID(p.uid)?.spec;
    const image = (name: string) => [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].find((c) => c.name === name)?.image;
    return {
      uid: p.uid, name: p.name, namespace: p.namespace, cgroup: '',
      containers: p.containers.filter((c) => c.state === 'running').map((c) => ({ id: c.id, name: c.name, image: image(c.name) ?? c.image, createdAt: new Date(Number(c.createdAt / 1_000_000n)) })),
    };
  });
}

/** The image filesystem's mount point from CRI ImageFsInfo, asked once a minute. */
function imageFsMount(images: ImageService): () => Promise<string | undefined> {
  let cached: { at: number; path: string | undefined } | undefined;
  return async () => {
    if (cached && Date.now() - cached.at < 60_000) return cached.path;
    const path = (await images.imageFsInfo().catch(() => []))[0]?.mountpoint;
    cached = { at: Date.now(), path };
    return path;
  };
}

function statsRoutesProvider(stats: StatsProvider, oomCounts: ReadonlyMap<string, OomCount>, memoryCapacity: bigint) {
  return {
    summary: async (only: boolean) => stringifyExact(buildSummary(await stats.latest(), only)),
    resourceMetrics: async () => resourceMetrics(await stats.latest()),
    cadvisorMetrics: async () => cadvisorMetrics(await stats.latest(), [...oomCounts.values()], memoryCapacity),
  };
}

interface OomContext {
  kubelet(): Kubelet | undefined;
  cache: PodStatusCache;
  recorder: EventRecorder;
  nodeName: string;
  oomCounts: Map<string, OomCount>;
}

/** An OOM kill: OOMKilling on the pod (SystemOOM on the node outside pods), counted per container. */
function onOomEvent(e: OomEvent, ctx: OomContext): void {
  if (e.kernelTsUs !== undefined) metrics.oomKillToEvent.observe(Math.max(0, Number(process.hrtime.bigint() / 1000n) - e.kernelTsUs) / 1e6);
  const pod = e.podUid ? ctx.kubelet()?.podManager.getPodByUID(e.podUid) : undefined;
  const victim = `${e.pid ?? '?'} (${e.comm ?? 'unknown'})`;
  if (!e.podUid) {
    ctx.recorder.event({ kind: 'Node', name: ctx.nodeName, uid: ctx.nodeName }, 'Warning', 'SystemOOM', `System OOM encountered, victim process: ${e.comm ?? 'unknown'}, pid: ${e.pid ?? 0}`);
    log('oom').warn({ memcg: e.memcg, pid: e.pid, comm: e.comm, source: e.source }, 'System OOM');
    return;
  }
  const name = ctx.cache.get(e.podUid)?.status?.containerStatuses.find((c) => c.id === e.containerId)?.name ?? '';
  log('oom').warn({ pod: pod ? `${pod.metadata?.namespace}/${pod.metadata?.name}` : e.podUid, container: name, pid: e.pid, comm: e.comm, source: e.source }, 'Container OOM kill');
  if (!pod) return;
  const ns = pod.metadata?.namespace ?? 'default';
  const key = `${e.podUid}/${name}`;
  const prev = ctx.oomCounts.get(key);
  ctx.oomCounts.set(key, { podUid: e.podUid, namespace: ns, pod: pod.metadata!.name!, container: name, id: e.memcg, count: (prev?.count ?? 0) + 1 });
  ctx.recorder.event({ kind: 'Pod', name: pod.metadata!.name!, namespace: ns, uid: e.podUid, ...(name ? { fieldPath: `spec.containers{${name}}` } : {}) }, 'Warning', 'OOMKilling',
    `Memory cgroup out of memory: Killed process ${victim} in container ${name || e.containerId || '?'}`);
}
