/**
 * Every field of the v1.35 PodSpec and its containers, classified (issue 26: never silently
 * ignore a pod field):
 *
 *   - `honoured`: the agent acts on it as upstream's kubelet does;
 *   - `other`: another component's to act on (scheduler, API server admission, controllers), as
 *     it is for upstream's kubelet too;
 *   - `refused`: not implemented here. A pod that sets it to something asking for action is
 *     rejected at admission (podFieldRefusal, called by canAdmitPod), never started without it.
 *
 * Paths are upstream's JSON names from `spec`, `[]` standing for each list element. A rule
 * covers its own path; `subtree` rules (another component's structs, refused volume types)
 * cover everything below too. Honoured rules never do, so that a field upstream adds below a
 * honoured struct is caught unclassified by test/kubelet/pod-fields.test.ts, which walks the
 * client's attribute maps plus POD_FIELDS_1_35. docs/differences.md lists the refused rules
 * (scripts/gen-docs.mjs).
 */
import type { Pod } from '../api/types.js';

export type FieldClass = 'honoured' | 'other' | 'refused';

export interface FieldRule {
  path: string;
  class: FieldClass;
  /** Who acts on it, or why it is refused (the refusal message quotes it). */
  why: string;
  /** The rule classifies every field below `path` too (never for honoured rules). */
  subtree?: true;
  /** refused only: when the value asks for action, in words for the docs. Default: when set. */
  when?: string;
  /** refused only: does this value (its parent object beside it) ask for action? Default: isSet. */
  needsAction?: (value: unknown, parent: Record<string, unknown>, pod: Pod) => boolean;
  /** refused only: a value that is refused (the field-walk test sets it). */
  example?: unknown;
  /** refused only: a value that is admitted (the field-walk test sets it too). */
  allowed?: unknown;
  /** refused only: refused in standalone mode; with an API server the node serves it (PodFieldContext). */
  standaloneOnly?: true;
}

/** What admission knows of the node's mode. */
export interface PodFieldContext {
  /** API server mode: claims, PVs and CSIDrivers can be read (standaloneOnly rules do not apply). */
  apiServer?: boolean;
}

