/**
 * Feature gates of the v1.35 kubelet: `featureGates` in the file and `--feature-gates=A=true,B=false`
 * on the command line (merged, the flag winning per gate, as upstream kubeletConfigFlagPrecedence).
 * Checked as component-base featuregate.Set checks them: an unknown name is "unrecognized feature
 * gate", a locked gate set to its other value is refused. Then our own rule: a gate set to a value
 * whose behaviour kubelet-ts does not have is refused, naming the gate and why. A gate left at its
 * default is never refused, even where that default is a behaviour we lack (docs/differences.md
 * lists those). What the agent acts on it reads through FeatureGates.enabled().
 *
 * The table is upstream's whole 1.35 gate table (pkg/features/kube_features.go versioned specs
 * with the apiserver, apiextensions, controller-manager and zpages gates it links, component-base
 * logs/features, client-go features), as upstream's kubelet registers it; gates only other
 * components read are accepted at any value and do nothing ('elsewhere'), as upstream's kubelet.
 */

export type Stage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

/**
 * What kubelet-ts has of a gate's behaviour:
 * - both: either value is acted on (read through FeatureGates.enabled);
 * - on: the behaviour is always there (false is refused);
 * - off: the behaviour is missing (true is refused, unless it is the default: a gap, listed by
 *   featureGateGaps and in docs/differences.md);
 * - none: nothing the kubelet does changes with it here (either value is harmless);
 * - elsewhere: not the kubelet's; only other components (API server, scheduler, controllers,
 *   kube-proxy) read it. Upstream's kubelet registers the whole shared table and accepts any
 *   value of these with no effect, so kubelet-ts does too (a locked one still refuses its other value).
 */
export type Support = 'both' | 'on' | 'off' | 'none' | 'elsewhere';

export interface GateSpec {
  default: boolean;
  stage: Stage;
  lockToDefault?: true;
  support: Support;
  /** Why a refused value is refused (support on/off). */
  why?: string;
}

const g = (d: boolean, stage: Stage, support: Support, why?: string): GateSpec => ({
  default: d,
  stage,
  support,
  ...(why ? { why } : {}),
});
/** A GA gate locked on (upstream LockToDefault): only true is accepted. */
const lockedOn = (support: Support): GateSpec => ({ default: true, stage: 'GA', support, lockToDefault: true });
const NO = 'not implemented in kubelet-ts';

/** One spec for many gates, named in a whitespace-separated list (keeps the long lists compact). */
function group(names: string, spec: GateSpec): Record<string, GateSpec> {
  return Object.fromEntries(names.split(/\s+/).flatMap((n) => (n ? [[n, spec]] : [])));
}
const locked = (d: boolean, stage: Stage, support: Support): GateSpec => ({
  ...g(d, stage, support),
  lockToDefault: true,
});

