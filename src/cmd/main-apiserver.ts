/**
 * API server mode, wired (part of the composition root: only main.ts imports this file). With
 * --kubeconfig the agent registers its Node, keeps node status and the lease fresh, runs the
 * pods bound to it (the 'api' pod source, added once the node is registered), writes pod status
 * back, mirrors its static pods and posts events. Set up in two steps because the runtime
 * manager needs the object cache before the Kubelet exists, and the node status needs the
 * Kubelet and the eviction manager once they do: setupApiServerMode, then start().
 */
import type { Config } from '../config/index.js';
import { ConfigError } from '../errors.js';
import type { ImageService } from '../cri/types.js';
import type { Runtime } from '../kuberuntime/types.js';
import type { NodeInfo } from '../node/node-info.js';
import type { Kubelet } from '../kubelet/kubelet.js';
import type { NodePressure } from '../eviction/index.js';
import { VERSION } from '../version.js';
import type { PodConfig } from '../podconfig/index.js';
import type { StatusManager } from '../status/index.js';
import type { Recorder } from '../events/index.js';
import { createApiClients, type ApiClient, type ApiClients } from '../apiclient/index.js';
import { metrics } from '../metrics/index.js';
import { log } from '../util/log.js';
import {
  createLeaseController,
  createNodeStatusManager,
  defaultPressureConditions,
  parseTaints,
  type ApiNode,
  type NodeStatusDeps,
} from '../nodestatus/index.js';
import { isExtendedResourceName } from '../util/resource-names.js';
import { tryParseQuantity } from '../util/quantity.js';
import { createApiserverSource, ApiserverSource } from '../podconfig/index.js';
import { createApiStatusManager, createStatusManager } from '../status/index.js';
import { isStaticPod } from '../api/pod.js';
import { ObjectCache, podObjectRefs, withObjectRegistration } from '../apimode/configmap-secret-cache.js';
import { createApiserverSink } from '../events/index.js';
import { MirrorPods } from '../apimode/mirror-pods.js';
import {
  CertFileStore,
  CertificateRotation,
  CLIENT_SIGNER,
  clientUsages,
  loadClientCert,
  nodeCertUsages,
} from '../certificate/index.js';
import { RuntimeClassCache, withRuntimeClassOverhead } from '../apimode/runtime-class-cache.js';
import { ServiceCache } from '../apimode/service-cache.js';
import { StorageObjects } from '../apimode/storage-objects.js';
import { NodeInformer } from '../apimode/node-informer.js';
import type { VolumeManager } from '../volume/index.js';

export interface ApiModeInput {
  config: Config;
  node: NodeInfo;
  /** The node's IPs (resolveNodeIPs): its InternalIP addresses. */
  nodeIPs: readonly string[];
  runtimeVersion: Runtime['version'];
  images: ImageService;
  recorder: Recorder;
  /** The device manager's extended resources for node status, and whether the node was recreated. */
  devices?: Pick<NodeStatusDeps, 'extendedResources' | 'resetExtendedResources'>;
}

/** What API server mode needs once the Kubelet runs. */
export interface ApiModeStart {
  podConfig: PodConfig;
  kubelet: Kubelet;
  /** The node's pressure conditions (the eviction manager); absent: all False. */
  pressure?: NodePressure;
  /** status.volumesInUse (upstream VolumesInUse setter); absent: the Node's field is left alone. */
  volumes?: Pick<VolumeManager, 'getVolumesInUse' | 'podVolumesExist'>;
}

export interface ApiMode {
  clients: ApiClients;
  /** ConfigMaps, Secrets and tokens for the runtime manager. */
  objects: ObjectCache;
  /** node.k8s.io/v1 RuntimeClasses for the runtime manager (handler of each pod's sandbox). */
  runtimeClasses: RuntimeClassCache;
  /** Every v1 Service (one list+watch) for the Service env vars of the runtime manager. */
  services: ServiceCache;
  /** PVCs, PVs, CSIDrivers, VolumeAttachments and volumesAttached for the volume manager's CSI volumes. */
  storage: StorageObjects;
  /** Use this one for the Kubelet: it also writes pods/status. */
  statusManager: StatusManager & { stop(): void };
  /** The source name the Kubelet must wait for before housekeeping. */
  sourceName: string;
  /** The Node object's extended resources allocatable (the node informer's copy), for admission. */
  nodeExtendedAllocatable(): Record<string, number>;
  /** A node status pass soon (devices changed); nothing is sent when the status is unchanged. */
  pokeNodeStatus(): void;
  start(deps: ApiModeStart): void;
  stop(): void;
}