/** A value is set unless null/undefined, an empty string, or a list or object with nothing set. */
export function isSet(v: unknown): boolean {
  if (v === undefined || v === null || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.values(v).some(isSet);
  return true;
}

/**
 * The v1.35 fields @kubernetes/client-node 1.4.0 (the 1.34 API) lacks: path → type
 * ('object' for a struct, else the leaf type). The field-walk test adds them to the inventory.
 */
export const POD_FIELDS_1_35: Readonly<Record<string, string>> = {
  'spec.workloadRef': 'object',
  'spec.workloadRef.name': 'string',
  'spec.workloadRef.podGroup': 'string',
  'spec.workloadRef.podGroupReplicaKey': 'string',
  'spec.volumes[].projected.sources[].podCertificate.userAnnotations': '{ [key: string]: string; }',
};

const h = (path: string, why: string): FieldRule => ({ path, class: 'honoured', why });
const other = (path: string, why: string): FieldRule => ({ path, class: 'other', why, subtree: true });
const refused = (path: string, why: string, more: Partial<FieldRule> = {}): FieldRule => ({
  path,
  class: 'refused',
  why,
  ...more,
});
/** A refused struct or list: everything below it is refused with it. */
const refusedTree = (path: string, why: string, more: Partial<FieldRule> = {}): FieldRule =>
  refused(path, why, { subtree: true, ...more });
const many = (prefix: string, names: string[], why: string): FieldRule[] => names.map((n) => h(`${prefix}.${n}`, why));

/** A volume (or projection, env) source chosen at all, even empty (`emptyDir: {}` is a volume). */
const present = { when: 'present', needsAction: (v: unknown): boolean => v !== undefined && v !== null };

const notIn =
  (...fine: unknown[]) =>
  (v: unknown): boolean =>
    isSet(v) && !fine.includes(v);

/** A string refused unless it is `fine` (the default, what the node does anyway). */
const unless = (fine: string, example: string, when = `not ${fine}`): Partial<FieldRule> => ({
  when,
  needsAction: notIn(fine),
  example,
  allowed: fine,
});

/** runAsNonRoot (the container's over the pod's) is checked when each container is created. */
const NON_ROOT_WHY =
  "checked against runAsUser or the image's user before the container is created (kuberuntime/run-as-non-root.ts): root or a non-numeric image user is CreateContainerConfigError";

// ---- shared structs --------------------------------------------------------------------------

function httpGetRules(p: string, why: string): FieldRule[] {
  return [
    h(p, why),
    ...many(p, ['host', 'path', 'port', 'scheme', 'httpHeaders', 'httpHeaders[].name', 'httpHeaders[].value'], why),
  ];
}

function probeRules(p: string): FieldRule[] {
  const why = 'the prober (src/prober) runs it and reports readiness, liveness and startup';
  return [
    h(p, why),
    ...many(
      p,
      [
        'exec',
        'exec.command',
        'grpc',
        'grpc.port',
        'grpc.service',
        'tcpSocket',
        'tcpSocket.host',
        'tcpSocket.port',
        'failureThreshold',
        'initialDelaySeconds',
        'periodSeconds',
        'successThreshold',
        'timeoutSeconds',
      ],
      why,
    ),
    ...httpGetRules(`${p}.httpGet`, why),
    h(`${p}.terminationGracePeriodSeconds`, 'the grace period of a kill after a failed probe (kuberuntime/kill.ts)'),
  ];
}

function hookRules(p: string): FieldRule[] {
  const why = 'run by kuberuntime/lifecycle-hooks.ts';
  return [
    h(p, why),
    ...many(p, ['exec', 'exec.command', 'sleep', 'sleep.seconds'], why),
    ...httpGetRules(`${p}.httpGet`, why),
    // upstream keeps tcpSocket for compatibility only: its handler fails with "invalid handler".
    ...many(
      p,
      ['tcpSocket', 'tcpSocket.host', 'tcpSocket.port'],
      'as upstream: a tcpSocket hook fails (invalid handler)',
    ),
  ];
}

function keyRefRules(p: string, why: string): FieldRule[] {
  return [h(p, why), ...many(p, ['name', 'key', 'optional'], why)];
}

function resourceFieldRules(p: string, why: string): FieldRule[] {
  return [h(p, why), ...many(p, ['containerName', 'divisor', 'resource'], why)];
}

function fieldRefRules(p: string, why: string): FieldRule[] {
  return [h(p, why), ...many(p, ['apiVersion', 'fieldPath'], why)];
}

/** A seccomp or AppArmor profile: every type is acted on (kuberuntime/security-profiles.ts). */
function profileRules(path: string, why: string): FieldRule[] {
  return [h(path, why), h(`${path}.type`, why), h(`${path}.localhostProfile`, why)];
}

/**
 * seLinuxOptions: given to the runtime (the container's over the pod's), as upstream; where the
 * host has no SELinux the runtime does nothing with them, as for upstream's kubelet.
 */
function seLinuxRules(p: string): FieldRule[] {
  const why = 'the SELinux label given to the runtime (kuberuntime/security-context.ts); no effect without SELinux';
  return [h(`${p}.seLinuxOptions`, why), ...many(`${p}.seLinuxOptions`, ['user', 'role', 'type', 'level'], why)];
}

/** SELinux, seccomp, AppArmor and Windows options, the same at pod and container level. */
function securityProfileRules(p: string): FieldRule[] {
  return [
    ...seLinuxRules(p),
    ...profileRules(
      `${p}.seccompProfile`,
      'given to the runtime, Localhost as a file below <root-dir>/seccomp (unset: seccompDefault)',
    ),
    ...profileRules(
      `${p}.appArmorProfile`,
      'given to the runtime; a profile other than Unconfined on a host without AppArmor is refused (reason AppArmor)',
    ),
    refusedTree(`${p}.windowsOptions`, 'Windows options on a Linux node', {
      when: 'any option is set other than hostProcess: false',
      needsAction: (v) => {
        const { hostProcess, ...rest } = (v ?? {}) as Record<string, unknown>;
        return hostProcess === true || isSet(rest);
      },
      example: { runAsUserName: 'ContainerUser' },
      allowed: { hostProcess: false },
    }),
  ];
}

// ---- containers ------------------------------------------------------------------------------

type ContainerKind = 'containers' | 'initContainers' | 'ephemeralContainers';

function containerSecurityRules(p: string): FieldRule[] {
  const sc = `${p}.securityContext`;
  return [
    h(sc, 'the container security context given to the runtime (kuberuntime/container-config.ts)'),
    h(`${sc}.privileged`, 'passed to the runtime'),
    h(`${sc}.runAsUser`, 'passed to the runtime'),
    h(`${sc}.runAsGroup`, 'passed to the runtime'),
    h(`${sc}.capabilities`, 'added and dropped by the runtime'),
    h(`${sc}.capabilities.add`, 'added by the runtime'),
    h(`${sc}.capabilities.drop`, 'dropped by the runtime'),
    h(`${sc}.allowPrivilegeEscalation`, 'false sets no_new_privs (unless privileged)'),
    h(`${sc}.readOnlyRootFilesystem`, 'a read-only root filesystem, by the runtime'),
    h(`${sc}.runAsNonRoot`, NON_ROOT_WHY),
    refused(
      `${sc}.procMount`,
      "Default masks and write-protects /proc paths (upstream's lists); Unmasked needs hostUsers: false " +
        '(upstream API validation: `hostUsers` must be false to use `Unmasked`)',
      {
        when: 'Unmasked and hostUsers is not false',
        needsAction: (v, _parent, pod) => v === 'Unmasked' && pod.spec?.hostUsers !== false,
        example: 'Unmasked',
        allowed: 'Default',
      },
    ),
    ...securityProfileRules(sc),
  ];
}

function envRules(p: string): FieldRule[] {
  const env = `${p}.env`;
  const from = `${env}[].valueFrom`;
  const envWhy = 'the container environment (kuberuntime/env.ts)';
  return [
    h(env, envWhy),
    h(`${env}[].name`, envWhy),
    h(`${env}[].value`, envWhy),
    h(from, envWhy),
    ...fieldRefRules(`${from}.fieldRef`, 'the downward API (src/fieldpath)'),
    ...resourceFieldRules(`${from}.resourceFieldRef`, 'the downward API (src/fieldpath)'),
    ...keyRefRules(`${from}.configMapKeyRef`, 'read from the configMap (API server mode)'),
    ...keyRefRules(`${from}.secretKeyRef`, 'read from the secret (API server mode)'),
    refusedTree(`${from}.fileKeyRef`, 'environment variables from a file in a volume (EnvFiles) are not read', {
      ...present,
      example: { volumeName: 'v', path: 'env', key: 'K' },
    }),
    h(`${p}.envFrom`, envWhy),
    h(`${p}.envFrom[].prefix`, envWhy),
    ...keyRefRules(`${p}.envFrom[].configMapRef`, 'read from the configMap (API server mode)').filter(
      (r) => !r.path.endsWith('.key'),
    ),
    ...keyRefRules(`${p}.envFrom[].secretRef`, 'read from the secret (API server mode)').filter(
      (r) => !r.path.endsWith('.key'),
    ),
  ];
}

function mountRules(p: string): FieldRule[] {
  const vm = `${p}.volumeMounts`;
  const why = 'bound into the container (kuberuntime/container-mounts.ts)';
  return [
    h(vm, why),
    ...many(`${vm}[]`, ['name', 'mountPath', 'readOnly', 'subPath', 'subPathExpr'], why),
    refused(
      `${vm}[].mountPropagation`,
      'mounts are always private (no propagation)',
      unless('None', 'HostToContainer'),
    ),
    refused(`${vm}[].recursiveReadOnly`, 'read-only mounts are not made recursively read-only', {
      when: 'Enabled (IfPossible falls back to a plain read-only mount, as upstream on a runtime without it)',
      needsAction: (v) => v === 'Enabled',
      example: 'Enabled',
      allowed: 'IfPossible',
    }),
    refusedTree(
      `${p}.volumeDevices`,
      'raw block volumes (a PV of volumeMode Block) are not served: CSI volumes are mounted as filesystems',
      {
        example: [{ name: 'v', devicePath: '/dev/xvda' }],
      },
    ),
  ];
}

function resourceRules(p: string): FieldRule[] {
  const r = `${p}.resources`;
  return [
    h(r, 'cpu, memory and hugepages-*: cgroups, QoS, admission, eviction (src/cm, kuberuntime/resources.ts)'),
    refused(
      `${r}.limits`,
      'cpu, memory and hugepages-* limits are honoured; ephemeral-storage limits are not enforced',
      {
        when: 'it names ephemeral-storage',
        needsAction: (v) => Object.keys((v as Record<string, unknown>) ?? {}).includes('ephemeral-storage'),
        example: { 'ephemeral-storage': '1Gi' },
        allowed: { cpu: '1', memory: '64Mi', 'hugepages-2Mi': '2Mi' },
      },
    ),
    h(
      `${r}.requests`,
      'cpu, memory and hugepages-* are honoured (extended and ephemeral-storage requests are for the scheduler)',
    ),
    refusedTree(`${r}.claims`, 'dynamic resource allocation (DRA) is not implemented', { example: [{ name: 'gpu' }] }),
    h(`${p}.resizePolicy`, 'in-place resize: NotRequired updates in place, RestartContainer restarts (docs/resize.md)'),
    h(`${p}.resizePolicy[].resourceName`, 'cpu or memory (kuberuntime/resize.ts)'),
    h(`${p}.resizePolicy[].restartPolicy`, 'NotRequired or RestartContainer (kuberuntime/resize.ts)'),
  ];
}

function containerRules(kind: ContainerKind): FieldRule[] {
  const p = `spec.${kind}[]`;
  const why = 'the container the runtime runs (kuberuntime)';
  const restartPolicy =
    kind === 'initContainers'
      ? h(`${p}.restartPolicy`, 'Always makes a sidecar (restartable init container)')
      : refused(`${p}.restartPolicy`, 'per-container restart policies (ContainerRestartRules) are not implemented', {
          example: 'Never',
        });
  return [
    h(`spec.${kind}`, why),
    ...many(p, ['name', 'image', 'command', 'args', 'workingDir', 'stdin', 'stdinOnce', 'tty'], why),
    h(`${p}.imagePullPolicy`, 'the image manager (src/images)'),
    h(`${p}.ports`, 'host ports: CRI port mappings and admission (NodePorts); the rest is informational'),
    ...many(`${p}.ports[]`, ['name', 'containerPort', 'protocol', 'hostPort', 'hostIP'], 'as ports'),
    h(
      `${p}.terminationMessagePath`,
      'a file of the pod directory bound there, read when the container exits (kuberuntime/termination-message.ts)',
    ),
    h(
      `${p}.terminationMessagePolicy`,
      'FallbackToLogsOnError: the log tail of a failed container with an empty message file (termination-message.ts)',
    ),
    restartPolicy,
    refusedTree(`${p}.restartPolicyRules`, 'container restart rules (ContainerRestartRules) are not implemented', {
      example: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }],
    }),
    ...envRules(p),
    ...mountRules(p),
    ...resourceRules(p),
    ...containerSecurityRules(p),
    ...probeRules(`${p}.livenessProbe`),
    ...probeRules(`${p}.readinessProbe`),
    ...probeRules(`${p}.startupProbe`),
    h(`${p}.lifecycle`, 'postStart and preStop hooks (kuberuntime/lifecycle-hooks.ts)'),
    ...hookRules(`${p}.lifecycle.postStart`),
    ...hookRules(`${p}.lifecycle.preStop`),
    refused(`${p}.lifecycle.stopSignal`, 'containers are stopped with the signal of their image', {
      example: 'SIGUSR1',
    }),
  ];
}

