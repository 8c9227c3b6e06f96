/**
 * The composition root (upstream NewMainKubelet + RunKubelet): every subsystem is constructed
 * here and only here, from one validated Config. Nothing else wires implementations together.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from './api/types.js';
import type { Config } from './config/index.js';
import { connectRuntime } from './cri/index.js';
import { createRuntimeManager } from './kuberuntime/index.js';
import { createGenericPLEG, createPodStatusCache, criRawSource, CgroupExitWatcher, findUnifiedRoot } from './pleg/index.js';
import { createStatusManager } from './status/index.js';
import { createPodConfig, createFileSource, type PodSource } from './podconfig/index.js';
import { startServers, type RunningServers } from './server/index.js';
import { hotPaths, nativeStatus } from './native/index.js';
import { metrics, registry } from './metrics/index.js';
import { Kubelet } from './kubelet/kubelet.js';
import { detectNodeIP } from './kubelet/node-ip.js';
import { computeNodeInfo } from './kubelet/node-info.js';
import { createRecorder } from './events/index.js';
import { log } from './util/log.js';
import { setupApiServerMode, type ApiMode } from './main-apiserver.js';

export const VERSION = 'v0.1.0-kubelet-ts';

export interface Daemon {
  kubelet: Kubelet;
  /** Every event the agent raised (log sink always; apiserver sink in API server mode). */
  recorder: ReturnType<typeof createRecorder>;
  servers: RunningServers;
  /** Resolves when the sync loop has stopped. */
  done: Promise<void>;
  stop(): Promise<void>;
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

  const { runtime: criRuntime, images } = connectRuntime(kc.containerRuntimeEndpoint, { timeoutMs: kc.runtimeRequestTimeoutMs });
  const hostIP = detectNodeIP(config.flags.nodeIP);
  const node = computeNodeInfo({
    nodeName: config.nodeName, maxPods: kc.maxPods, systemReserved: kc.systemReserved, kubeReserved: kc.kubeReserved,
    evictionHard: kc.evictionHard, nodeLabels: config.flags.nodeLabels,
  });
  log('kubelet').info({ capacity: node.capacity, allocatable: node.allocatable, labels: node.labels }, 'Node allocatable for admission');
  // API server mode (--kubeconfig): node status, lease, pod source, status sync, mirror pods,
  // events, configMaps/secrets/tokens. Set up before the runtime manager, which reads the objects.
  let apiMode: ApiMode | undefined;
  if (config.flags.kubeconfig) {
    apiMode = await setupApiServerMode({ config, kubeletVersion: VERSION, node, hostIP, runtimeVersion: () => runtime.version(), images, recorder });
  }
  const runtime = createRuntimeManager({
    runtime: criRuntime, images, podLogsDir: kc.podLogsDir, rootDir, nodeName: config.nodeName,
    clusterDNS: kc.clusterDNS, clusterDomain: kc.clusterDomain, hostIP,
    memoryCapacity: node.capacity.memory, nodeAllocatable: { cpuMilli: node.allocatable.milliCPU, memoryBytes: node.allocatable.memory },
    cgroupsPerQOS: kc.cgroupsPerQOS, cgroupRoot: kc.cgroupRoot || '/', objects: apiMode?.objects, recorder,
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
  const podConfig = createPodConfig(sources);

  const kubelet = new Kubelet({
    nodeName: config.nodeName, hostIP, rootDir, maxPods: kc.maxPods, node, syncFrequencyMs: kc.syncFrequencyMs,
    runtime, pleg, cache, statusManager, sources: new Set([...sources.keys(), ...(apiMode ? [apiMode.sourceName] : [])]), recorder,
  });
  apiMode?.start(podConfig, kubelet);

  const servers = await startServers({
    healthz: { address: kc.healthzBindAddress, port: kc.healthzPort },
    readOnly: { address: kc.address, port: kc.readOnlyPort },
    provider: {
      podsWithStatus: () => kubelet.podManager.getPods().map((p): Pod => ({ ...p, status: statusManager.getPodStatus(p.metadata!.uid!) ?? p.status ?? {} })),
      healthErrors: () => kubelet.healthErrors(),
      metrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    },
  });

  const done = kubelet.run(podConfig.updates());
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      podConfig.stop();
      apiMode?.stop();
      kubelet.stop();
      await done.catch(() => undefined);
      await servers.close();
      criRuntime.close();
      images.close();
    })();
    return stopping;
  };
  return { kubelet, recorder, servers, done, stop };
}
