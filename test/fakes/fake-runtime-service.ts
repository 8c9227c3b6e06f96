/**
 * An in-memory CRI runtime for unit tests: sandboxes, containers and images with the state
 * transitions of a real runtime (created → running → exited), label-selector filtering, a call
 * log, and injected failures. Tests drive container exits with `exitContainer`.
 */
import type {
  AuthConfig,
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerState,
  ContainerStatus,
  ExecSyncResponse,
  FilesystemUsage,
  Image,
  ImageService,
  LinuxContainerResources,
  Labels,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStatus,
  RuntimeService,
  RuntimeStatus,
  VersionResponse,
} from '../../src/cri/types.js';
import { CriError } from '../../src/errors.js';

export interface FakeSandbox {
  id: string;
  config: PodSandboxConfig;
  state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  createdAt: bigint;
  ip: string;
  /** RunPodSandboxRequest.runtime_handler ('' = default). */
  runtimeHandler: string;
}

export interface FakeContainer {
  id: string;
  podSandboxId: string;
  config: ContainerConfig;
  state: ContainerState;
  createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  /** The grace period of the last StopContainer call. */
  stoppedWithGrace?: number;
}

function matches(labels: Labels, selector: Labels | undefined): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

export function notFound(method: string, what: string): CriError {
  return new CriError('KTS_ERR_CRI_NOT_FOUND', method, `${what} not found`, { grpcCode: 5 });
}

export class FakeRuntimeService implements RuntimeService, ImageService {
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly containers = new Map<string, FakeContainer>();
  readonly images = new Map<string, Image>();
  readonly calls: string[] = [];
  /** Every StopContainer call, in order. */
  readonly stopped: Array<{ id: string; name: string; grace: number }> = [];
  /** Errors thrown by the next call(s) of a method: method → queue. */
  private readonly failures = new Map<string, Error[]>();
  /** Errors thrown by every call of a method until cleared. */
  readonly alwaysFail = new Map<string, Error>();
  private seq = 0;
  /** Fake time in ns; advances by 1 ms per created object so ordering is strict. */
  nowNs = 1_700_000_000_000_000_000n;
  private nextIp = 2;

  addImage(name: string, id = `sha256:${name.replace(/[^a-z0-9]/gi, '').padEnd(12, '0')}`): void {
    this.images.set(name, { id, repoTags: [name], repoDigests: [], size: 1n, pinned: false });
  }

  failNext(method: string, err: Error): void {
    let q = this.failures.get(method);
    if (!q) this.failures.set(method, (q = []));
    q.push(err);
  }

  private call(method: string): void {
    this.calls.push(method);
    const always = this.alwaysFail.get(method);
    if (always) throw always;
    const err = this.failures.get(method)?.shift();
    if (err) throw err;
  }

  private tick(): bigint {
    this.nowNs += 1_000_000n;
    return this.nowNs;
  }

  private id(prefix: string): string {
    return `${prefix}${(++this.seq).toString().padStart(4, '0')}`;
  }

  // --- test controls ---

  exitContainer(id: string, exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error'): void {
    const c = this.containers.get(id);
    if (!c) throw new Error(`no container ${id}`);
    c.state = 'CONTAINER_EXITED';
    c.exitCode = exitCode;
    c.reason = reason;
    c.finishedAt = this.tick();
  }

  containersNamed(name: string): FakeContainer[] {
    return [...this.containers.values()]
      .filter((c) => c.config.metadata.name === name)
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  }

  // --- RuntimeService ---

  async version(): Promise<VersionResponse> {
    this.call('version');
    return { version: '0.1.0', runtimeName: 'fake', runtimeVersion: '1.0.0', runtimeApiVersion: 'v1' };
  }

