/**
 * What `--version` prints and BirthCry says (upstream: version.Get() and Kubelet.BirthCry, which
 * records a "Starting" event on the Node and logs the version): what was started, with which hot
 * path implementations and which configuration.
 */
import type { Config } from '../config/index.js';
import { FEATURE_GATES, featureGates, featureGateWarnings } from '../config/feature-gates.js';
import { CGROUP_V1_EVENT_REASON, CGROUP_V1_WARNING, isCgroup2UnifiedMode } from '../cm/cgroup-version.js';
import { metrics } from '../metrics/index.js';
import type { EventRecorder } from '../events/types.js';
import { addonFile, loadAddon, nativeDisabled } from '../native/index.js';
import { log } from '../util/log.js';
import { PACKAGE_VERSION, VERSION } from '../version.js';
import { nativeStatus } from './hot-paths.js';

/** Version, native addon status and build details, one fact per line. */
export function versionText(version = VERSION): string {
  const addon = loadAddon();
  const built = addonFile();
  const lines = [
    `Kubernetes ${version}`,
    `kubelet-ts ${PACKAGE_VERSION} (node ${process.version}, ${process.platform}/${process.arch}, N-API ${process.versions.napi ?? '?'}, modules ${process.versions.modules})`,
    `native addon: ${addon ? `loaded from ${built ?? '?'}` : built ? `present at ${built} but not loadable` : 'not built (npm run build:native)'}${nativeDisabled() ? '; disabled by KUBELET_TS_NATIVE=0' : ''}`,
    ...Object.entries(nativeStatus()).map(([path, impl]) => `hot path ${path}: ${impl}`),
  ];
  return lines.join('\n') + '\n';
}

/** The config facts worth one log line at start. */
function configSummary(config: Config): Record<string, unknown> {
  const kc = config.kubelet;
  return {
    nodeName: config.nodeName,
    rootDir: config.flags.rootDir,
    mode: config.flags.kubeconfig ? 'apiserver' : 'standalone',
    runtime: kc.containerRuntimeEndpoint,
    staticPodPath: kc.staticPodPath || undefined,
    staticPodURL: kc.staticPodURL || undefined,
    maxPods: kc.maxPods,
    cgroupsPerQOS: kc.cgroupsPerQOS,
    imageGC: `${kc.imageGCLowThresholdPercent}-${kc.imageGCHighThresholdPercent}%`,
    serializeImagePulls: kc.serializeImagePulls,
    shutdownGracePeriodMs: kc.shutdownGracePeriodMs,
    lockFile: config.flags.lockFile,
    runOnce: config.flags.runOnce || undefined,
  };
}

/** BirthCry: the Starting event on the Node and the log line with version and config summary. */
export function birthCry(recorder: EventRecorder, config: Config, version = VERSION): void {
  log().info({ version, hotPaths: nativeStatus(), config: configSummary(config) }, 'Starting kubelet');
  recorder.event(
    { kind: 'Node', name: config.nodeName, uid: config.nodeName },
    'Normal',
    'Starting',
    'Starting kubelet.',
  );
}

/**
 * The host's cgroup version (kubelet_cgroup_version) and, on cgroup v1 (failCgroupV1: false, or
 * the agent would not have started), upstream's warning: a log line and a CgroupV1 Warning event.
 */
export function reportCgroupVersion(recorder: EventRecorder, nodeName: string, unified = isCgroup2UnifiedMode()): void {
  metrics.cgroupVersion.set(unified ? 2 : 1);
  if (unified) return;
  log('kubelet').warn(CGROUP_V1_WARNING);
  recorder.event({ kind: 'Node', name: nodeName, uid: nodeName }, 'Warning', CGROUP_V1_EVENT_REASON, CGROUP_V1_WARNING);
}

/** kubernetes_feature_enabled{name,stage} for every gate of the table (GA's stage is "", as upstream). */
export function reportFeatureGates(set: Readonly<Record<string, boolean>>): void {
  const gates = featureGates(set);
  for (const [name, spec] of Object.entries(FEATURE_GATES)) {
    const stage = spec.stage === 'GA' ? '' : spec.stage;
    metrics.featureEnabled.set({ name, stage }, gates.enabled(name) ? 1 : 0);
  }
  for (const w of featureGateWarnings(set)) log('kubelet').warn(w);
}