/** More gates the upstream kubelet reads (pkg/kubelet, pkg/volume, cmd/kubelet). */
const KUBELET_MORE: Readonly<Record<string, GateSpec>> = {
  // Default on, behaviour present: false would ask for upstream's old behaviour, which we lack.
  RotateKubeletServerCertificate: g(
    true,
    'BETA',
    'on',
    'serverTLSBootstrap alone decides whether the serving certificate is requested and rotated',
  ),
  DisableNodeKubeProxyVersion: g(true, 'DEPRECATED', 'on', 'status.nodeInfo.kubeProxyVersion is always left empty'),
  UserNamespacesSupport: g(true, 'BETA', 'on', 'user namespaces (hostUsers: false) are always supported'),
  // Default on, behaviour missing: gaps (docs/differences.md); false is what we do.
  PreventStaticPodAPIReferences: g(true, 'BETA', 'on', 'static pods that reference API objects are always refused'),
  ReloadKubeletServerCertificateFile: g(true, 'BETA', 'off', `reloading a changed tlsCertFile is ${NO}`),
  // Nothing here changes with them: no CPU/topology manager policies, CSI volumes, SELinux
  // relabelling or pod resources API in kubelet-ts; the Windows gates act on Windows nodes only.
  ...group(
    `CSIServiceAccountTokenSecrets DisableCPUQuotaWithExclusiveCPUs
     MutableCSINodeAllocatableCount SELinuxChangePolicy TopologyManagerPolicyBetaOptions`,
    g(true, 'BETA', 'none'),
  ),
  KubeletPodResourcesListUseActivePods: g(true, 'DEPRECATED', 'none'),
  SELinuxMount: g(false, 'BETA', 'none'),
  InTreePluginPortworxUnregister: g(false, 'ALPHA', 'none'),
  ...group('CSIMigrationPortworx RecoverVolumeExpansionFailure', locked(true, 'GA', 'none')),
  WindowsCPUAndMemoryAffinity: g(false, 'ALPHA', 'none'),
  WindowsGracefulNodeShutdown: g(true, 'BETA', 'none'),
  WindowsHostNetwork: g(false, 'DEPRECATED', 'none'),
  // Locked off (upstream's lock refuses true).
  AllowOverwriteTerminationGracePeriodSeconds: locked(false, 'DEPRECATED', 'none'),
  // Default off, behaviour missing: true is refused.
  ChangeContainerStatusOnKubeletRestart: g(false, 'DEPRECATED', 'off', `marking containers on restart is ${NO}`),
  CustomCPUCFSQuotaPeriod: g(false, 'ALPHA', 'off', `cpuCFSQuotaPeriod other than 100ms is ${NO}`),
  DRAExtendedResource: g(false, 'ALPHA', 'off', `extended resources backed by DRA are ${NO}`),
  GitRepoVolumeDriver: g(false, 'DEPRECATED', 'off', `gitRepo volumes are ${NO}`),
  ImageVolumeWithDigest: g(false, 'ALPHA', 'off', `image volumes are ${NO}`),
  InPlacePodLevelResourcesVerticalScaling: g(false, 'ALPHA', 'off', `pod-level resources resize is ${NO}`),
  InPlacePodVerticalScalingAllocatedStatus: g(
    false,
    'DEPRECATED',
    'off',
    'allocatedResources is reported whatever it says',
  ),
  InPlacePodVerticalScalingExclusiveCPUs: g(false, 'ALPHA', 'off', `the static CPU manager is ${NO}`),
  InPlacePodVerticalScalingExclusiveMemory: g(false, 'ALPHA', 'off', `the static memory manager is ${NO}`),
  KubeletRegistrationGetOnExistsOnly: g(false, 'DEPRECATED', 'off', `GET-only re-registration is ${NO}`),
  NodeDeclaredFeatures: g(false, 'ALPHA', 'off', `status.declaredFeatures is ${NO}`),
  PodLogsQuerySplitStreams: g(false, 'ALPHA', 'off', `the pod logs stream= query is ${NO}`),
  QOSReserved: g(false, 'ALPHA', 'off', `qosReserved is ${NO}`),
  RuntimeClassInImageCriAPI: g(false, 'ALPHA', 'off', `runtime handlers in image CRI calls are ${NO}`),
  TopologyManagerPolicyAlphaOptions: g(false, 'ALPHA', 'off', `the topology manager is ${NO}`),
  UserNamespacesHostNetworkSupport: g(false, 'ALPHA', 'off', `user namespaces with hostNetwork are ${NO}`),
};

/**
 * Gates only other components read (API server, scheduler, controllers, kube-proxy; from
 * pkg/features, k8s.io/apiserver, apiextensions, controller-manager, client-go), by 1.35 spec.
 */