  async status(): Promise<RuntimeStatus> {
    this.call('status');
    return {
      conditions: [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: true, reason: '', message: '' },
      ],
      handlers: [],
    };
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = ''): Promise<string> {
    this.call('runPodSandbox');
    const id = this.id('sb');
    const hostNetwork = config.linux.securityContext.namespaceOptions.network === 'NODE';
    this.sandboxes.set(id, {
      id,
      config,
      state: 'SANDBOX_READY',
      createdAt: this.tick(),
      ip: hostNetwork ? '' : `10.0.0.${this.nextIp++}`,
      runtimeHandler,
    });
    return id;
  }

  async stopPodSandbox(id: string): Promise<void> {
    this.call('stopPodSandbox');
    const s = this.sandboxes.get(id);
    if (!s) throw notFound('StopPodSandbox', `sandbox ${id}`);
    for (const c of this.containers.values()) {
      if (c.podSandboxId === id && c.state === 'CONTAINER_RUNNING') this.exitContainer(c.id, 137);
    }
    s.state = 'SANDBOX_NOTREADY';
  }

  async removePodSandbox(id: string): Promise<void> {
    this.call('removePodSandbox');
    if (!this.sandboxes.delete(id)) throw notFound('RemovePodSandbox', `sandbox ${id}`);
    for (const c of [...this.containers.values()]) if (c.podSandboxId === id) this.containers.delete(c.id);
  }

  async podSandboxStatus(id: string): Promise<PodSandboxStatus> {
    this.call('podSandboxStatus');
    const s = this.sandboxes.get(id);
    if (!s) throw notFound('PodSandboxStatus', `sandbox ${id}`);
    return {
      id,
      metadata: s.config.metadata,
      state: s.state,
      createdAt: s.createdAt,
      network: { ip: s.ip, additionalIps: [] },
      networkNamespaceMode: s.config.linux.securityContext.namespaceOptions.network,
      labels: s.config.labels,
      annotations: s.config.annotations,
    };
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    this.call('listPodSandbox');
    return [...this.sandboxes.values()]
      .filter(
        (s) =>
          (!filter?.id || s.id === filter.id) &&
          (!filter?.state || s.state === filter.state) &&
          matches(s.config.labels, filter?.labelSelector),
      )
      .map((s) => ({
        id: s.id,
        metadata: s.config.metadata,
        state: s.state,
        createdAt: s.createdAt,
        labels: s.config.labels,
        annotations: s.config.annotations,
        runtimeHandler: s.runtimeHandler,
      }));
  }

  async createContainer(
    podSandboxId: string,
    config: ContainerConfig,
    _sandboxConfig: PodSandboxConfig,
  ): Promise<string> {
    this.call('createContainer');
    if (!this.sandboxes.has(podSandboxId)) throw notFound('CreateContainer', `sandbox ${podSandboxId}`);
    const id = this.id('ctr');
    this.containers.set(id, {
      id,
      podSandboxId,
      config,
      state: 'CONTAINER_CREATED',
      createdAt: this.tick(),
      startedAt: 0n,
      finishedAt: 0n,
      exitCode: 0,
      reason: '',
    });
    return id;
  }

  async startContainer(id: string): Promise<void> {
    this.call('startContainer');
    const c = this.containers.get(id);
    if (!c) throw notFound('StartContainer', `container ${id}`);
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = this.tick();
  }

  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    this.call('stopContainer');
    const c = this.containers.get(id);
    if (!c) throw notFound('StopContainer', `container ${id}`);
    c.stoppedWithGrace = timeoutSeconds;
    this.stopped.push({ id, grace: timeoutSeconds, name: c.config.metadata.name });
    if (c.state === 'CONTAINER_RUNNING') this.exitContainer(id, 137);
  }

  async removeContainer(id: string): Promise<void> {
    this.call('removeContainer');
    if (!this.containers.delete(id)) throw notFound('RemoveContainer', `container ${id}`);
  }

  private toContainer(c: FakeContainer): Container {
    const image = c.config.image.image;
    return {
      id: c.id,
      podSandboxId: c.podSandboxId,
      metadata: c.config.metadata,
      image,
      imageRef: image,
      state: c.state,
      createdAt: c.createdAt,
      labels: c.config.labels,
      annotations: c.config.annotations,
    };
  }

  async listContainers(filter?: ContainerFilter): Promise<Container[]> {
    this.call('listContainers');
    return [...this.containers.values()]
      .filter(
        (c) =>
          (!filter?.id || c.id === filter.id) &&
          (!filter?.state || c.state === filter.state) &&
          (!filter?.podSandboxId || c.podSandboxId === filter.podSandboxId) &&
          matches(c.config.labels, filter?.labelSelector),
      )
      .map((c) => this.toContainer(c));
  }

  /** UpdateContainerResources calls, in order. */
  readonly resourceUpdates: { id: string; linux: LinuxContainerResources }[] = [];

  async updateContainerResources(id: string, linux: LinuxContainerResources): Promise<void> {
    this.call('updateContainerResources');
    if (!this.containers.has(id)) throw notFound('UpdateContainerResources', `container ${id}`);
    this.resourceUpdates.push({ id, linux });
  }

  async containerStatus(id: string): Promise<ContainerStatus> {
    this.call('containerStatus');
    const c = this.containers.get(id);
    if (!c) throw notFound('ContainerStatus', `container ${id}`);
    const base = this.toContainer(c);
    return {
      id,
      metadata: base.metadata,
      state: c.state,
      createdAt: c.createdAt,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      exitCode: c.exitCode,
      image: base.image,
      imageRef: base.imageRef,
      reason: c.reason,
      message: '',
      labels: c.config.labels,
      annotations: c.config.annotations,
      logPath: '',
      // As containerd: the mounts the container was created with.
      mounts: c.config.mounts,
    };
  }

  /** Every ExecSync call (container ID, command, timeout). */
  readonly execs: Array<{ id: string; cmd: string[]; timeout: number }> = [];
  /** What ExecSync does; default: exit 0 with no output. */
  execHandler?: (id: string, cmd: string[], timeout: number) => Promise<ExecSyncResponse>;

  async execSync(id: string, cmd: string[], timeout: number): Promise<ExecSyncResponse> {
    this.call('execSync');
    this.execs.push({ id, cmd, timeout });
    if (!this.containers.has(id)) throw notFound('ExecSync', `container ${id}`);
    if (this.execHandler) return this.execHandler(id, cmd, timeout);
    return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 };
  }

  // --- ImageService ---

  async listImages(): Promise<Image[]> {
    this.call('listImages');
    return [...this.images.values()];
  }

  async imageStatus(image: string): Promise<Image | undefined> {
    this.call('imageStatus');
    return this.images.get(image);
  }

  async pullImage(image: string, _auth?: AuthConfig, _sandboxConfig?: PodSandboxConfig): Promise<string> {
    this.call('pullImage');
    if (!this.images.has(image)) this.addImage(image);
    return this.images.get(image)!.id;
  }

  async removeImage(image: string): Promise<void> {
    this.call('removeImage');
    this.images.delete(image);
  }

  async imageFsInfo(): Promise<FilesystemUsage[]> {
    this.call('imageFsInfo');
    return [];
  }

  close(): void {}
}