const EPHEMERAL = 'spec.ephemeralContainers[]';

/**
 * What API validation forbids in an ephemeral container (upstream validateEphemeralContainers:
 * allowedEphemeralContainerFields, and no subPaths). Such a container cannot reach the node
 * through the API server; one that does anyway is refused, naming the field.
 */
function ephemeralForbiddenRules(): FieldRule[] {
  const why = 'cannot be set for an ephemeral container (API validation)';
  const f = (name: string, example: unknown): FieldRule =>
    (typeof example === 'string' ? refused : refusedTree)(`${EPHEMERAL}.${name}`, why, { example });
  const probe = { exec: { command: ['true'] } };
  return [
    f('ports', [{ containerPort: 80 }]),
    f('resources', { limits: { cpu: '1' } }),
    f('resizePolicy', [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }]),
    f('livenessProbe', probe),
    f('readinessProbe', probe),
    f('startupProbe', probe),
    f('lifecycle', { preStop: probe }),
    f('restartPolicy', 'Always'),
    f('restartPolicyRules', [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }]),
    f('volumeMounts[].subPath', 'sub'),
    f('volumeMounts[].subPathExpr', '$(POD_NAME)'),
  ];
}

/**
 * spec.ephemeralContainers (kubectl debug): run once when a pod update adds them
 * (kuberuntime/pod-actions.ts), with a regular container's fields minus those API validation
 * forbids, plus targetContainerName.
 */
