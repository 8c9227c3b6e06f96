/**
 * Pod admission (upstream Kubelet.canAdmitPod with lifecycle.predicateAdmitHandler): the checks
 * a node makes before it runs a pod that a source assigned to it, in upstream's order, the
 * first failure deciding the reason:
 *
 *   0. pod sysctls: the safe ones and the node's allowedUnsafeSysctls (SysctlForbidden, sysctls.ts);
 *   1. the `kubernetes.io/os` pod label against the node's (PodOSSelectorNodeLabelDoesNotMatch);
 *   2. spec.os.name, when set, must be linux (PodOSNotSupported);
 *   2b. supplementalGroupsPolicy: Strict on a node whose runtime does not report the feature
 *      (node status features.supplementalGroupsPolicy; containerd 1.6/1.7 report none)
 *      (SupplementalGroupsPolicyNotSupported, upstream's words);
 *   2c. no pod field set to something this node does not do (pod-fields.ts): upstream's
 *      PodFeatureUnsupported (the reason of its node-declared-features check, 1.35); the message
 *      names the field path;
 *   3. scheduler.AdmissionCheck: resources (OutOfpods, OutOfcpu, OutOfmemory — pod count first,
 *      then requests against allocatable minus what active pods request), node affinity and
 *      nodeSelector (NodeAffinity), spec.nodeName (NodeName), host ports (NodePorts).
 *
 *   3b. extended resources (device plugins' and, in API server mode, the Node object's):
 *      OutOf<resource> against allocatable. A resource the node does not have at all counts as
 *      allocatable 0 and refuses the pod (upstream drops it from the requests and admits: a
 *      deliberate difference, docs/differences.md), so no pod runs without its device.
 *
 * Pure: the caller gives the node and the pods already admitted and still active. Not done (as
 * documented): critical-pod preemption on admission failure, ephemeral-storage, the NoExecute taint check (it skips static pods upstream and a standalone
 * node has no taints).
 */
import type { Pod } from '../api/types.js';
import { isRestartableInitContainer } from '../api/pod.js';
import { podRequests, ResourceError, type PodResourceTotals } from '../util/pod-resources.js';
import type { NodeInfo } from '../node/node-info.js';
import { podHugePages } from '../node/hugepages.js';
import { isExtendedResourceName } from '../util/resource-names.js';
import { tryParseQuantity } from '../util/quantity.js';
import { ephemeralContainerRefusal, podFieldRefusal, type FieldRefusal, type PodFieldContext } from './pod-fields.js';
import { admitSysctls, type SysctlAllowlist } from './sysctls.js';

/** One admission check of a pod (upstream PodAdmitHandler). */
export type AdmitHandler = (pod: Pod) => AdmitResult;

export interface AdmitResult {
  admit: boolean;
  reason?: string;
  message?: string;
}

/** Upstream reasons (pkg/kubelet/lifecycle/predicate.go and the scheduler plugin names). */
const AdmissionReason = {
  OutOfCPU: 'OutOfcpu',
  OutOfMemory: 'OutOfmemory',
  OutOfPods: 'OutOfpods',
  NodeAffinity: 'NodeAffinity',
  NodeName: 'NodeName',
  NodePorts: 'NodePorts',
  PodOSSelectorNodeLabelDoesNotMatch: 'PodOSSelectorNodeLabelDoesNotMatch',
  PodOSNotSupported: 'PodOSNotSupported',
  PodFeatureUnsupported: 'PodFeatureUnsupported',
  SupplementalGroupsPolicyNotSupported: 'SupplementalGroupsPolicyNotSupported',
  UnexpectedAdmissionError: 'UnexpectedAdmissionError',
} as const;

const ErrReasonNodeAffinity = "node(s) didn't match Pod's node affinity/selector";
const ErrReasonNodeName = "node(s) didn't match the requested node name";
const ErrReasonNodePorts = "node(s) didn't have free ports for the requested pod ports";

