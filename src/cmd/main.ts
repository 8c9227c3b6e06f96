/**
 * The composition root (upstream NewMainKubelet + RunKubelet): every subsystem is constructed
 * here and only here, from one validated Config, in the order their dependencies allow. Nothing
 * here decides anything: each piece of logic lives in the folder that owns it.
 */
import { mkdir } from 'node:fs/promises';
import type { Config } from '../config/index.js';
import { featureGates, renderConfigz } from '../config/index.js';
import { connectRuntime } from '../cri/index.js';
import {
  createImageGCManager,
  createImageManager,
  createNodeKeyring,
  createPullManager,
  type VerificationPolicy,
} from '../images/index.js';
import { createPullSecretsLookup } from '../apimode/pull-secrets.js';
import { createRuntimeManager, runtimeHandlerFor, type RuntimeManagerDeps } from '../kuberuntime/index.js';
import {
  createCsiPluginManager,
  createVolumeManager,
  csiPlugin,
  setupDataDirs,
  type CsiPluginManager,
} from '../volume/index.js';
import {
  createGenericPLEG,
  createPodStatusCache,
  criRawSource,
  CgroupExitWatcher,
  findUnifiedRoot,
} from '../pleg/index.js';
import { createStatusManager } from '../status/index.js';
import { createPodConfig, createFileSource, createUrlSource, type PodSource } from '../podconfig/index.js';
import {
  startServers,
  reviewClientFromKubeconfig,
  mainServerProvider,
  readServerProvider,
  runtimeContainerLogs,
  type RunningServers,
} from '../server/index.js';
import { metrics, registry } from '../metrics/index.js';
import { probeRegistry } from '../metrics/probes.js';
import { Kubelet } from '../kubelet/kubelet.js';
import { AllocationManager } from '../kubelet/allocation.js';
import { RunOnce, type RunOnceResult } from '../kubelet/run-once.js';
import { createGarbageCollection } from '../kubelet/gc-loops.js';
import { ephemeralContainerRefusalMessage } from '../kubelet/admission.js';
import { newAppArmorValidator } from '../kubelet/apparmor.js';
import { createUserNamespaces, usernsAdmitHandler } from '../kubelet/userns/index.js';
import type { RuntimeHandler } from '../cri/index.js';
import { PodManager } from '../podmanager/index.js';
import { killPodNow } from '../podworkers/index.js';
import {
  computeNodeInfo,
  fsCapacity,
  hostIPsOf,
  hostMaxPID,
  nodeAllocatableProblems,
  resolveNodeIPs,
  resourceList,
  type NodeInfo,
} from '../node/index.js';
import { ConfigError, errorMessage } from '../errors.js';
import { createRecorder } from '../events/index.js';
import { createNodeShutdownManager, signalTrigger, NodeShutdownReason } from '../nodeshutdown/index.js';
import { createProbeManager } from '../prober/index.js';
import { createLogRotation, type ContainerLogsDeps } from '../logs/index.js';
import { parseQuantity } from '../util/quantity.js';
import { log } from '../util/log.js';
import {
  CsiVolumeStatsCache,
  registerVolumeStatsCollector,
  createStatsProvider,
  imageFsMount,
  criContainerFs,
  runtimeStatsPods,
  statsRoutes,
  type StatsProvider,
} from '../stats/index.js';
import { createOomPodEvents, createOomWatcher, type OomWatcher } from '../oom/index.js';
import { createEvictionManager } from '../eviction/index.js';
import { servingCertificateRotation, setupApiServerMode, type ApiMode } from './main-apiserver.js';
import { hotPaths, nativeStatus } from './hot-paths.js';
import { addonMallocTrim, startMallocTrim } from './malloc-trim.js';
import { birthCry, reportCgroupVersion, reportFeatureGates } from './start-info.js';
import {
  createDevices,
  deviceHealthErrors,
  standaloneCapacityPass,
  startDevices,
  startPodResources,
  type Devices,
} from './main-devices.js';
import { deviceAdmission } from '../kubelet/device-admission.js';
import { DEVICE_PLUGIN } from '../pluginmanager/index.js';
import {
  cgroupDriverFromRuntime,
  cgroupNaming,
  connectSystemdSlices,
  detectCgroupMounts,
  kubepodsCgroupConfig,
  reservedCgroups,
  type CgroupDriverChoice,
  type RuntimeConfigSource,
} from '../cm/index.js';
import type { CgroupDriver } from '../config/cgroup-drivers.js';