function ephemeralContainerRules(): FieldRule[] {
  const forbidden = ephemeralForbiddenRules();
  const covered = (path: string): boolean =>
    forbidden.some((r) => path === r.path || path.startsWith(`${r.path}.`) || path.startsWith(`${r.path}[].`));
  return [
    ...containerRules('ephemeralContainers').filter((r) => !covered(r.path)),
    h(`${EPHEMERAL}.targetContainerName`, "joins that container's process namespace (CRI pid TARGET)"),
    ...forbidden,
  ];
}

// ---- volumes ---------------------------------------------------------------------------------

/** In-tree volume types with no plugin here (most are removed or CSI-migrated upstream). */
const NETWORK_VOLUMES = [
  'awsElasticBlockStore',
  'azureDisk',
  'azureFile',
  'cephfs',
  'cinder',
  'fc',
  'flexVolume',
  'flocker',
  'gcePersistentDisk',
  'gitRepo',
  'glusterfs',
  'iscsi',
  'nfs',
  'photonPersistentDisk',
  'portworxVolume',
  'quobyte',
  'rbd',
  'scaleIO',
  'storageos',
  'vsphereVolume',
];

function itemRules(p: string, why: string): FieldRule[] {
  return [h(p, why), ...many(`${p}[]`, ['key', 'path', 'mode'], why)];
}