/**
 * upstream resource.PodRequests (util/pod-resources.ts). A quantity that does not parse (only a
 * broken apiserver sends one; manifests are validated) makes the pod count as requesting
 * nothing here; starting its containers reports the bad field.
 */
function requestsOf(pod: Pod): PodResourceTotals {
  try {
    return podRequests(pod);
  } catch (err) {
    if (err instanceof ResourceError) return { cpu: 0, memory: 0 };
    throw err;
  }
}

const add = (a: PodResourceTotals, b: PodResourceTotals): PodResourceTotals => ({
  cpu: a.cpu + b.cpu,
  memory: a.memory + b.memory,
});

/** A host port a pod asks for: protocol, port and host IP (0.0.0.0 when unset), as upstream. */
interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

function hostPorts(pod: Pod): HostPort[] {
  const containers = [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []).filter(isRestartableInitContainer),
  ];
  const out: HostPort[] = [];
  for (const c of containers) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort || p.hostPort <= 0) continue;
      out.push({ ip: p.hostIP || '0.0.0.0', protocol: p.protocol || 'TCP', port: p.hostPort });
    }
  }
  return out;
}

/** upstream HostPortInfo.CheckConflict: 0.0.0.0 conflicts with every IP on the same protocol/port. */
function portConflicts(want: HostPort, used: HostPort[]): boolean {
  return used.some(
    (u) =>
      u.port === want.port &&
      u.protocol === want.protocol &&
      (want.ip === '0.0.0.0' || u.ip === '0.0.0.0' || u.ip === want.ip),
  );
}

type Requirement = { key: string; operator: string; values?: string[] };