/** kubelet_certificate_manager_{client,server}_ttl_seconds: seconds until the current pair expires (unchanged while there is none). */
function setCertificateTtl(store: CertFileStore, set: (seconds: number) => void): void {
  const c = store.current();
  if (c) set((new Date(c.leaf.validTo).getTime() - Date.now()) / 1000);
}

/** Clients from a kubeconfig for one CSR attempt (the bootstrap credentials of an expired node). */
async function leaseClients(kubeconfig: string): Promise<{ client: ApiClient; close(): void }> {
  const c = await createApiClients(kubeconfig, { userAgent: `kubelet-ts/${VERSION}` });
  return { client: c.main, close: () => c.close() };
}

/**
 * rotateCertificates: the client certificate in --cert-dir (kubelet-client-current.pem, where TLS
 * bootstrap and kubeadm put it) is renewed before it expires, and the clients switch to it.
 */
function clientCertificateRotation(config: Config, clients: ApiClients): CertificateRotation | undefined {
  const store = new CertFileStore(config.flags.certDir, 'kubelet-client');
  const current = store.current();
  if (!current) {
    log('certificate').warn(
      { certDir: config.flags.certDir },
      'rotateCertificates: no kubelet-client-current.pem in the cert dir (TLS bootstrap puts it there); the client certificate will not be rotated',
    );
    return undefined;
  }
  const ttl = () => setCertificateTtl(store, (s) => metrics.certificateManagerClientTtl.set(s));
  ttl();
  const bootstrap = config.flags.bootstrapKubeconfig;
  const rotation = new CertificateRotation({
    store,
    kind: 'client',
    client: () => clients.main,
    ...(bootstrap ? { expiredClient: () => leaseClients(bootstrap) } : {}),
    signerName: CLIENT_SIGNER,
    subject: { commonName: `system:node:${config.nodeName}`, organizations: ['system:nodes'] },
    usages: clientUsages,
    onRotated: async () => {
      await clients.reloadTls();
      ttl();
    },
    onRenewError: () => metrics.certificateManagerClientRenewErrors.inc(),
  });
  rotation.start();
  return rotation;
}

export const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

/**
 * serverTLSBootstrap: the main port's certificate comes from the certificates API (signer
 * kubernetes.io/kubelet-serving, the node's name and IPs as SANs) and is rotated like the client
 * one; each issued pair goes to the running server at once. Until the first one is issued (a
 * serving CSR waits for the cluster's approver) the self-signed pair serves.
 */
export function servingCertificateRotation(
  config: Config,
  clients: ApiClients,
  nodeIPs: readonly string[],
  servers: { setServingPair(cert: Buffer, key: Buffer): void },
): CertificateRotation | undefined {
  if (config.kubelet.tlsCertFile) {
    log('certificate').warn(
      { tlsCertFile: config.kubelet.tlsCertFile },
      'serverTLSBootstrap: tlsCertFile is set and is served; no serving certificate is requested',
    );
    return undefined;
  }
  const store = new CertFileStore(config.flags.certDir, 'kubelet-server');
  const serve = (p: { certPem: string; keyPem: string }) =>
    servers.setServingPair(Buffer.from(p.certPem), Buffer.from(p.keyPem));
  const ttl = () => setCertificateTtl(store, (s) => metrics.certificateManagerServerTtl.set(s));
  const current = store.current();
  if (current && new Date(current.leaf.validTo) > new Date()) serve(current);
  ttl();
  const rotation = new CertificateRotation({
    store,
    kind: 'server',
    client: () => clients.main,
    signerName: SERVING_SIGNER,
    subject: { commonName: `system:node:${config.nodeName}`, organizations: ['system:nodes'] },
    usages: (keyPem) => nodeCertUsages(keyPem, 'server auth'),
    altNames: () => ({ dnsNames: [config.nodeName], ips: [...nodeIPs] }),
    onRotated: (pair) => {
      serve(pair);
      ttl();
    },
    onRenewError: () => metrics.serverExpirationRenewErrors.inc(),
  });
  rotation.start();
  return rotation;
}