function downwardItemRules(p: string, why: string): FieldRule[] {
  return [
    h(p, why),
    h(`${p}[].path`, why),
    h(`${p}[].mode`, why),
    ...fieldRefRules(`${p}[].fieldRef`, why),
    ...resourceFieldRules(`${p}[].resourceFieldRef`, why),
  ];
}

function projectedRules(): FieldRule[] {
  const p = 'spec.volumes[].projected';
  const s = `${p}.sources[]`;
  const why = 'the projected volume plugin (volume/plugins/projected.ts)';
  return [
    h(p, why),
    h(`${p}.defaultMode`, why),
    h(`${p}.sources`, why),
    h(`${s}.configMap`, why),
    ...many(`${s}.configMap`, ['name', 'optional'], why),
    ...itemRules(`${s}.configMap.items`, why),
    h(`${s}.secret`, why),
    ...many(`${s}.secret`, ['name', 'optional'], why),
    ...itemRules(`${s}.secret.items`, why),
    h(`${s}.downwardAPI`, why),
    ...downwardItemRules(`${s}.downwardAPI.items`, why),
    h(`${s}.serviceAccountToken`, 'a token requested for the pod (API server mode)'),
    ...many(`${s}.serviceAccountToken`, ['audience', 'expirationSeconds', 'path'], 'as serviceAccountToken'),
    refusedTree(`${s}.clusterTrustBundle`, 'ClusterTrustBundle projections are not implemented', {
      ...present,
      example: { signerName: 'example.com/s', path: 'ca.pem' },
    }),
    refusedTree(`${s}.podCertificate`, 'pod certificates (PodCertificateRequest) are not implemented', {
      ...present,
      example: { signerName: 'example.com/s', keyType: 'ED25519', credentialBundlePath: 'c.pem' },
    }),
  ];
}

/**
 * Volumes served through CSI drivers (volume/csi/csi-resolve.ts): every sub-field is acted on
 * (ephemeral.volumeClaimTemplate is the ephemeral volume controller's), but resolving them needs
 * the API server (the claim, its PV, the CSIDriver object): refused in standalone mode only.
 */
