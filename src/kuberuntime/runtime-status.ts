/**
 * What the runtime holds, read back through labels: getPods (upstream GetPods) and getPodStatus
 * (upstream GetPodStatus), plus the CRI → runtime type conversions. Sandboxes and containers
 * without our labels are someone else's and are skipped; a NOT_FOUND between a list and a status
 * call means the object was removed meanwhile and is skipped too.
 */
import type {
  Container as CriContainer,
  ContainerState,
  ContainerStatus as CriContainerStatus,
  PodSandbox,
  PodSandboxStatus,
  RuntimeService,
} from '../cri/types.js';
import { log } from '../util/log.js';
import { isNotFound } from '../cri/errors.js';
import {
  KubernetesPodUIDLabel,
  getContainerInfoFromAnnotations,
  getContainerInfoFromLabels,
  getPodSandboxInfoFromLabels,
  type AnnotatedContainerInfo,
} from './labels.js';
import type {
  ContainerRuntimeStatus,
  PodRuntimeStatus,
  PreviousPodStatus,
  RunningPod,
  RuntimeContainer,
  RuntimeContainerState,
  RuntimeExitReport,
  RuntimeSandbox,
  SandboxRuntimeStatus,
} from './types.js';
import { terminationMessage } from './termination-message.js';

function toRuntimeState(state: ContainerState): RuntimeContainerState {
  switch (state) {
    case 'CONTAINER_CREATED':
      return 'created';
    case 'CONTAINER_RUNNING':
      return 'running';
    case 'CONTAINER_EXITED':
      return 'exited';
    default:
      return 'unknown';
  }
}

/** Annotations parsed with their problems logged once per read (never thrown). */
function annotated(id: string, annotations: Record<string, string> | undefined): AnnotatedContainerInfo {
  const { info, errors } = getContainerInfoFromAnnotations(annotations);
  if (errors.length > 0)
    log('kuberuntime').warn({ containerId: id, errors }, 'container has malformed annotations; using defaults');
  return info;
}

/** undefined for a container without our labels. */
function toRuntimeContainer(c: CriContainer): RuntimeContainer | undefined {
  const labeled = getContainerInfoFromLabels(c.labels);
  if (!labeled) return undefined;
  const info = annotated(c.id, c.annotations);
  const rc: RuntimeContainer = {
    id: c.id,
    name: labeled.containerName,
    image: c.image,
    imageRef: c.imageRef,
    hash: info.hash,
    state: toRuntimeState(c.state),
    createdAt: c.createdAt,
    podSandboxId: c.podSandboxId,
  };
  const grace = info.podDeletionGracePeriod ?? info.podTerminationGracePeriod;
  if (grace !== undefined) rc.terminationGracePeriodSeconds = grace;
  return rc;
}

function toRuntimeSandbox(s: PodSandbox): RuntimeSandbox {
  return { id: s.id, ready: s.state === 'SANDBOX_READY', attempt: s.metadata?.attempt ?? 0, createdAt: s.createdAt };
}

function nsToDate(ns: bigint): Date {
  return new Date(Number(ns / 1_000_000n));
}

/** undefined for a container without our labels. */
function toContainerRuntimeStatus(s: CriContainerStatus, podSandboxId: string): ContainerRuntimeStatus | undefined {
  const labeled = getContainerInfoFromLabels(s.labels);
  if (!labeled) return undefined;
  const info = annotated(s.id, s.annotations);
  const state = toRuntimeState(s.state);
  const out: ContainerRuntimeStatus = {
    id: s.id,
    name: labeled.containerName,
    state,
    createdAt: nsToDate(s.createdAt),
    exitCode: 0,
    image: s.image,
    imageRef: s.imageRef,
    restartCount: info.restartCount,
    reason: '',
    message: '',
    hash: info.hash,
    podSandboxId,
  };
  // Only a container that was started has a start time, only an exited one an exit.
  if (state !== 'created' && s.startedAt > 0n) out.startedAt = nsToDate(s.startedAt);
  if (state === 'exited') {
    out.exitCode = s.exitCode;
    out.reason = s.reason;
    out.message = s.message;
    if (s.finishedAt > 0n) out.finishedAt = nsToDate(s.finishedAt);
  }
  if (s.resources) out.resources = s.resources;
  if (s.user) out.user = s.user;
  return out;
}

function toSandboxRuntimeStatus(s: PodSandboxStatus): SandboxRuntimeStatus {
  return {
    id: s.id,
    ready: s.state === 'SANDBOX_READY',
    attempt: s.metadata?.attempt ?? 0,
    createdAt: s.createdAt,
    ip: s.network?.ip ?? '',
    additionalIps: s.network?.additionalIps ?? [],
    hostNetwork: s.networkNamespaceMode === 'NODE',
  };
}

