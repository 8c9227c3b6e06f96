/**
 * The pod resources API v1 server (upstream pkg/kubelet/apis/podresources/server_v1.go), on a unix
 * socket the caller names (<root-dir>/pod-resources/kubelet.sock when wired). Monitoring agents
 * ask it which devices each container got:
 * - List: the active pods, each with its restartable init containers and then its containers;
 * - Get: one pod by namespace and name, from all the pods the agent knows (active or not);
 * - GetAllocatableResources: every healthy device.
 * Every call first takes a token from upstream's bucket (100 per second, burst 10); without one
 * it is refused with ResourceExhausted "rejected by rate limit" (podresources/grpc/ratelimit.go).
 */
import * as grpc from '@grpc/grpc-js';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import { isRestartableInitContainer } from '../api/pod.js';
import { TokenBucket } from '../apiclient/rate-limiter.js';
import { PodResourcesError } from '../errors.js';
import type { Clock } from '../util/clock.js';
import { log } from '../util/log.js';
import { podResourcesService } from './proto.js';
import type { ContainerResources, DevicesProvider, PodResources, PodResourcesProviders } from './types.js';

/** Upstream DefaultQPS and DefaultBurstTokens. */
export const DEFAULT_QPS = 100;
export const DEFAULT_BURST_TOKENS = 10;
export const RATE_LIMIT_MESSAGE = 'rejected by rate limit';

export interface PodResourcesServerOptions {
  socketPath: string;
  providers: PodResourcesProviders;
  qps?: number;
  burst?: number;
  /** The rate limiter's clock (tests). */
  clock?: Clock;
  /** Feature gate KubeletPodResourcesGet (beta, on by default in 1.35); off: Get is refused. */
  getEnabled?: boolean;
}

/** A gRPC status error for a handler to throw. */
interface RpcError {
  code: grpc.status;
  details: string;
}

const NO_DEVICES: DevicesProvider = {
  updateAllocatedDevices: () => undefined,
  getDevices: () => [],
  getAllocatableDevices: () => [],
};

/** Upstream getContainerResources: devices from the device manager; no CPU, memory or DRA managers here. */
function containerResources(devices: DevicesProvider, pod: Pod, c: Container): ContainerResources {
  const devs = devices.getDevices(pod.metadata?.uid ?? '', c.name);
  return { name: c.name, devices: devs, cpuIds: [], memory: [], dynamicResources: [] };
}

/** A pod's entry: restartable init containers (sidecars) first, then the regular containers. */
export function podResources(devices: DevicesProvider, pod: Pod): PodResources {
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => isRestartableInitContainer(c));
  const containers = [...sidecars, ...(pod.spec?.containers ?? [])];
  return {
    name: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace ?? '',
    containers: containers.map((c) => containerResources(devices, pod, c)),
  };
}

/** The three RPCs over the providers, as plain functions of the request. */
export class PodResourcesLister {
  private readonly devices: DevicesProvider;

  constructor(
    private readonly providers: PodResourcesProviders,
    private readonly getEnabled = true,
  ) {
    this.devices = providers.devices ?? NO_DEVICES;
  }

  list(): { podResources: PodResources[] } {
    const pods = this.providers.pods.activePods();
    this.devices.updateAllocatedDevices();
    return { podResources: pods.map((p) => podResources(this.devices, p)) };
  }

  get(req: { podName: string; podNamespace: string }): { podResources: PodResources } {
    // Upstream returns plain errors here, which gRPC sends as Unknown.
    if (!this.getEnabled) throw rpcError(grpc.status.UNKNOWN, 'PodResources API Get method disabled');
    const pod = this.providers.pods.podByName(req.podNamespace, req.podName);
    if (!pod) throw rpcError(grpc.status.UNKNOWN, `pod ${req.podName} in namespace ${req.podNamespace} not found`);
    return { podResources: podResources(this.devices, pod) };
  }

  getAllocatableResources(): { devices: unknown[]; cpuIds: string[]; memory: unknown[] } {
    return { devices: this.devices.getAllocatableDevices(), cpuIds: [], memory: [] };
  }
}

function rpcError(code: grpc.status, details: string): RpcError {
  return { code, details };
}

function isRpcError(err: unknown): err is RpcError {
  return typeof err === 'object' && err !== null && 'code' in err && 'details' in err;
}

export class PodResourcesServer {
  private readonly server = new grpc.Server();
  private readonly bucket: TokenBucket;
  private readonly lister: PodResourcesLister;

  constructor(private readonly opts: PodResourcesServerOptions) {
    this.bucket = new TokenBucket(opts.qps ?? DEFAULT_QPS, opts.burst ?? DEFAULT_BURST_TOKENS, opts.clock);
    this.lister = new PodResourcesLister(opts.providers, opts.getEnabled ?? true);
  }

  /** Removes a file left at the socket path (a previous run), then listens. */
  async start(): Promise<void> {
    const path = this.opts.socketPath;
    if (!isAbsolute(path)) throw new PodResourcesError(`socket path ${JSON.stringify(path)} is not absolute`);
    this.server.addService(podResourcesService(), {
      List: this.unary('List', () => this.lister.list()),
      Get: this.unary('Get', (req) => this.lister.get(req as { podName: string; podNamespace: string })),
      GetAllocatableResources: this.unary('GetAllocatableResources', () => this.lister.getAllocatableResources()),
    });
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
      rmSync(path, { force: true });
      await new Promise<void>((resolve, reject) =>
        this.server.bindAsync(`unix:${path}`, grpc.ServerCredentials.createInsecure(), (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    } catch (err) {
      throw new PodResourcesError(`cannot listen on ${path}: ${(err as Error).message}`, { cause: err });
    }
    log('podresources').info({ socket: path, qps: this.opts.qps ?? DEFAULT_QPS }, 'Pod resources API serving');
  }

  /** Stops at once (calls in flight are cancelled) and removes the socket. */
  stop(): void {
    this.server.forceShutdown();
    rmSync(this.opts.socketPath, { force: true });
  }

  /** One RPC: a token first (upstream's unary interceptor), then the handler; thrown RpcErrors become statuses. */
  private unary(method: string, handler: (req: unknown) => object): grpc.handleUnaryCall<unknown, object> {
    return (call, callback) => {
      if (!this.bucket.tryAcquire())
        return callback({ code: grpc.status.RESOURCE_EXHAUSTED, details: RATE_LIMIT_MESSAGE });
      try {
        callback(null, handler(call.request));
      } catch (err) {
        if (isRpcError(err)) return callback(err);
        log('podresources').warn({ method, err: String(err) }, 'Pod resources call failed');
        callback({ code: grpc.status.INTERNAL, details: `${method}: ${String(err)}` });
      }
    };
  }
}