function csiServedVolumeRules(v: string): FieldRule[] {
  const standalone = { ...present, when: 'present, in standalone mode (no API server)', standaloneOnly: true as const };
  const needs = (what: string) =>
    `needs the API server to resolve ${what} (served through CSI drivers in API server mode, docs/storage.md)`;
  return [
    refusedTree(`${v}.persistentVolumeClaim`, needs('the claim, its PersistentVolume and the CSIDriver'), {
      ...standalone,
      example: { claimName: 'data' },
    }),
    refusedTree(`${v}.ephemeral`, needs('the <pod>-<volume> claim, its PersistentVolume and the CSIDriver'), {
      ...standalone,
      example: { volumeClaimTemplate: { spec: {} } },
    }),
    refusedTree(`${v}.csi`, needs('the CSIDriver (its volumeLifecycleModes)'), {
      ...standalone,
      example: { driver: 'example.csi.k8s.io' },
    }),
  ];
}

function volumeRules(): FieldRule[] {
  const v = 'spec.volumes[]';
  const why = 'the volume manager (src/volume)';
  return [
    h('spec.volumes', why),
    h(`${v}.name`, why),
    h(`${v}.emptyDir`, 'volume/plugins/empty-dir.ts'),
    refused(`${v}.emptyDir.medium`, 'disk, Memory (tmpfs) and HugePages[-<size>] (hugetlbfs) emptyDirs are made', {
      when: 'not "", Memory, HugePages nor HugePages-<size>',
      needsAction: (val) => isSet(val) && !/^(Memory|HugePages(-.+)?)$/.test(String(val)),
      example: 'Tape',
      allowed: 'HugePages-2Mi',
    }),
    refused(
      `${v}.emptyDir.sizeLimit`,
      'a disk emptyDir is not measured nor evicted for its size (a Memory one is a sized tmpfs)',
      {
        when: 'medium is not Memory',
        needsAction: (val, parent) => isSet(val) && parent.medium !== 'Memory',
        example: '1Gi',
      },
    ),
    h(`${v}.hostPath`, 'volume/plugins/host-path.ts'),
    ...many(`${v}.hostPath`, ['path', 'type'], 'volume/plugins/host-path.ts'),
    h(`${v}.configMap`, 'volume/plugins/configmap.ts'),
    ...many(`${v}.configMap`, ['name', 'optional', 'defaultMode'], 'volume/plugins/configmap.ts'),
    ...itemRules(`${v}.configMap.items`, 'volume/plugins/configmap.ts'),
    h(`${v}.secret`, 'volume/plugins/secret.ts'),
    ...many(`${v}.secret`, ['secretName', 'optional', 'defaultMode'], 'volume/plugins/secret.ts'),
    ...itemRules(`${v}.secret.items`, 'volume/plugins/secret.ts'),
    h(`${v}.downwardAPI`, 'volume/plugins/downward-api.ts'),
    h(`${v}.downwardAPI.defaultMode`, 'volume/plugins/downward-api.ts'),
    ...downwardItemRules(`${v}.downwardAPI.items`, 'volume/plugins/downward-api.ts'),
    ...projectedRules(),
    ...csiServedVolumeRules(v),
    refusedTree(`${v}.image`, 'image volumes are not served', { ...present, example: { reference: 'busybox' } }),
    ...NETWORK_VOLUMES.map((t) =>
      refusedTree(`${v}.${t}`, 'this in-tree volume type has no plugin here', { ...present, example: { path: '/x' } }),
    ),
  ];
}

// ---- the pod ---------------------------------------------------------------------------------

function podSecurityRules(): FieldRule[] {
  const sc = 'spec.securityContext';
  const why = 'the identity of every container (kuberuntime/container-config.ts)';
  return [
    h(sc, why),
    ...many(sc, ['runAsUser', 'runAsGroup', 'supplementalGroups'], why),
    h(`${sc}.fsGroup`, 'group owner of the volumes and a supplemental group'),
    h(`${sc}.fsGroupChangePolicy`, 'the volumes served here are made fresh, so OnRootMismatch and Always end the same'),
    h(`${sc}.runAsNonRoot`, NON_ROOT_WHY),
    h(
      `${sc}.supplementalGroupsPolicy`,
      'passed to the runtime; Strict where the runtime reports it (else SupplementalGroupsPolicyNotSupported)',
    ),
    h(
      `${sc}.sysctls`,
      'safe namespaced sysctls go to the sandbox; others are SysctlForbidden at admission (sysctls.ts)',
    ),
    ...many(`${sc}.sysctls[]`, ['name', 'value'], 'as sysctls'),
    h(`${sc}.seLinuxChangePolicy`, 'as upstream, it only changes how volumes are relabelled on an SELinux host'),
    ...securityProfileRules(sc),
  ];
}