/** The extended resources in a Node's status.allocatable, as counts (a bad quantity counts 0). */
export function extendedAllocatableOf(node: ApiNode | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, q] of Object.entries(node?.status?.allocatable ?? {}))
    if (isExtendedResourceName(name)) out[name] = Math.floor(tryParseQuantity(q) ?? 0);
  return out;
}

export async function setupApiServerMode(input: ApiModeInput): Promise<ApiMode> {
  const { config } = input;
  const kc = config.kubelet;
  const taints = parseTaints(kc.registerWithTaints.join(','));
  if (taints.problems.length > 0) throw new ConfigError(taints.problems);
  // upstream: TLS bootstrap runs before any client is built from --kubeconfig.
  if (config.flags.bootstrapKubeconfig) {
    await loadClientCert({
      kubeconfigPath: config.flags.kubeconfig!,
      bootstrapKubeconfigPath: config.flags.bootstrapKubeconfig,
      certDir: config.flags.certDir,
      nodeName: config.nodeName,
      connect: (path) => createApiClients(path, { userAgent: `kubelet-ts/${VERSION}` }),
    });
  }
  const clients = await createApiClients(config.flags.kubeconfig!, {
    qps: kc.kubeAPIQPS,
    burst: kc.kubeAPIBurst,
    heartbeatTimeoutMs: Math.max(kc.nodeStatusUpdateFrequencyMs, 1000),
    userAgent: `kubelet-ts/${VERSION}`,
  });
  const rotation = kc.rotateCertificates ? clientCertificateRotation(config, clients) : undefined;
  // Known once start() is called; until then the node reports 'kubelet is starting'.
  let kubelet: Kubelet | undefined;
  let pressure: NodePressure | undefined;
  let volumes: ApiModeStart['volumes'];
  // upstream starts its node informer in NewMainKubelet; the status loop reads the Node from it.
  const nodeInformer = new NodeInformer(clients.main, config.nodeName);
  nodeInformer.start();
  const nodeStatus = createNodeStatusManager({
    client: clients.main,
    heartbeat: clients.heartbeat,
    node: input.node,
    nodeIPs: input.nodeIPs,
    kubeletPort: kc.port,
    registerNode: kc.registerNode,
    taints: taints.taints,
    rootDir: config.flags.rootDir,
    reserved: { systemReserved: kc.systemReserved, kubeReserved: kc.kubeReserved, evictionHard: kc.evictionHard },
    kubeletVersion: VERSION,
    runtimeVersion: async () => {
      const v = await input.runtimeVersion();
      return `${v.runtimeName}://${v.runtimeVersion}`;
    },
    images: async () =>
      (await input.images.listImages()).map((i) => ({
        names: [...i.repoTags, ...i.repoDigests],
        sizeBytes: Number(i.size),
      })),
    runtimeHandlers: () => kubelet?.runtimeState.runtimeHandlers() ?? [],
    runtimeFeatures: () => kubelet?.runtimeState.runtimeFeatures(),
    readinessErrors: () => {
      if (!kubelet) return ['kubelet is starting'];
      return kubelet.runtimeState.nodeReadyErrors();
    },
    pressureConditions: () =>
      pressure?.nodeConditions().map(({ type, status, reason, message }) => ({ type, status, reason, message })) ??
      defaultPressureConditions(),
    // upstream sets it once the volume reconciler has synced, which waits for every pod source:
    // before that an empty list could clear volumes still mounted after a restart.
    volumesInUse: () => (kubelet?.allSourcesReady() ? volumes?.getVolumesInUse() : undefined),
    updateFrequencyMs: kc.nodeStatusUpdateFrequencyMs,
    reportFrequencyMs: kc.nodeStatusReportFrequencyMs,
    recorder: input.recorder,
    cachedNode: () => nodeInformer.get(),
    ...input.devices,
  });
  const lease = createLeaseController({
    heartbeat: clients.heartbeat,
    nodeName: config.nodeName,
    leaseDurationSeconds: kc.nodeLeaseDurationSeconds,
    nodeUID: () => nodeStatus.nodeUID(),
  });
  const mirrorPods = new MirrorPods({
    client: clients.main,
    nodeName: config.nodeName,
    nodeUID: () => nodeStatus.nodeUID(),
    staticPods: () => kubelet?.podManager.getPods().filter(isStaticPod) ?? [],
  });
  const statusManager = createApiStatusManager({
    client: clients.main,
    base: createStatusManager(),
    mirrorPodUID: (p) => mirrorPods.mirrorPodUID(p),
    podResourcesReclaimed: async (uid) => !(await volumes?.podVolumesExist(uid)),
  });
  // An edited configMap/secret or a refreshed token: resync the pods using it, so the files follow.
  const objects = new ObjectCache({
    client: clients.main,
    onChange: (kind, namespace, name) => {
      if (!kubelet) return;
      const users = kubelet.podManager
        .getPods()
        .filter(
          (p) =>
            (p.metadata?.namespace ?? 'default') === namespace &&
            (kind === 'token'
              ? p.metadata?.uid === name
              : (kind === 'configmaps' ? podObjectRefs(p).configMaps : podObjectRefs(p).secrets).has(name)),
        );
      if (users.length > 0) kubelet.handlePodSyncs(users);
    },
  });
  const runtimeClasses = new RuntimeClassCache(clients.main);
  // upstream starts its service informer in NewMainKubelet, before any pod is seen.
  const services = new ServiceCache(clients.main);
  services.start();
  // Claims, volumes and attachments are GETs when a volume mounts; the CSIDriver informer starts
  // on the first lookup; volumesAttached is what the node status loop last read (no request).
  const storage = new StorageObjects({ client: clients.main, attachedVolumes: () => nodeStatus.volumesAttached() });
  const sink = createApiserverSink({
    client: clients.main,
    nodeName: config.nodeName,
    qps: kc.eventRecordQPS,
    burst: kc.eventBurst,
  });
  let stopped = false;
  return {
    clients,
    statusManager,
    objects,
    runtimeClasses,
    services,
    storage,
    sourceName: ApiserverSource,
    nodeExtendedAllocatable: () => extendedAllocatableOf(nodeInformer.get()),
    pokeNodeStatus: () => nodeStatus.poke(),
    start({ podConfig, kubelet: k, pressure: p, volumes: v }) {
      kubelet = k;
      pressure = p;
      volumes = v;
      input.recorder.addSink(sink);
      nodeStatus.start();
      lease.start();
      mirrorPods.start();
      // upstream: the apiserver pod source starts once the node is known to the API server.
      // Pods wait for the first RuntimeClass list too: their overhead and handler come from it.
      runtimeClasses.start();
      void nodeStatus
        .registered()
        .then(() => runtimeClasses.synced())
        .then(() => {
          if (stopped) return;
          const source = createApiserverSource({
            client: clients.main,
            nodeName: config.nodeName,
            onMirrorPods: (pods) => mirrorPods.setMirrorPods(pods),
          });
          const registered = withObjectRegistration(source, objects);
          podConfig.addSource(ApiserverSource, withRuntimeClassOverhead(registered, runtimeClasses));
        });
    },
    stop() {
      stopped = true;
      rotation?.stop();
      nodeStatus.stop();
      nodeInformer.stop();
      lease.stop();
      mirrorPods.stop();
      statusManager.stop();
      objects.stop();
      runtimeClasses.stop();
      services.stop();
      storage.stop();
      clients.close();
    },
  };
}