const ELSEWHERE: Readonly<Record<string, GateSpec>> = {
  ...group(
    `AnyVolumeDataSource AuthorizeNodeWithSelectors DisableAllocatorDualWrite HonorPVReclaimPolicy
     JobBackoffLimitPerIndex JobManagedBy JobPodReplacementPolicy JobSuccessPolicy LogarithmicScaleDown
     MatchLabelKeysInPodAffinity MultiCIDRServiceAllocator NFTablesProxyMode NodeInclusionPolicyInPodTopologySpread
     OrderedNamespaceDeletion PodSchedulingReadiness PreferSameTrafficDistribution RelaxedDNSSearchValidation
     SchedulerQueueingHints SeparateTaintEvictionController ServiceAccountTokenJTI ServiceAccountTokenNodeBinding
     ServiceAccountTokenNodeBindingValidation ServiceAccountTokenPodNodeInfo ServiceTrafficDistribution
     StreamingCollectionEncodingToJSON StreamingCollectionEncodingToProtobuf TopologyAwareHints WinDSR WinOverlay
     CRDValidationRatcheting CustomResourceFieldSelectors APIServerTracing AnonymousAuthConfigurableEndpoints
     AuthorizeWithSelectors BtreeWatchCache ConsistentListFromCache ResilientWatchCacheInitialization
     RetryGenerateName StructuredAuthenticationConfiguration StructuredAuthorizationConfiguration`,
    locked(true, 'GA', 'elsewhere'),
  ),
  VolumeAttributesClass: g(true, 'GA', 'elsewhere'),
  ...group(
    `AuthorizePodWebsocketUpgradeCreatePermission ClearingNominatedNodeNameAfterBinding DRAAdminAccess
     DRAPrioritizedList DRAResourceClaimDeviceStatus DRASchedulerFilterTimeout DeploymentReplicaSetTerminatingReplicas
     ExternalServiceAccountTokenSigner HPAConfigurableTolerance MatchLabelKeysInPodTopologySpread
     MatchLabelKeysInPodTopologySpreadSelectorMerge MaxUnavailableStatefulSet NominatedNodeNameForExpectation
     OpportunisticBatching PodDeletionCost PodTopologyLabelsAdmission PortForwardWebsockets SchedulerAsyncPreemption
     SchedulerPopFromBackoffQ ServiceAccountNodeAudienceRestriction StatefulSetSemanticRevisionComparison
     TranslateStreamCloseWebsocketRequests APIResponseCompression APIServerIdentity AllowParsingUserUIDFromCertAuth
     DeclarativeValidation DetectCacheInconsistency ListFromCacheSnapshot OpenAPIEnums RemoteRequestHeaderUID
     SizeBasedListCostEstimate StorageVersionHash StructuredAuthenticationConfigurationEgressSelector
     StructuredAuthenticationConfigurationJWKSMetrics TokenRequestServiceAccountUIDValidation
     UnauthenticatedHTTP2DOSMitigation WatchList InOrderInformers InOrderInformersBatchProcess`,
    g(true, 'BETA', 'elsewhere'),
  ),
  ...group(
    `SchedulerAsyncAPICalls StorageVersionMigrator CRDObservedGenerationTracking ConcurrentWatchObjectDecode
     CoordinatedLeaderElection DeclarativeValidationTakeover MutatingAdmissionPolicy
     WatchCacheInitializationPostStartHook`,
    g(false, 'BETA', 'elsewhere'),
  ),
  ...group(
    `CrossNamespaceVolumeDataSource DRAConsumableCapacity DRADeviceBindingConditions DRADeviceTaintRules
     DRADeviceTaints DRAPartitionableDevices GangScheduling GenericWorkload HPAScaleToZero MutablePVNodeAffinity
     MutablePodResourcesForSuspendedJobs MutableSchedulingDirectivesForSuspendedJobs RelaxedServiceNameValidation
     StorageCapacityScoring StrictIPCIDRValidation TaintTolerationComparisonOperators VolumeLimitScaling
     APIServingWithRoutine AllowUnsafeMalformedObjectDeletion CBORServingAndStorage ConstrainedImpersonation
     StorageVersionAPI UnknownVersionInteroperabilityProxy CloudControllerManagerWatchBasedRoutesReconciliation
     CloudControllerManagerWebhook ClientsAllowCBOR ClientsPreferCBOR`,
    g(false, 'ALPHA', 'elsewhere'),
  ),
  ...group('StorageNamespaceIndex', g(true, 'DEPRECATED', 'elsewhere')),
  ...group(
    'AllowInsecureKubeletCertificateSigningRequests KMSv1 SeparateCacheWatchRPC',
    g(false, 'DEPRECATED', 'elsewhere'),
  ),
  AggregatedDiscoveryRemoveBetaType: locked(true, 'DEPRECATED', 'elsewhere'),
  WatchFromStorageWithoutResourceVersion: locked(false, 'DEPRECATED', 'elsewhere'),
};