function matchRequirement(r: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(v!);
    case 'NotIn':
      return !has || !values.includes(v!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1) return false;
      const a = Number(v);
      const b = Number(values[0]);
      if (!Number.isInteger(a) || !Number.isInteger(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/**
 * upstream GetRequiredNodeAffinity(pod).Match(node): every nodeSelector label, and (when given)
 * one of the required nodeSelectorTerms, each term being the AND of its matchExpressions
 * (labels) and matchFields (metadata.name). A term with neither matches nothing.
 */
export function matchesNodeAffinity(pod: Pod, node: Pick<NodeInfo, 'name' | 'labels'>): boolean {
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (node.labels[k] !== v) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  const fields = { 'metadata.name': node.name };
  return (required.nodeSelectorTerms ?? []).some((term) => {
    const exprs = term.matchExpressions ?? [];
    const flds = term.matchFields ?? [];
    if (exprs.length === 0 && flds.length === 0) return false;
    return (
      exprs.every((e) => matchRequirement(e, node.labels)) &&
      flds.every((f) => f.key === 'metadata.name' && matchRequirement(f, fields))
    );
  });
}

/** The amounts of one resource that did not fit. */
interface Shortfall {
  requested: number;
  used: number;
  capacity: number;
}

const insufficient = (name: string, reason: string, { requested, used, capacity }: Shortfall): AdmitResult => ({
  admit: false,
  reason,
  message: `Node didn't have enough resource: ${name}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
});

/** noderesources.Fits on the scalar resources hugepages-*: a size the host lacks has 0 allocatable ("OutOfhugepages-2Mi"). */
function hugePagesShortfall(pod: Pod, activePods: readonly Pod[], node: NodeInfo): AdmitResult | undefined {
  const want = podHugePages(pod);
  for (const [name, requested] of Object.entries(want)) {
    if (requested <= 0) continue;
    const used = activePods.reduce((sum, p) => sum + (podHugePages(p)[name] ?? 0), 0);
    const capacity = node.allocatable.hugePages[name] ?? 0;
    if (requested > capacity - used) return insufficient(name, `OutOf${name}`, { requested, used, capacity });
  }
  return undefined;
}

type Amounts = Record<string, number>;

/** A container's extended resources: requests, or limits where no request is given (API defaulting). */
function containerExtended(c: { resources?: { requests?: object; limits?: object } | null }): Amounts {
  const limits = (c.resources?.limits ?? {}) as Record<string, string | number>;
  const requests = (c.resources?.requests ?? {}) as Record<string, string | number>;
  const out: Amounts = {};
  for (const name of new Set([...Object.keys(limits), ...Object.keys(requests)])) {
    if (!isExtendedResourceName(name)) continue;
    const q = tryParseQuantity(requests[name] ?? limits[name] ?? 0) ?? 0;
    if (q > 0) out[name] = Math.ceil(q);
  }
  return out;
}

const plus = (a: Amounts, b: Amounts): Amounts => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};

/**
 * upstream resource.PodRequests on the extended resources: the containers plus the sidecars, or
 * the largest init step (an init container beside the sidecars started before it) if larger.
 */
export function podExtendedRequests(pod: Pod): Amounts {
  let sidecars: Amounts = {};
  const maxInit: Amounts = {};
  for (const c of pod.spec?.initContainers ?? []) {
    const own = containerExtended(c);
    const step = isRestartableInitContainer(c) ? (sidecars = plus(sidecars, own)) : plus(own, sidecars);
    for (const [k, v] of Object.entries(step)) maxInit[k] = Math.max(maxInit[k] ?? 0, v);
  }
  const reqs = plus((pod.spec?.containers ?? []).map(containerExtended).reduce(plus, {}), sidecars);
  for (const [k, v] of Object.entries(maxInit)) reqs[k] = Math.max(reqs[k] ?? 0, v);
  return reqs;
}

/** noderesources.Fits on the extended resources, names in order; absent from allocatable: 0. */
function extendedShortfall(
  pod: Pod,
  activePods: readonly Pod[],
  allocatable: Readonly<Amounts>,
): AdmitResult | undefined {
  const want = podExtendedRequests(pod);
  for (const name of Object.keys(want).sort()) {
    const requested = want[name]!;
    const used = activePods.reduce((sum, p) => sum + (podExtendedRequests(p)[name] ?? 0), 0);
    const capacity = allocatable[name] ?? 0;
    if (requested > capacity - used) return insufficient(name, `OutOf${name}`, { requested, used, capacity });
  }
  return undefined;
}

const predicateFailure = (name: string, desc: string): AdmitResult => ({
  admit: false,
  reason: name,
  message: `Predicate ${name} failed: ${desc}`,
});

/** The product name in refusal messages, so a user knows which kubelet says no. */
const NODE_AGENT = 'kubelet-ts';

/**
 * A pod field this node does not act on, set to something that asks for action (pod-fields.ts):
 * rejected, naming the field, rather than started without it.
 */
export function admitPodFields(pod: Pod, ctx: PodFieldContext = {}): AdmitResult {
  const refusal = podFieldRefusal(pod, ctx);
  if (!refusal) return { admit: true };
  return { admit: false, reason: AdmissionReason.PodFeatureUnsupported, message: refusalMessage(refusal) };
}

/**
 * upstream rejectPodAdmissionBasedOnSupplementalGroupsPolicy (the gate is GA in 1.35): a pod that
 * asks for Strict is refused where the node cannot promise it, rather than run with Merge.
 */
export function admitSupplementalGroupsPolicy(pod: Pod, node: Pick<NodeInfo, 'features'>): AdmitResult {
  const policy = pod.spec?.securityContext?.supplementalGroupsPolicy;
  if (policy !== 'Strict' || node.features?.supplementalGroupsPolicy === true) return { admit: true };
  return {
    admit: false,
    reason: AdmissionReason.SupplementalGroupsPolicyNotSupported,
    message: 'SupplementalGroupsPolicy=Strict is not supported in this node',
  };
}

function refusalMessage(refusal: FieldRefusal): string {
  return `${refusal.path} is not supported by this node (${NODE_AGENT}): ${refusal.rule.why}`;
}

/**
 * Why ephemeral container `index` of `pod` cannot run here, or undefined. Ephemeral containers
 * come by pod update, after admission: the runtime asks before starting one, and a refused one
 * waits with this message (CreateContainerConfigError) while the pod runs on.
 */
export function ephemeralContainerRefusalMessage(pod: Pod, index: number): string | undefined {
  const refusal = ephemeralContainerRefusal(pod, index);
  return refusal ? refusalMessage(refusal) : undefined;
}

export interface AdmitOptions {
  /** The safe sysctls plus allowedUnsafeSysctls; default: the safe ones. */
  sysctls?: SysctlAllowlist;
  /** API server mode: PVC, generic ephemeral and csi volumes are served (standalone: refused). */
  apiServer?: boolean;
  /**
   * The node's extended resources allocatable (device-admission.ts, sanitized for this pod);
   * absent: extended resources are not checked (unit tests of other checks).
   */
  extendedAllocatable?: Readonly<Record<string, number>>;
}

/**
 * canAdmitPod: may `pod` run on `node` beside `activePods` (admitted, not terminal, not yet
 * known terminated; `pod` itself excluded)?
 */
export function canAdmitPod(
  pod: Pod,
  activePods: readonly Pod[],
  node: NodeInfo,
  opts: AdmitOptions = {},
): AdmitResult {
  // upstream registers the sysctl allowlist handler before the predicate one.
  const sysctls = admitSysctls(pod, opts.sysctls);
  if (!sysctls.admit) return sysctls;
  const podOS = pod.metadata?.labels?.['kubernetes.io/os'];
  if (podOS !== undefined && podOS !== (node.labels['kubernetes.io/os'] ?? 'linux')) {
    return {
      admit: false,
      reason: AdmissionReason.PodOSSelectorNodeLabelDoesNotMatch,
      message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    };
  }
  const osName = pod.spec?.os?.name;
  if (osName !== undefined && osName !== null && osName !== 'linux') {
    return {
      admit: false,
      reason: AdmissionReason.PodOSNotSupported,
      message: "Failed to admit pod as the OS field doesn't match node OS",
    };
  }
  const groupsPolicy = admitSupplementalGroupsPolicy(pod, node);
  if (!groupsPolicy.admit) return groupsPolicy;
  const fields = admitPodFields(pod, { apiServer: opts.apiServer });
  if (!fields.admit) return fields;

  // noderesources.Fits: the pod count first, then (if the pod requests anything) cpu and memory.
  if (activePods.length + 1 > node.allocatable.pods) {
    return insufficient('pods', AdmissionReason.OutOfPods, {
      requested: 1,
      used: activePods.length,
      capacity: node.allocatable.pods,
    });
  }
  const want = requestsOf(pod);
  if (want.cpu > 0 || want.memory > 0) {
    const used = activePods.map(requestsOf).reduce(add, { cpu: 0, memory: 0 });
    if (want.cpu > 0 && want.cpu > node.allocatable.milliCPU - used.cpu) {
      return insufficient('cpu', AdmissionReason.OutOfCPU, {
        requested: want.cpu,
        used: used.cpu,
        capacity: node.allocatable.milliCPU,
      });
    }
    if (want.memory > 0 && want.memory > node.allocatable.memory - used.memory) {
      return insufficient('memory', AdmissionReason.OutOfMemory, {
        requested: want.memory,
        used: used.memory,
        capacity: node.allocatable.memory,
      });
    }
  }
  const hugePages = hugePagesShortfall(pod, activePods, node);
  if (hugePages) return hugePages;
  const extended = opts.extendedAllocatable && extendedShortfall(pod, activePods, opts.extendedAllocatable);
  if (extended) return extended;

  if (!matchesNodeAffinity(pod, node)) return predicateFailure(AdmissionReason.NodeAffinity, ErrReasonNodeAffinity);
  const nodeName = pod.spec?.nodeName;
  if (nodeName && nodeName !== node.name) return predicateFailure(AdmissionReason.NodeName, ErrReasonNodeName);
  const usedPorts = activePods.flatMap(hostPorts);
  if (hostPorts(pod).some((p) => portConflicts(p, usedPorts)))
    return predicateFailure(AdmissionReason.NodePorts, ErrReasonNodePorts);
  return { admit: true };
}
