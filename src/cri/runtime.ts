/**
 * RemoteRuntimeService: runtime.v1.RuntimeService over gRPC, with upstream kubelet's deadlines
 * (remote_runtime.go): the runtime request timeout on every call, twice that for RunPodSandbox,
 * StopContainer extended by its grace period, ExecSync extended by the command's timeout. Replies
 * are checked the way upstream checks them (verifySandboxStatus, verifyContainerStatus, Version).
 */
import type { ClientReadableStream } from '@grpc/grpc-js';
import { CriChannel, DEFAULT_TIMEOUT_MS } from './channel.js';
import {
  containerEventFromWire,
  containerFromWire,
  containerStatsFromWire,
  containerStatusFromWire,
  podSandboxFromWire,
  podSandboxStatusFromWire,
  runtimeStatusFromWire,
  toBigInt,
  toWire,
  versionFromWire,
} from './convert.js';
import { CdiSupportCache, type CdiSupport } from './cdi.js';
import { criErrorFrom, replyError } from './errors.js';
import { metrics } from '../metrics/index.js';
import { RUNTIME_SERVICE } from './proto.js';
import { runtimeConfigFromWire, type RuntimeConfigInfo } from './runtime-config.js';
import type {
  CallOptions,
  Container,
  ContainerConfig,
  ContainerEvent,
  ContainerFilter,
  ContainerStats,
  ContainerStatsFilter,
  ContainerStatus,
  ExecSyncResponse,
  LinuxContainerResources,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStatus,
  RuntimeService,
  RuntimeStatus,
  VersionResponse,
} from './types.js';
import type { CriError } from '../errors.js';

/** The CRI API version kubelet sends in VersionRequest (upstream kubeRuntimeAPIVersion). */
export const KUBE_RUNTIME_API_VERSION = '0.1.0';

export interface CriClientOptions {
  /** The runtime request timeout (upstream --runtime-request-timeout), default 2 minutes. */
  timeoutMs?: number;
  /** Deadline of PullImage, default 10 minutes (upstream has none; we bound every call). */
  pullTimeoutMs?: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- proto-loader's messages are untyped; Wire is where they enter
type Wire = any;

function containerFilterToWire(f: ContainerFilter | undefined): object {
  if (!f) return {};
  const out: Record<string, unknown> = {};
  if (f.id) out.id = f.id;
  if (f.state) out.state = { state: f.state };
  if (f.podSandboxId) out.podSandboxId = f.podSandboxId;
  if (f.labelSelector) out.labelSelector = f.labelSelector;
  return out;
}

function sandboxFilterToWire(f: PodSandboxFilter | undefined): object {
  if (!f) return {};
  const out: Record<string, unknown> = {};
  if (f.id) out.id = f.id;
  if (f.state) out.state = { state: f.state };
  if (f.labelSelector) out.labelSelector = f.labelSelector;
  return out;
}

function verifySandboxStatus(method: string, s: Wire): void {
  if (!s) throw replyError(method, 'status is not set');
  if (!s.id) throw replyError(method, 'status.id is not set');
  const m = s.metadata;
  if (!m) throw replyError(method, 'status.metadata is not set');
  if (!m.name || !m.namespace || !m.uid) {
    throw replyError(
      method,
      `metadata.name, metadata.namespace or metadata.uid is not in metadata ${JSON.stringify(m)}`,
    );
  }
  if (toBigInt(s.createdAt) === 0n) throw replyError(method, 'status.createdAt is not set');
}

function verifyContainerStatus(method: string, s: Wire): void {
  if (!s) throw replyError(method, 'status is not set');
  if (!s.id) throw replyError(method, 'status.id is not set');
  if (!s.metadata) throw replyError(method, 'status.metadata is not set');
  if (!s.metadata.name) throw replyError(method, `metadata.name is not in metadata ${JSON.stringify(s.metadata)}`);
  if (toBigInt(s.createdAt) === 0n) throw replyError(method, 'status.createdAt is not set');
  if (!s.image?.image) throw replyError(method, 'status.image is not set');
  if (!s.imageRef) throw replyError(method, 'status.imageRef is not set');
}

export class RemoteRuntimeService implements RuntimeService {
  readonly timeoutMs: number;
  private readonly channel: CriChannel;
  /** Status(verbose)'s CDI answer, shared by every withSignal view. */
  private readonly cdi = new CdiSupportCache(() => this.statusInfo());
  /** Set on a view made by withSignal. */
  private signal: AbortSignal | undefined;

  constructor(endpoint: string, opts: CriClientOptions = {}) {
    this.timeoutMs = opts.timeoutMs && opts.timeoutMs > 0 ? opts.timeoutMs : DEFAULT_TIMEOUT_MS;
    this.channel = new CriChannel(endpoint, RUNTIME_SERVICE);
  }