/**
 * name → spec; GA gates locked on are accepted only at true. Defaults, stages and locks checked
 * against upstream v1.35 pkg/features/kube_features.go (defaultVersionedKubernetesFeatureGates,
 * the last spec at or below 1.35) and client-go features/known_features.go.
 */
export const FEATURE_GATES: Readonly<Record<string, GateSpec>> = {
  // component-base: AllAlpha/AllBeta switch every unlocked gate of their stage.
  AllAlpha: g(false, 'ALPHA', 'off', 'it would switch on every alpha gate, and kubelet-ts implements none of them'),
  AllBeta: g(
    false,
    'BETA',
    'off',
    'it would switch on every beta gate, several of which kubelet-ts does not implement',
  ),
  ContextualLogging: g(true, 'BETA', 'none'),
  LoggingAlphaOptions: g(false, 'ALPHA', 'off', `logging's alpha options are ${NO}`),
  LoggingBetaOptions: g(true, 'BETA', 'none'),
  ComponentFlagz: g(false, 'ALPHA', 'off', `the /flagz endpoint is ${NO}`),
  ComponentStatusz: g(false, 'ALPHA', 'off', `the /statusz endpoint is ${NO}`),
  WatchListClient: g(true, 'BETA', 'none'),
  InformerResourceVersion: g(true, 'GA', 'none'),
  // Locked: GA behaviour we have (or that changes nothing here).
  ExecProbeTimeout: lockedOn('on'),
  ImageMaximumGCAge: lockedOn('on'),
  KubeletCgroupDriverFromCRI: lockedOn('on'),
  SidecarContainers: lockedOn('on'),
  InPlacePodVerticalScaling: lockedOn('on'),
  PodLifecycleSleepAction: lockedOn('on'),
  PodLifecycleSleepActionAllowZero: lockedOn('on'),
  NodeSwap: lockedOn('none'),
  MemoryManager: lockedOn('none'),
  CPUManagerPolicyOptions: lockedOn('none'),
  DynamicResourceAllocation: lockedOn('none'),
  KubeletTracing: lockedOn('none'),
  RelaxedEnvironmentVariableValidation: lockedOn('none'),
  // status.observedGeneration and the conditions' (status/normalize.ts, conditions.ts).
  PodObservedGenerationTracking: lockedOn('on'),
  // supplementalGroupsPolicy passed to the runtime, Strict admission, containerStatuses[].user.
  SupplementalGroupsPolicy: lockedOn('on'),
  // Locked on, behaviour missing: gaps (docs/differences.md); false is refused by the lock.
  RecursiveReadOnlyMounts: lockedOn('off'),
  SystemdWatchdog: lockedOn('off'),
  // GA, not locked.
  TopologyManagerPolicyOptions: g(true, 'GA', 'none'),
  // Acted on.
  KubeletFineGrainedAuthz: g(true, 'BETA', 'both'),
  // Pull records and credential verification of present images (src/images/pullmanager).
  KubeletEnsureSecretPulledImages: g(true, 'BETA', 'both'),
  // Default on; kubelet-ts has the behaviour.
  GracefulNodeShutdown: g(
    true,
    'BETA',
    'on',
    'graceful node shutdown is always on (shutdownGracePeriod: 0s disables it)',
  ),
  KubeletSeparateDiskGC: g(true, 'BETA', 'none'),
  PodLevelResources: g(true, 'BETA', 'on', 'pod-level resources are always honoured'),
  PodReadyToStartContainersCondition: g(true, 'BETA', 'on', 'the PodReadyToStartContainers condition is always set'),
  KubeletServiceAccountTokenForCredentialProviders: g(true, 'BETA', 'none'),
  SELinuxMountReadWriteOncePod: g(true, 'BETA', 'none'),
  // procMount is the runtime's masked paths either way (security-context.ts): Unmasked waits for hostUsers: false.
  ProcMountType: g(true, 'BETA', 'none'),
  CPUManagerPolicyBetaOptions: g(true, 'BETA', 'none'),
  // Default on; kubelet-ts lacks the behaviour (docs/differences.md, "Feature gates"): the default
  // is accepted (nobody asked for anything), false is what we do, so it is accepted too. The pod
  // fields behind them stay refused at admission.
  ContainerCheckpoint: g(true, 'BETA', 'off', `/checkpoint is ${NO}`),
  ContainerRestartRules: g(true, 'BETA', 'off', `container restartPolicyRules are ${NO}`),
  EnvFiles: g(true, 'BETA', 'off', `env from files is ${NO}`),
  GracefulNodeShutdownBasedOnPodPriority: g(true, 'BETA', 'off', `shutdown by pod priority is ${NO}`),
  HostnameOverride: g(true, 'BETA', 'off', `pod hostnameOverride is ${NO}`),
  ImageVolume: g(true, 'BETA', 'off', `image volumes are ${NO}`),
  KubeletCrashLoopBackOffMax: g(true, 'BETA', 'off', `crashLoopBackOff.maxContainerRestartPeriod is ${NO}`),
  KubeletPodResourcesDynamicResources: g(true, 'BETA', 'off', `the pod resources API is ${NO}`),
  KubeletPSI: g(true, 'BETA', 'off', `PSI in the stats summary is ${NO}`),
  // Acted on: off refuses the pod resources API's Get (Unimplemented), as upstream.
  KubeletPodResourcesGet: g(true, 'BETA', 'both'),
  // Default off, acted on: CSI VOLUME_CONDITION into the Summary API, /metrics and events.
  CSIVolumeHealth: g(false, 'ALPHA', 'both'),
  // Default off; kubelet-ts lacks the behaviour.
  CPUManagerPolicyAlphaOptions: g(false, 'ALPHA', 'off', `the CPU manager is ${NO}`),
  ClusterTrustBundle: g(false, 'BETA', 'off', `clusterTrustBundle projections are ${NO}`),
  ClusterTrustBundleProjection: g(false, 'BETA', 'off', `clusterTrustBundle projections are ${NO}`),
  ContainerStopSignals: g(false, 'ALPHA', 'off', `lifecycle.stopSignal is ${NO}`),
  EventedPLEG: g(false, 'ALPHA', 'off', `the evented PLEG is ${NO}`),
  KubeletInUserNamespace: g(false, 'ALPHA', 'off', `running in a user namespace is ${NO}`),
  LocalStorageCapacityIsolationFSQuotaMonitoring: g(false, 'BETA', 'off', `project quotas are ${NO}`),
  MemoryQoS: g(false, 'ALPHA', 'off', `memory QoS is ${NO}`),
  NodeLogQuery: g(false, 'BETA', 'off', `node log query is ${NO}`),
  PodAndContainerStatsFromCRI: g(false, 'ALPHA', 'off', `stats from CRI only are ${NO}`),
  PodCertificateRequest: g(false, 'BETA', 'off', `podCertificate projections are ${NO}`),
  ReduceDefaultCrashLoopBackOffDecay: g(false, 'ALPHA', 'off', `the shorter back-off is ${NO}`),
  ResourceHealthStatus: g(false, 'ALPHA', 'off', `allocatedResourcesStatus is ${NO}`),
  RestartAllContainersOnContainerExits: g(false, 'ALPHA', 'off', `restarting all containers is ${NO}`),
  // Deprecated, default off.
  AllowDNSOnlyNodeCSR: g(false, 'DEPRECATED', 'off', `DNS-only serving CSRs are ${NO}`),
  ...KUBELET_MORE,
  ...ELSEWHERE,
};