export interface Daemon {
  kubelet: Kubelet;
  /** Every event the agent raised (log sink always; apiserver sink in API server mode). */
  recorder: ReturnType<typeof createRecorder>;
  servers: RunningServers;
  /** What handleContainerLogs (src/server/container-logs.ts) needs; mount it on the authenticated port. */
  containerLogs: ContainerLogsDeps;
  /** Resolves when the sync loop has stopped. */
  done: Promise<void>;
  /** --runonce: waits for the pods of the first update of the sources and reports one result per pod. */
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

/**
 * The runtime's cgroup driver wins over the configured one (cm/cgroup-driver-from-runtime.ts);
 * /configz shows the driver in effect, as upstream's does.
 */
async function effectiveCgroupDriver(
  runtime: RuntimeConfigSource,
  configured: CgroupDriver,
): Promise<CgroupDriverChoice> {
  const choice = await cgroupDriverFromRuntime(runtime, configured);
  if (choice.from === 'runtime') {
    log('kubelet').info(
      { cgroupDriver: choice.driver, configured },
      'Using cgroup driver setting received from the CRI runtime',
    );
  } else {
    // Upstream's version label: the release whose kubelet will refuse such a runtime.
    if (choice.from === 'unimplemented') metrics.criLosingSupport.set({ version: '1.36.0' }, 1);
    const why =
      choice.from === 'unreachable'
        ? 'the CRI runtime did not answer; if it turns out to use the other driver, its sandboxes fail until the agent is restarted'
        : 'the CRI runtime should be updated to support RuntimeConfig (containerd 2.0 or later)';
    log('kubelet').warn(
      { cgroupDriver: choice.driver, reason: choice.reason },
      `Using the cgroupDriver of the kubelet config: ${why}`,
    );
  }
  return choice;
}

/**
 * upstream enforceNodeAllocatableCgroups' inputs: kubepods' limits from the internal capacity
 * (with the host's pids), podPidsLimit and the reserved cgroups. A reservation larger than the
 * capacity stops the start, as upstream's validateNodeAllocatable does.
 */
function nodeAllocatableCgroups(
  kc: Config['kubelet'],
  node: NodeInfo,
  rootDir: string,
): Pick<RuntimeManagerDeps, 'kubepodsCgroup' | 'podPidsLimit' | 'reservedCgroups'> {
  const maxPID = hostMaxPID();
  const reserved = { systemReserved: resourceList(kc.systemReserved), kubeReserved: resourceList(kc.kubeReserved) };
  const cfg = {
    capacity: {
      cpu: node.capacity.milliCPU,
      memory: node.capacity.memory,
      'ephemeral-storage': fsCapacity(rootDir),
      ...node.capacity.hugePages,
      ...(maxPID !== undefined ? { pid: maxPID } : {}),
    },
    ...reserved,
    evictionHard: kc.evictionHard,
  };
  const problems = nodeAllocatableProblems(cfg);
  if (problems.length > 0)
    throw new ConfigError(problems.map((p) => `systemReserved + kubeReserved + evictionHard: ${p}`));
  return {
    kubepodsCgroup: kubepodsCgroupConfig(cfg, kc.enforceNodeAllocatable),
    podPidsLimit: kc.podPidsLimit,
    reservedCgroups: reservedCgroups(kc.enforceNodeAllocatable, kc, reserved),
  };
}

/**
 * CSI drivers register through <root-dir>/plugins_registry (upstream pluginManager, started with
 * the runtime-dependent modules); in API server mode each is installed into the Node and its
 * CSINode. A watcher that cannot start is logged, not fatal, as upstream.
 */
function startPluginManager(config: Config, apiMode: ApiMode | undefined, devices: Devices): CsiPluginManager {
  const manager = createCsiPluginManager({
    rootDir: config.flags.rootDir,
    createFsWatcher: hotPaths().inotify.createFsWatcher,
    nodeName: config.nodeName,
    client: apiMode?.clients.main,
  });
  // upstream GetPluginRegistrationHandlers: device plugins may register through plugins_registry too.
  manager.addHandler(DEVICE_PLUGIN, devices.dm.pluginHandler);
  try {
    manager.run();
  } catch (err) {
    log('pluginmanager').error({ err: errorMessage(err) }, 'The plugin watcher failed to start');
  }
  return manager;
}

export async function startDaemon(config: Config): Promise<Daemon> {
  const kc = config.kubelet;
  const rootDir = config.flags.rootDir;
  const cgroupRoot = kc.cgroupRoot || '/';
  // upstream NodeAddress: the given --node-ip (validated: on a host interface, refused at once
  // when it is not) or the detected IP.
  const nodeIPs = resolveNodeIPs({ nodeIPs: config.flags.nodeIPs, hostnameOverride: config.flags.hostnameOverride });
  const hostIPs = hostIPsOf(nodeIPs);
  const hostIP = hostIPs[0] ?? '';
  await setupDataDirs(rootDir);
  await mkdir(kc.podLogsDir, { recursive: true });
  reportNative();
  // The node keyring (docker config file, credential provider plugins): a bad plugin config stops the start here.
  const keyring = createNodeKeyring({
    rootDir,
    credentialProviderConfig: config.flags.imageCredentialProviderConfig,
    credentialProviderBinDir: config.flags.imageCredentialProviderBinDir,
  });
  const recorder = createRecorder();
  birthCry(recorder, config);
  reportCgroupVersion(recorder, config.nodeName);
  reportFeatureGates(config.kubelet.featureGates);
  metrics.nodeName.set({ node: config.nodeName }, 1);

  const { runtime: criRuntime, images } = connectRuntime(kc.containerRuntimeEndpoint, {
    timeoutMs: kc.runtimeRequestTimeoutMs,
  });
  const driverChoice = await effectiveCgroupDriver(criRuntime, kc.cgroupDriver);
  const cgroupDriver = driverChoice.driver;
  // The systemd driver needs systemd's manager before any pod cgroup: a node without one fails here, clearly.
  const systemd =
    cgroupDriver === 'systemd' && kc.cgroupsPerQOS
      ? await connectSystemdSlices({ fromRuntime: driverChoice.from === 'runtime' })
      : undefined;
  const node = computeNodeInfo({
    nodeName: config.nodeName,
    maxPods: kc.maxPods,
    systemReserved: kc.systemReserved,
    kubeReserved: kc.kubeReserved,
    evictionHard: kc.evictionHard,
    nodeLabels: config.flags.nodeLabels,
  });
  log('kubelet').info(
    { capacity: node.capacity, allocatable: node.allocatable, labels: node.labels },
    'Node allocatable for admission',
  );
  const prober = createProbeManager({ runtime: criRuntime, recorder });
  // The device manager (<root-dir>/device-plugins): made before API server mode, whose node
  // status reports its extended resources; started once the Kubelet exists (below).
  const devices = createDevices(rootDir, config.flags.deviceEndpointStopGraceMs);
  // API server mode (--kubeconfig): set up before the runtime manager, which reads its objects.
  const apiMode: ApiMode | undefined = config.flags.kubeconfig
    ? await setupApiServerMode({
        config,
        node,
        nodeIPs,
        runtimeVersion: () => criRuntime.version(),
        images,
        recorder,
        devices: {
          extendedResources: () => devices.extended.refresh(),
          resetExtendedResources: devices.resetExtendedResources,
        },
      })
    : undefined;
  devices.onChange.notify = apiMode ? () => apiMode.pokeNodeStatus() : undefined;
  // KubeletEnsureSecretPulledImages: the pull records under <root-dir>/image_manager; off: none kept.
  const pullManager = featureGates(kc.featureGates).enabled('KubeletEnsureSecretPulledImages')
    ? await createPullManager({
        rootDir,
        policy: kc.imagePullCredentialsVerificationPolicy as VerificationPolicy,
        allowlist: kc.preloadedImagesVerificationAllowlist,
        listImages: () => images.listImages(),
      })
    : undefined;
  const imageManager = createImageManager({
    images,
    recorder,
    serializeImagePulls: kc.serializeImagePulls,
    maxParallelImagePulls: kc.maxParallelImagePulls,
    keyring,
    pullManager,
  });
  // The volume manager: the kubelet mounts each pod's volumes through it before the runtime's
  // SyncPod, the runtime binds what it set up and prepares subPaths with the chosen hot path.
  const csi: { drivers?: CsiPluginManager['csiDrivers'] } = {};
  const volumeManager = createVolumeManager({
    rootDir,
    nodeName: config.nodeName,
    hostIP,
    storage: apiMode?.storage,
    objects: apiMode?.objects,
    recorder,
    // The plugin manager starts later (below): its drivers are looked up at each mount.
    csiDrivers: { get: (name) => csi.drivers?.get(name) },
    allocatable: { cpu: node.allocatable.milliCPU, memory: node.allocatable.memory, ephemeralStorage: 0 },
    bindSubPath: hotPaths().subpath.bindSubPath,
  });
  // In-place resize: allocated and actuated resources, checkpointed under the root dir.
  const allocation = new AllocationManager({ rootDir, now: () => Date.now() });
  // User namespaces (hostUsers: false): the kubelet's ID range and the blocks already handed out
  // (pod directories' checkpoints); a bad range stops the start, as upstream's.
  let runtimeHandlers: () => readonly RuntimeHandler[] = () => [];
  const userns = await createUserNamespaces({
    rootDir,
    maxPods: kc.maxPods,
    idsPerPod: kc.userNamespaces.idsPerPod,
    handlers: () => runtimeHandlers(),
  });
  // AppArmor on this host, read once: admission and ephemeral containers ask the same validator.
  const appArmor = newAppArmorValidator();
  // Read once: the pod cgroups and the stats pass walk the same hierarchies.
  const cgroupMounts = detectCgroupMounts();
  const runtime = createRuntimeManager({
    runtime: criRuntime,
    imageManager,
    podLogsDir: kc.podLogsDir,
    rootDir,
    actuated: allocation,
    nodeName: config.nodeName,
    clusterDNS: kc.clusterDNS,
    clusterDomain: kc.clusterDomain,
    resolvConf: kc.resolvConf,
    hostIP,
    hostIPs,
    memoryCapacity: node.capacity.memory,
    nodeAllocatable: { cpuMilli: node.allocatable.milliCPU, memoryBytes: node.allocatable.memory },
    ...nodeAllocatableCgroups(kc, node, rootDir),
    cgroupsPerQOS: kc.cgroupsPerQOS,
    cgroupRoot,
    cgroupDriver,
    cgroupMounts,
    systemdUnits: systemd?.slices,
    objects: apiMode?.objects,
    // Standalone: no secret manager, so a static pod's pull secrets are all reported missing.
    pullSecretsFor: createPullSecretsLookup(
      apiMode ? (ns, name) => apiMode.objects.secret(ns, name) : () => null,
      recorder,
    ),
    runtimeClasses: apiMode?.runtimeClasses,
    ephemeralRefusal: (pod, i) => ephemeralContainerRefusalMessage(pod, i) ?? appArmor.ephemeralRefusal(pod, i),
    userNamespaces: (pod, handler) => userns.getOrCreateUserNamespaceMappings(pod, handler),
    services: apiMode?.services,
    probeFailure: (id) => prober.probeFailure(id),
    startupProbeSucceeded: (id) => prober.startupProbeSucceeded(id),
    recorder,
    volumes: volumeManager,
    seccompDefault: kc.seccompDefault,
    deviceOptions: (pod, c) => devices.dm.deviceRunContainerOptions(pod, c),
  });
  const version = await runtime.version().catch((err: unknown) => {
    log('kubelet').warn({ err: String(err) }, 'Container runtime version check failed; will keep retrying');
    return undefined;
  });
  if (version) log('kubelet').info(version, 'Container runtime initialized');

  const cache = createPodStatusCache();
  const unifiedRoot = findUnifiedRoot();
  if (!unifiedRoot)
    log('pleg').warn('No cgroup v2 / unified hierarchy: container exits are seen by the periodic relist only');
  const pleg = createGenericPLEG({
    runtime,
    cache,
    relistPeriodMs: 1000,
    source: criRawSource(criRuntime),
    differ: hotPaths().pleg.createRelistDiffer(),
    subscribeContainerEvents: (onEvent, onError) => criRuntime.getContainerEvents(onEvent, onError),
    createExitWatcher: unifiedRoot
      ? (onExit) =>
          new CgroupExitWatcher({
            root: unifiedRoot,
            createFsWatcher: hotPaths().inotify.createFsWatcher,
            onExit,
            cgroupRoot,
            naming: cgroupNaming(cgroupDriver),
          })
      : undefined,
  });
  const statusManager = apiMode?.statusManager ?? createStatusManager();

  const sources = new Map<string, PodSource>();
  if (kc.staticPodPath) {
    sources.set(
      'file',
      createFileSource({
        path: kc.staticPodPath,
        nodeName: config.nodeName,
        periodMs: kc.fileCheckFrequencyMs,
        createFsWatcher: hotPaths().inotify.createFsWatcher,
      }),
    );
  }
  if (kc.staticPodURL) {
    sources.set(
      'http',
      createUrlSource({
        url: kc.staticPodURL,
        headers: kc.staticPodURLHeader,
        nodeName: config.nodeName,
        periodMs: kc.httpCheckFrequencyMs,
      }),
    );
  }
  const podConfig = createPodConfig(sources);

  const podManager = new PodManager();
  const memoryCapacity = BigInt(node.capacity.memory);
  // CSI volume stats: NodeGetVolumeStats every volumeStatsAggPeriod, cached for the Summary API and /metrics.
  const csiVolumeStats = new CsiVolumeStatsCache({
    pods: () => podManager.getPods(),
    volumes: volumeManager,
    drivers: { get: (name) => csi.drivers?.get(name) },
    volumeHealth: featureGates(kc.featureGates).enabled('CSIVolumeHealth'),
    recorder,
  });
  registerVolumeStatsCollector(registry, () => csiVolumeStats.all());
  const stats = createStatsProvider({
    nodeName: config.nodeName,
    listPods: runtimeStatsPods(runtime, (uid) => podManager.getPodByUID(uid)?.spec),
    cgroupRoot,
    rootDir,
    podLogsDir: kc.podLogsDir,
    imageFsPath: imageFsMount(images),
    memoryCapacity,
    housekeepingIntervalMs: config.flags.housekeepingIntervalMs,
    containerFs: criContainerFs(criRuntime),
    runtimeEndpoint: kc.containerRuntimeEndpoint,
    csiVolumes: (uid) => csiVolumeStats.podVolumes(uid),
    createCgroupReader: hotPaths().cgroupStats.createCgroupReader,
    cgroupDriver,
    mounts: cgroupMounts,
  });
  const oomEvents = createOomPodEvents({
    recorder,
    nodeName: config.nodeName,
    pods: {
      getPodByUID: (uid) => podManager.getPodByUID(uid),
      containerName: (uid, id) => cache.get(uid)?.status?.containerStatuses.find((c) => c.id === id)?.name,
    },
  });
  const oom = createOomWatcher({ onEvent: oomEvents.onEvent, createKmsgWatcher: hotPaths().kmsg.createKmsgWatcher });
  stats.onPass((snap) =>
    oom.observeCounters(
      snap.pods.flatMap((p) =>
        p.containers
          .filter((c) => c.oomKills !== undefined)
          .map((c) => ({ memcg: c.cgroup, podUid: p.uid, containerId: c.id, oomKills: c.oomKills! })),
      ),
    ),
  );

  const kubelet = new Kubelet({
    nodeName: config.nodeName,
    hostIP,
    hostIPs,
    rootDir,
    allocation,
    maxPods: kc.maxPods,
    node,
    allowedUnsafeSysctls: kc.allowedUnsafeSysctls,
    appArmor,
    syncFrequencyMs: kc.syncFrequencyMs,
    runtime,
    volumeManager,
    apiServer: apiMode !== undefined,
    pleg,
    cache,
    statusManager,
    sources: new Set([...sources.keys(), ...(apiMode ? [apiMode.sourceName] : [])]),
    recorder,
    podManager,
    wasOomKilled: (id) => oom.wasOomKilled(id),
    probes: prober,
    prober,
    userns,
    // Extended resources: the device counts; in API server mode over the Node object's (others' resources too).
    devices: deviceAdmission(devices.dm, () => ({
      ...apiMode?.nodeExtendedAllocatable(),
      ...devices.extended.refresh().allocatable,
    })),
  });
  runtimeHandlers = () => kubelet.runtimeState.runtimeHandlers();
  // hostUsers: false pods whose runtime handler lacks user namespaces: refused, never run without.
  kubelet.addPodAdmitHandler(
    usernsAdmitHandler({
      handlers: runtimeHandlers,
      handlerFor: (pod) => runtimeHandlerFor(pod, apiMode?.runtimeClasses),
    }),
  );
  const killPod = killPodNow(kubelet.podWorkers);
  const eviction = createEvictionManager({
    evictionHard: kc.evictionHard,
    evictionSoft: kc.evictionSoft,
    evictionSoftGracePeriod: kc.evictionSoftGracePeriod,
    stats,
    recorder,
    memoryCapacity,
    kubelet: { activePods: () => kubelet.activePods(), evictPod: killPod },
    pressureTransitionPeriodMs: kc.evictionPressureTransitionPeriodMs,
    maxPodGracePeriodSeconds: kc.evictionMaxPodGracePeriod,
    monitoringPeriodMs: config.flags.housekeepingIntervalMs,
  });
  const nodeShutdown = createNodeShutdownManager({
    shutdownGracePeriodMs: kc.shutdownGracePeriodMs,
    shutdownGracePeriodCriticalPodsMs: kc.shutdownGracePeriodCriticalPodsMs,
    activePods: () => kubelet.activePods(),
    trigger: signalTrigger('SIGPWR'),
    killPod: (pod, grace, message) => killPod(pod, message, grace, NodeShutdownReason),
  });
  // upstream order: the shutdown manager's admit handler runs before the eviction manager's.
  kubelet.addPodAdmitHandler((pod) => nodeShutdown.admit(pod));
  kubelet.addPodAdmitHandler((pod) => eviction.admit(pod));
  // upstream: the container manager starts the device manager before node status and the sync loop run.
  await startDevices(devices, {
    runtime: criRuntime,
    activePods: () => kubelet.activePods(),
    sourcesReady: () => kubelet.allSourcesReady(),
  });
  apiMode?.start({ podConfig, kubelet, pressure: eviction, volumes: volumeManager });
  const stopCapacityPass = apiMode ? undefined : standaloneCapacityPass(devices, kc.nodeStatusUpdateFrequencyMs);
  const pluginManager = config.flags.runOnce ? undefined : startPluginManager(config, apiMode, devices);
  csi.drivers = pluginManager?.csiDrivers;
  const podResources = config.flags.runOnce
    ? undefined
    : await startPodResources({
        rootDir,
        dm: devices.dm,
        activePods: () => kubelet.activePods(),
        pods: () => podManager.getPods(),
        getEnabled: featureGates(kc.featureGates).enabled('KubeletPodResourcesGet'),
      });

  const readProvider = readServerProvider({
    podManager,
    statusManager,
    healthErrors: () => [...kubelet.healthErrors(), ...deviceHealthErrors(devices.dm)],
    metrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    probeMetrics: async () => ({ contentType: probeRegistry.contentType, body: await probeRegistry.metrics() }),
    stats: statsRoutes(stats, oomEvents.counts, memoryCapacity),
  });
  const containerLogs = runtimeContainerLogs({ podLogsDir: kc.podLogsDir, pods: podManager, runtime });
  const servers = await startServers({
    healthz: { address: kc.healthzBindAddress, port: kc.healthzPort },
    readOnly: { address: kc.address, port: kc.readOnlyPort },
    provider: readProvider,
    main: {
      address: kc.address,
      port: kc.port,
      nodeName: config.nodeName,
      rootDir,
      nodeIPs: hostIPs,
      tlsCertFile: kc.tlsCertFile,
      tlsPrivateKeyFile: kc.tlsPrivateKeyFile,
      tlsMinVersion: kc.tlsMinVersion,
      tlsCipherSuites: kc.tlsCipherSuites,
      authentication: kc.authentication,
      authorization: kc.authorization,
      reviewClient: config.flags.kubeconfig ? reviewClientFromKubeconfig(config.flags.kubeconfig) : undefined,
      enableDebuggingHandlers: kc.enableDebuggingHandlers,
      featureGates: featureGates(kc.featureGates),
      streamingConnectionIdleTimeoutMs: kc.streamingConnectionIdleTimeoutMs,
      provider: mainServerProvider(readProvider, runtime, criRuntime, () => renderConfigz({ ...kc, cgroupDriver })),
      containerLogs,
    },
  });
  stats.start();
  if (!config.flags.runOnce) csiVolumeStats.start();
  oom.start();
  eviction.start();

  const once = config.flags.runOnce ? new RunOnce({ status: (uid) => statusManager.getPodStatus(uid) }) : undefined;
  const nodeRef = { kind: 'Node' as const, name: config.nodeName, uid: config.nodeName };
  const imageGC = createImageGCManager({
    images,
    listContainers: () => criRuntime.listContainers(),
    ...(pullManager ? { pruneRecords: (refs, until) => pullManager.pruneUnknownRecords(refs, until) } : {}),
    recorder,
    policy: {
      highThresholdPercent: kc.imageGCHighThresholdPercent,
      lowThresholdPercent: kc.imageGCLowThresholdPercent,
      minAgeMs: kc.imageMinimumGCAgeMs,
      maxAgeMs: kc.imageMaximumGCAgeMs,
    },
    node: nodeRef,
  });
  // upstream StartGarbageCollection runs in run-once mode too.
  const gc = createGarbageCollection({ runtime, pods: kubelet, imageGC, recorder, node: nodeRef });
  gc.start();
  if (!config.flags.runOnce) nodeShutdown.start();
  const logRotation = createLogRotation({
    runtime: criRuntime,
    maxSizeBytes: parseQuantity(kc.containerLogMaxSize),
    maxFiles: kc.containerLogMaxFiles,
    intervalMs: kc.containerLogMonitorIntervalMs,
  });
  logRotation.start();
  const servingRotation =
    apiMode && kc.serverTLSBootstrap
      ? servingCertificateRotation(config, apiMode.clients, hostIPs, servers)
      : undefined;
  const mallocTrim = startMallocTrim(addonMallocTrim());
  const done = kubelet.run(once ? once.tap(podConfig.updates()) : podConfig.updates());
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      for (const s of [
        podConfig,
        gc,
        nodeShutdown,
        eviction,
        oom,
        stats,
        csiVolumeStats,
        servingRotation,
        apiMode,
        kubelet,
        prober,
        logRotation,
        mallocTrim,
      ])
        s?.stop();
      await done.catch(() => undefined);
      podResources?.stop();
      stopCapacityPass?.();
      await pluginManager?.stop();
      await devices.dm.stop();
      csiPlugin.close(); // the CSI drivers' connections (opened again on the next use)
      await servers.close();
      criRuntime.close();
      images.close();
      systemd?.close();
    })();
    return stopping;
  };
  return { kubelet, recorder, servers, containerLogs, done, stop, runOnce: once && (() => once.run()), stats, oom };
}