  /**
   * This client bound to `signal`: its calls are cancelled when the signal fires (a pod sync's
   * calls, when a kill arrives). A view sharing this client's channel, nothing is opened.
   */
  withSignal(signal: AbortSignal): this {
    const view = Object.create(this) as this;
    view.signal = signal;
    return view;
  }

  /** The gRPC target in use (unix:///...). */
  get target(): string {
    return this.channel.target;
  }

  private call<T = Wire>(method: string, request: object, timeoutMs: number = this.timeoutMs): Promise<T> {
    return this.channel.unary<T>(method, toWire(request), timeoutMs, this.signal);
  }

  async version(opts?: CallOptions): Promise<VersionResponse> {
    const r = await this.call('Version', { version: KUBE_RUNTIME_API_VERSION }, opts?.timeoutMs);
    const v = versionFromWire(r);
    if (!v.version || !v.runtimeName || !v.runtimeVersion || !v.runtimeApiVersion) {
      throw replyError('Version', `not all fields are set in VersionResponse (${JSON.stringify(v)})`);
    }
    return v;
  }

  async status(opts?: CallOptions): Promise<RuntimeStatus> {
    const r = await this.call('Status', { verbose: false }, opts?.timeoutMs);
    if (!r?.status) throw replyError('Status', 'status is not set');
    return runtimeStatusFromWire(r.status, r);
  }

  /** Status(verbose)'s `info` map (containerd: its CRI config as JSON under `config`, the CNI state). */
  async statusInfo(opts?: CallOptions): Promise<Record<string, string>> {
    const r = await this.call('Status', { verbose: true }, opts?.timeoutMs);
    if (!r?.status) throw replyError('Status', 'status is not set');
    return { ...(r.info ?? {}) } as Record<string, string>;
  }

  /** Whether the runtime applies CRI CDI_devices, and its spec dirs (cdi.ts); kept for a minute. */
  cdiSupport(): Promise<CdiSupport> {
    return this.cdi.get();
  }

  async cdiSupported(): Promise<boolean> {
    return (await this.cdi.get()).enabled;
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = ''): Promise<string> {
    // Upstream: "Use 2 times longer timeout for sandbox operation".
    const started = Date.now();
    let r: Wire;
    try {
      r = await this.call('RunPodSandbox', { config, runtimeHandler }, this.timeoutMs * 2);
    } catch (err) {
      metrics.runPodSandboxErrors.inc({ runtime_handler: runtimeHandler });
      throw err;
    } finally {
      // upstream RunPodSandboxDuration, by RuntimeClass handler ("" for the default one).
      metrics.runPodSandboxDuration.observe({ runtime_handler: runtimeHandler }, (Date.now() - started) / 1000);
    }
    if (!r?.podSandboxId)
      throw replyError('RunPodSandbox', `podSandboxId is not set for sandbox ${JSON.stringify(config.metadata)}`);
    return r.podSandboxId as string;
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    await this.call('StopPodSandbox', { podSandboxId });
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    await this.call('RemovePodSandbox', { podSandboxId });
  }

  async podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    const r = await this.call('PodSandboxStatus', { podSandboxId, verbose: false });
    verifySandboxStatus('PodSandboxStatus', r?.status);
    return podSandboxStatusFromWire(r.status);
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    const r = await this.call('ListPodSandbox', { filter: sandboxFilterToWire(filter) });
    return (r?.items ?? []).map(podSandboxFromWire);
  }

  /** ListPodSandbox, the serialized ListPodSandboxResponse undecoded (for a skim decoder). */
  listPodSandboxRaw(filter?: PodSandboxFilter): Promise<Buffer> {
    return this.channel.unaryRaw(
      'ListPodSandbox',
      { filter: sandboxFilterToWire(filter) },
      this.timeoutMs,
      this.signal,
    );
  }

  async createContainer(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
  ): Promise<string> {
    const r = await this.call('CreateContainer', { podSandboxId, config, sandboxConfig });
    if (!r?.containerId)
      throw replyError('CreateContainer', `containerId is not set for container ${JSON.stringify(config.metadata)}`);
    return r.containerId as string;
  }