/** Gates whose 1.35 default is on for a behaviour kubelet-ts does not have. */
export function featureGateGaps(): string[] {
  return Object.entries(FEATURE_GATES)
    .filter(([, s]) => s.default && s.support === 'off')
    .map(([name]) => name)
    .sort();
}

/** The gates the agent reads. */
export interface FeatureGates {
  enabled(name: string): boolean;
}

/** A FeatureGates over the resolved values (the defaults, overridden by what was set). */
export function featureGates(set: Readonly<Record<string, boolean>>): FeatureGates {
  return {
    enabled(name: string): boolean {
      const spec = FEATURE_GATES[name];
      if (!spec) throw new Error(`feature gate ${name} is not in the table`);
      return set[name] ?? spec.default;
    },
  };
}

const PARSE_BOOL: Readonly<Record<string, boolean>> = Object.fromEntries([
  ...['1', 't', 'T', 'TRUE', 'true', 'True'].map((k) => [k, true]),
  ...['0', 'f', 'F', 'FALSE', 'false', 'False'].map((k) => [k, false]),
]);

/**
 * `A=true,B=false` as upstream's MapStringBool (component-base cli/flag): empty items skipped,
 * key and value trimmed, Go's strconv.ParseBool spellings, the last of a repeated key wins.
 */