function schedulingRules(): FieldRule[] {
  const sched = 'the scheduler places the pod';
  return [
    other('spec.affinity', `${sched} (the required node affinity is also checked at admission)`),
    other('spec.tolerations', sched),
    other('spec.topologySpreadConstraints', sched),
    other('spec.schedulingGates', `${sched}: a gated pod is never bound`),
    other('spec.schedulerName', sched),
    other('spec.preemptionPolicy', sched),
    other('spec.workloadRef', `${sched} (gang scheduling)`),
    other('spec.priorityClassName', 'the Priority admission plugin of the API server resolves it into spec.priority'),
    other('spec.serviceAccount', 'deprecated alias the API server copies into serviceAccountName'),
    other(
      'spec.automountServiceAccountToken',
      'the ServiceAccount admission plugin of the API server adds (or not) the token volume',
    ),
    h('spec.nodeName', 'admission (NodeName)'),
    h('spec.nodeSelector', 'admission (NodeAffinity)'),
    h('spec.os', 'admission (PodOSNotSupported)'),
    h('spec.os.name', 'admission (PodOSNotSupported)'),
    h('spec.priority', 'eviction ranking, critical pods, graceful node shutdown'),
  ];
}

function podRules(): FieldRule[] {
  const sandbox = 'the pod sandbox (kuberuntime/sandbox-config.ts)';
  const dns = 'the sandbox resolv.conf (kuberuntime/dns.ts)';
  return [
    ...schedulingRules(),
    h('spec.restartPolicy', 'the pod workers restart containers as it says'),
    h('spec.activeDeadlineSeconds', 'kubelet/active-deadline.ts'),
    h('spec.terminationGracePeriodSeconds', 'the grace period of kills (kuberuntime/kill.ts)'),
    h('spec.serviceAccountName', 'service account tokens and the downward API'),
    ...many('spec', ['hostNetwork', 'hostPID', 'hostIPC', 'shareProcessNamespace'], sandbox),
    ...many('spec', ['hostname', 'subdomain', 'setHostnameAsFQDN'], sandbox),
    h('spec.hostUsers', 'user namespaces (kubelet/userns), where the runtime handler supports them'),
    refused('spec.hostnameOverride', 'the pod hostname override (HostnameOverride) is not implemented', {
      example: 'name.example',
    }),
    h('spec.runtimeClassName', 'the runtime handler (kuberuntime/runtime-class.ts)'),
    h('spec.overhead', 'added to the pod cgroup and requests (util/pod-resources.ts)'),
    h('spec.readinessGates', 'the Ready condition waits for them (status/conditions.ts)'),
    h('spec.readinessGates[].conditionType', 'as readinessGates'),
    h('spec.resources', 'pod-level resources: the pod cgroup and QoS (util/pod-resources.ts)'),
    h('spec.resources.limits', 'pod-level cpu, memory and hugepages-* limits: the pod cgroup (src/cm)'),
    h('spec.resources.requests', 'as spec.resources'),
    refusedTree('spec.resources.claims', 'dynamic resource allocation (DRA) is not implemented', {
      example: [{ name: 'gpu' }],
    }),
    refusedTree('spec.resourceClaims', 'dynamic resource allocation (DRA) is not implemented', {
      example: [{ name: 'gpu', resourceClaimName: 'gpu' }],
    }),
    h('spec.dnsPolicy', dns),
    h('spec.dnsConfig', dns),
    ...many('spec.dnsConfig', ['nameservers', 'searches', 'options', 'options[].name', 'options[].value'], dns),
    h('spec.enableServiceLinks', 'Service environment variables (kuberuntime/env.ts)'),
    h('spec.hostAliases', 'the kubelet-managed /etc/hosts'),
    ...many('spec.hostAliases[]', ['ip', 'hostnames'], 'the kubelet-managed /etc/hosts'),
    h('spec.imagePullSecrets', 'credentials for the image pulls (src/images)'),
    h('spec.imagePullSecrets[].name', 'as imagePullSecrets'),
    ...podSecurityRules(),
    ...containerRules('containers'),
    ...containerRules('initContainers'),
    ...ephemeralContainerRules(),
    ...volumeRules(),
  ];
}