  async startContainer(containerId: string): Promise<void> {
    await this.call('StartContainer', { containerId });
  }

  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    const grace = Math.max(0, Math.trunc(timeoutSeconds));
    // Upstream: "Use timeout + default timeout (2 minutes) as timeout to leave extra time for
    // SIGKILL container and request latency."
    await this.call('StopContainer', { containerId, timeout: grace }, this.timeoutMs + grace * 1000);
  }

  async removeContainer(containerId: string): Promise<void> {
    await this.call('RemoveContainer', { containerId });
  }

  async listContainers(filter?: ContainerFilter): Promise<Container[]> {
    const r = await this.call('ListContainers', { filter: containerFilterToWire(filter) });
    return (r?.containers ?? []).map(containerFromWire);
  }

  /** ListContainers, the serialized ListContainersResponse undecoded (for a skim decoder). */
  listContainersRaw(filter?: ContainerFilter): Promise<Buffer> {
    return this.channel.unaryRaw(
      'ListContainers',
      { filter: containerFilterToWire(filter) },
      this.timeoutMs,
      this.signal,
    );
  }

  async containerStatus(containerId: string): Promise<ContainerStatus> {
    const r = await this.call('ContainerStatus', { containerId, verbose: false });
    verifyContainerStatus('ContainerStatus', r?.status);
    return containerStatusFromWire(r.status);
  }

  async updateContainerResources(containerId: string, linux: LinuxContainerResources): Promise<void> {
    await this.call('UpdateContainerResources', { containerId, linux });
  }

  async reopenContainerLog(containerId: string): Promise<void> {
    await this.call('ReopenContainerLog', { containerId });
  }

  /**
   * Runs cmd in the container and waits for it. timeoutSeconds (0 = no limit asked of the runtime)
   * is passed to the runtime; the call deadline is the request timeout plus that.
   */
  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    const t = Math.max(0, Math.trunc(timeoutSeconds));
    const r = await this.call('ExecSync', { containerId, cmd, timeout: t }, this.timeoutMs + t * 1000);
    return {
      stdout: Buffer.from(r?.stdout ?? []),
      stderr: Buffer.from(r?.stderr ?? []),
      exitCode: Number(r?.exitCode ?? 0),
    };
  }

  /** The streaming-server URL for an exec session (kubectl exec). */
  async exec(req: {
    containerId: string;
    cmd: string[];
    tty?: boolean;
    stdin?: boolean;
    stdout?: boolean;
    stderr?: boolean;
  }): Promise<string> {
    const r = await this.call('Exec', req);
    if (!r?.url) throw replyError('Exec', 'url is not set');
    return r.url as string;
  }

  /** The streaming-server URL for an attach session. */
  async attach(req: {
    containerId: string;
    stdin?: boolean;
    tty?: boolean;
    stdout?: boolean;
    stderr?: boolean;
  }): Promise<string> {
    const r = await this.call('Attach', req);
    if (!r?.url) throw replyError('Attach', 'url is not set');
    return r.url as string;
  }

  /** The streaming-server URL for a port-forward session. */
  async portForward(podSandboxId: string, ports: number[]): Promise<string> {
    const r = await this.call('PortForward', { podSandboxId, port: ports });
    if (!r?.url) throw replyError('PortForward', 'url is not set');
    return r.url as string;
  }

  async containerStats(containerId: string): Promise<ContainerStats> {
    const r = await this.call('ContainerStats', { containerId });
    if (!r?.stats) throw replyError('ContainerStats', 'stats is not set');
    return containerStatsFromWire(r.stats);
  }

  async listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]> {
    const r = await this.call('ListContainerStats', { filter: filter ?? {} });
    return (r?.stats ?? []).map(containerStatsFromWire);
  }

  /**
   * RuntimeConfig: the runtime's cgroup driver (containerd 2.x). containerd 1.6/1.7 answer
   * UNIMPLEMENTED (a CriError with code KTS_ERR_CRI_UNIMPLEMENTED).
   */
  async runtimeConfig(): Promise<RuntimeConfigInfo> {
    return runtimeConfigFromWire(await this.channel.unaryRaw('RuntimeConfig', {}, this.timeoutMs, this.signal));
  }

  async updateRuntimeConfig(podCidr: string): Promise<void> {
    await this.call('UpdateRuntimeConfig', { runtimeConfig: { networkConfig: { podCidr } } });
  }

  /**
   * Subscribes to GetContainerEvents (no deadline: it is a long-lived stream). onError gets a
   * CriError once, when the stream fails (KTS_ERR_CRI_UNIMPLEMENTED on containerd 1.6); it is not
   * called after cancel().
   */
  getContainerEvents(onEvent: (e: ContainerEvent) => void, onError: (err: CriError) => void): { cancel(): void } {
    let cancelled = false;
    let stream: ClientReadableStream<Wire>;
    try {
      stream = this.channel.serverStream<Wire>('GetContainerEvents', {});
    } catch (err) {
      queueMicrotask(() => onError(criErrorFrom('GetContainerEvents', err)));
      return { cancel() {} };
    }
    stream.on('data', (w: Wire) => {
      if (!cancelled) onEvent(containerEventFromWire(w));
    });
    stream.on('error', (err: unknown) => {
      if (!cancelled) onError(criErrorFrom('GetContainerEvents', err));
    });
    return {
      cancel() {
        cancelled = true;
        stream.cancel();
      },
    };
  }

  close(): void {
    this.channel.close();
  }
}