function parseFlagForm(raw: string, where: string): { value?: Record<string, boolean>; problem?: string } {
  const out: Record<string, boolean> = {};
  for (const item of raw.split(',')) {
    if (item.length === 0) continue;
    const i = item.indexOf('=');
    if (i < 0) return { problem: `${where}: malformed pair, expect string=bool (got "${item}")` };
    const k = item.slice(0, i).trim();
    const v = item.slice(i + 1).trim();
    const b = PARSE_BOOL[v];
    if (b === undefined) return { problem: `${where}: invalid value of ${k}: ${v}, must be true or false` };
    out[k] = b;
  }
  return { value: out };
}

/** The file's map or the flag's string → name → bool, shape only. */
export function convertFeatureGates(raw: unknown, where: string): { value?: unknown; problem?: string } {
  if (typeof raw === 'string') return parseFlagForm(raw, where);
  const ok =
    raw !== null &&
    typeof raw === 'object' &&
    !Array.isArray(raw) &&
    Object.values(raw).every((v) => typeof v === 'boolean');
  if (ok) return { value: { ...(raw as Record<string, boolean>) } };
  return { problem: `${where}: must be a map of gate name to true/false (got ${JSON.stringify(raw)})` };
}

/** Upstream's checks, then ours, of one gate set to `value`. */
function gateProblem(name: string, value: boolean): string | undefined {
  const spec = FEATURE_GATES[name];
  if (!spec) return `unrecognized feature gate: ${name}`;
  if (spec.lockToDefault && value !== spec.default)
    return `cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`;
  if (value === spec.default) return undefined;
  if ((spec.support === 'on' && !value) || (spec.support === 'off' && value))
    return `feature gate ${name}=${value} is not supported by kubelet-ts: ${spec.why ?? NO} (leave it at its default, ${spec.default})`;
  return undefined;
}

/** Every problem of the gates set, prefixed with `where` (featureGates / --feature-gates). */
export function featureGateProblems(set: Readonly<Record<string, boolean>>, where: string): string[] {
  return Object.entries(set).flatMap(([name, value]) => {
    const p = gateProblem(name, value);
    return p ? [`${where}: ${p}`] : [];
  });
}

/** Upstream's warnings for a gate set that is GA or deprecated (it will be removed). */
export function featureGateWarnings(set: Readonly<Record<string, boolean>>): string[] {
  return Object.entries(set).flatMap(([name, value]) => {
    const stage = FEATURE_GATES[name]?.stage;
    if (stage === 'GA') return [`Setting GA feature gate ${name}=${value}. It will be removed in a future release.`];
    if (stage === 'DEPRECATED')
      return [`Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`];
    return [];
  });
}