/** The classification of every field of the v1.35 PodSpec, in document order. */
export const POD_FIELD_RULES: readonly FieldRule[] = podRules();

/** The rule classifying `path` (its own or a subtree rule above it), if any. */
export function classify(path: string): FieldRule | undefined {
  let best: FieldRule | undefined;
  for (const r of POD_FIELD_RULES) {
    if (r.path === path) return r;
    const below = path.startsWith(`${r.path}.`) || path.startsWith(`${r.path}[].`);
    if (r.subtree && below && (!best || r.path.length > best.path.length)) best = r;
  }
  return best;
}

// ---- the admission check ---------------------------------------------------------------------

interface Found {
  path: string;
  value: unknown;
  parent: Record<string, unknown>;
}

/** The values at a rule path in `root`, `[]` expanded into each index. */
function valuesAt(root: Record<string, unknown>, segments: readonly string[], at: string): Found[] {
  const [seg, ...rest] = segments;
  if (seg === undefined) return [];
  const list = seg.endsWith('[]');
  const name = list ? seg.slice(0, -2) : seg;
  const value = root[name];
  if (value === undefined || value === null) return [];
  const here = at === '' ? name : `${at}.${name}`;
  if (!list) {
    if (rest.length === 0) return [{ path: here, value, parent: root }];
    return typeof value === 'object' ? valuesAt(value as Record<string, unknown>, rest, here) : [];
  }
  if (!Array.isArray(value)) return [];
  return value.flatMap((el, i) =>
    el !== null && typeof el === 'object' ? valuesAt(el as Record<string, unknown>, rest, `${here}[${i}]`) : [],
  );
}

export interface FieldRefusal {
  /** The field, with list indexes: `spec.containers[0].securityContext.procMount`. */
  path: string;
  rule: FieldRule;
}

const isEphemeralRule = (r: FieldRule): boolean => r.path.startsWith(`${EPHEMERAL}.`);
const refusedRules = (ephemeral: boolean) =>
  POD_FIELD_RULES.filter((r) => r.class === 'refused' && isEphemeralRule(r) === ephemeral).map((r) => ({
    r,
    segs: r.path.split('.'),
  }));
const REFUSED = refusedRules(false);
const REFUSED_EPHEMERAL = refusedRules(true);

function firstRefusal(
  pod: Pod,
  rules: typeof REFUSED,
  keep: (path: string) => boolean = () => true,
  ctx: PodFieldContext = {},
): FieldRefusal | undefined {
  const root = pod as unknown as Record<string, unknown>;
  for (const { r, segs } of rules) {
    if (r.standaloneOnly && ctx.apiServer) continue;
    const needs = r.needsAction ?? isSet;
    const hit = valuesAt(root, segs, '').find((f) => keep(f.path) && needs(f.value, f.parent, pod));
    if (hit) return { path: hit.path, rule: r };
  }
  return undefined;
}

/**
 * The first field of `pod` set to something this node does not do, in table order. Ephemeral
 * containers are not looked at: they arrive by update after admission, and one this node cannot
 * run must not get its pod rejected when the agent restarts (ephemeralContainerRefusal).
 */
export function podFieldRefusal(pod: Pod, ctx: PodFieldContext = {}): FieldRefusal | undefined {
  return firstRefusal(pod, REFUSED, undefined, ctx);
}

/** The first field of ephemeral container `index` this node refuses (checked when it is started). */
export function ephemeralContainerRefusal(pod: Pod, index: number): FieldRefusal | undefined {
  const prefix = `spec.ephemeralContainers[${index}].`;
  return firstRefusal(pod, REFUSED_EPHEMERAL, (path) => path.startsWith(prefix));
}