function byCreatedDesc<T extends { createdAt: bigint }>(a: T, b: T): number {
  return a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0;
}

/** Pods from sandbox and container labels, newest sandbox first (upstream GetPods). */
export async function getPods(runtime: RuntimeService, all: boolean): Promise<RunningPod[]> {
  const [sandboxes, containers] = await Promise.all([
    runtime.listPodSandbox(all ? undefined : { state: 'SANDBOX_READY' }),
    runtime.listContainers(all ? undefined : { state: 'CONTAINER_RUNNING' }),
  ]);
  const pods = new Map<string, RunningPod & { newest: bigint }>();
  const podFor = (uid: string, name: string, namespace: string) => {
    let p = pods.get(uid);
    if (!p) pods.set(uid, (p = { uid, name, namespace, containers: [], sandboxes: [], newest: 0n }));
    return p;
  };
  for (const s of sandboxes) {
    const info = getPodSandboxInfoFromLabels(s.labels);
    if (!info) continue;
    const p = podFor(
      info.podUid,
      info.podName || s.metadata?.name || '',
      info.podNamespace || s.metadata?.namespace || '',
    );
    p.sandboxes.push(toRuntimeSandbox(s));
    if (s.createdAt > p.newest) p.newest = s.createdAt;
  }
  for (const c of containers) {
    const info = getContainerInfoFromLabels(c.labels);
    const rc = toRuntimeContainer(c);
    if (!info || !rc) continue;
    podFor(info.podUid, info.podName, info.podNamespace).containers.push(rc);
  }
  const list = [...pods.values()].sort((a, b) => (a.newest > b.newest ? -1 : a.newest < b.newest ? 1 : 0));
  return list.map(({ newest: _newest, ...p }) => {
    p.sandboxes.sort(byCreatedDesc);
    p.containers.sort(byCreatedDesc);
    return p;
  });
}

/** Runs fn; NOT_FOUND gives undefined (the object went away after it was listed). */
async function unlessGone<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Everything the runtime knows about one pod (upstream GetPodStatus), newest first. The sandbox
 * and container halves are read concurrently (two round trips instead of upstream's four): this
 * runs for every pod with a PLEG event, between the runtime reporting an exit and the event.
 */
export async function getPodStatus(
  runtime: RuntimeService,
  { uid, name, namespace }: Pick<PodRuntimeStatus, 'uid' | 'name' | 'namespace'>,
  now: () => number,
  previous?: PreviousPodStatus,
): Promise<PodRuntimeStatus> {
  const selector = { labelSelector: { [KubernetesPodUIDLabel]: uid } };
  const [sandboxStatuses, containerStatuses] = await Promise.all([
    podSandboxStatuses(runtime, selector, previous?.sandboxStatuses ?? []),
    podContainerStatuses(runtime, selector, previous?.containerStatuses ?? []),
  ]);
  const ips = podIPs(sandboxStatuses);
  return { uid, name, namespace, ips, sandboxStatuses, containerStatuses, timestamp: new Date(now()) };
}

/** Only the newest sandbox's addresses count, and only while it is ready. */
function podIPs(sandboxStatuses: readonly SandboxRuntimeStatus[]): string[] {
  const newest = sandboxStatuses[0];
  return newest && newest.ready && newest.ip ? [newest.ip, ...newest.additionalIps] : [];
}

/**
 * The pod's last status with the runtime's own report of an exit written in, as upstream's
 * evented PLEG writes a CRI event's statuses to its cache: the PLEG can send ContainerDied the
 * moment the runtime reports the exit, without one more round trip (docs/perf-log.md, issue 30).
 * A report with a sandbox (a CRI event) lists every container of that sandbox, so they replace
 * the ones the status holds for it; one without (ContainerStatus) replaces just its containers.
 * The other sandboxes and their containers stay, so the result keeps the shape getPodStatus
 * gives. undefined: the report names no container the status can hold.
 */
export async function patchPodStatus(
  previous: PodRuntimeStatus,
  report: RuntimeExitReport,
  now: () => number,
): Promise<PodRuntimeStatus | undefined> {
  const sandboxId = report.sandbox?.id;
  const reported: ContainerRuntimeStatus[] = [];
  for (const st of report.containers) {
    const sandbox = sandboxId ?? previous.containerStatuses.find((c) => c.id === st.id)?.podSandboxId;
    const converted = sandbox === undefined ? undefined : toContainerRuntimeStatus(st, sandbox);
    if (!converted) continue;
    if (converted.state === 'exited') await addTerminationMessage(converted, st);
    reported.push(converted);
  }
  if (reported.length === 0) return undefined;
  // Newest first, as getPodStatus orders them: a container the status lacks was created since.
  const byId = new Map(reported.map((c) => [c.id, c]));
  const known = new Set(previous.containerStatuses.map((c) => c.id));
  const added = reported.filter((c) => !known.has(c.id)).sort((a, b) => +b.createdAt - +a.createdAt);
  const containerStatuses = [
    ...added,
    ...previous.containerStatuses.flatMap((c) => byId.get(c.id) ?? (c.podSandboxId === sandboxId ? [] : [c])),
  ];
  const sandboxStatuses = previous.sandboxStatuses.map((s) =>
    report.sandbox && s.id === sandboxId ? toSandboxRuntimeStatus(report.sandbox) : s,
  );
  const ips = podIPs(sandboxStatuses);
  return { ...previous, ips, sandboxStatuses, containerStatuses, timestamp: new Date(now()) };
}

type UidSelector = { labelSelector: Record<string, string> };

/** Status calls started now for `ids`, by id; failures surface only where a listed id awaits them. */
function prefetch<T>(ids: readonly { id: string }[], status: (id: string) => Promise<T>) {
  const early = new Map<string, Promise<T | undefined>>();
  for (const { id } of ids) {
    const p = unlessGone(() => status(id));
    p.catch(() => undefined); // an id no longer listed: its error is nobody's
    early.set(id, p);
  }
  return (id: string) => early.get(id) ?? unlessGone(() => status(id));
}

async function podSandboxStatuses(runtime: RuntimeService, selector: UidSelector, known: readonly { id: string }[]) {
  const statusOf = prefetch(known, (id) => runtime.podSandboxStatus(id));
  const sandboxes = (await runtime.listPodSandbox(selector))
    .filter((s) => getPodSandboxInfoFromLabels(s.labels))
    .sort(byCreatedDesc);
  return (await Promise.all(sandboxes.map((s) => statusOf(s.id))))
    .filter((st): st is PodSandboxStatus => st !== undefined)
    .map(toSandboxRuntimeStatus);
}

async function podContainerStatuses(
  runtime: RuntimeService,
  selector: UidSelector,
  known: readonly { id: string }[],
): Promise<ContainerRuntimeStatus[]> {
  const statusOf = prefetch(known, (id) => runtime.containerStatus(id));
  const containers = (await runtime.listContainers(selector))
    .filter((c) => getContainerInfoFromLabels(c.labels))
    .sort(byCreatedDesc);
  const statuses = await Promise.all(containers.map((c) => statusOf(c.id)));
  const out: ContainerRuntimeStatus[] = [];
  for (const [i, st] of statuses.entries()) {
    const converted = st && toContainerRuntimeStatus(st, containers[i]!.podSandboxId);
    if (!st || !converted) continue;
    if (converted.state === 'exited') await addTerminationMessage(converted, st);
    out.push(converted);
  }
  return out;
}

/** The message file's content or the log tail (termination-message.ts), after the runtime's own message. */
async function addTerminationMessage(out: ContainerRuntimeStatus, st: CriContainerStatus): Promise<void> {
  const { terminationMessagePath, terminationMessagePolicy } = annotated(st.id, st.annotations);
  const message = await terminationMessage({
    ...out,
    logPath: st.logPath,
    terminationMessagePath,
    terminationMessagePolicy,
    mounts: st.mounts ?? [],
  });
  // upstream appends it to the runtime's own message.
  if (message !== '') out.message = out.message === '' ? message : `${out.message}: ${message}`;
}

/**
 * The IPs of the pod's newest sandbox while it is ready (for httpGet hooks without a host); a
 * host-network pod has the node's.
 */
export async function podIPsFromRuntime(
  runtime: RuntimeService,
  uid: string,
  hostIPs: readonly string[],
): Promise<string[]> {
  const sandboxes = (await runtime.listPodSandbox({ labelSelector: { [KubernetesPodUIDLabel]: uid } })).sort(
    byCreatedDesc,
  );
  const newest = sandboxes[0];
  if (!newest || newest.state !== 'SANDBOX_READY') return [];
  const st = await unlessGone(() => runtime.podSandboxStatus(newest.id));
  if (!st) return [];
  if (st.networkNamespaceMode === 'NODE') return [...hostIPs];
  return st.network.ip ? [st.network.ip, ...st.network.additionalIps] : [];
}
