/**
 * The plugin manager's reconciler (upstream: pkg/kubelet/pluginmanager/reconciler and
 * operationexecutor): makes the actual state of world (registered plugins) follow the desired
 * state (sockets in plugins_registry). Registering a socket: dial it, GetInfo, find the handler of
 * the plugin's type, let it validate and register the plugin, then NotifyRegistrationStatus(true);
 * any failure after GetInfo is told to the plugin with NotifyRegistrationStatus(false, error) and
 * retried with back-off. A socket that goes away, or is created again, is deregistered first.
 * Every call has a deadline; nothing a plugin does can throw out of the loop.
 */
import type { ServiceDefinition } from '@grpc/proto-loader';
import { PluginRegistrationError } from '../errors.js';
import { log } from '../util/log.js';
import { UnixGrpcClient } from './grpc-unix.js';
import type { DesiredPlugin, DesiredStateOfWorld } from './plugin-watcher.js';
import { registrationServiceDefinition } from './proto.js';

/** What a plugin type's owner implements (upstream cache.PluginHandler). Throwing refuses the plugin. */
export interface PluginHandler {
  validatePlugin(name: string, endpoint: string, versions: string[]): void | Promise<void>;
  registerPlugin(name: string, endpoint: string, versions: string[], timeoutMs: number): void | Promise<void>;
  deRegisterPlugin(name: string, endpoint: string): void | Promise<void>;
}

/** Upstream's plugin type names (PluginInfo.type). */
export const CSI_PLUGIN = 'CSIPlugin';
export const DEVICE_PLUGIN = 'DevicePlugin';

export interface ReconcilerTimeouts {
  /** GetInfo deadline (upstream: 1 s after a 10 s dial; here one deadline covers both). */
  getInfoMs: number;
  /** NotifyRegistrationStatus deadline (upstream notifyTimeoutDuration: 5 s). */
  notifyMs: number;
  /** Passed to the handler's registerPlugin (upstream pluginClientTimeout). */
  pluginClientMs: number;
  /** Upstream's loopSleepDuration. */
  loopMs: number;
  /** Retry back-off after a failed registration: first and cap (upstream exponentialbackoff: 500 ms, 2 min 2 s). */
  backoffInitialMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_TIMEOUTS: ReconcilerTimeouts = {
  getInfoMs: 10_000,
  notifyMs: 5_000,
  pluginClientMs: 10_000,
  loopMs: 1_000,
  backoffInitialMs: 500,
  backoffMaxMs: 122_000,
};

interface RegisteredPlugin {
  generation: number;
  type: string;
  name: string;
  endpoint: string;
}

interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supportedVersions: string[];
}

interface Failure {
  generation: number;
  delayMs: number;
  retryAt: number;
}

export class PluginReconciler {
  /** Upstream's actualStateOfWorld: socket path → the plugin registered from it. */
  private readonly actual = new Map<string, RegisteredPlugin>();
  private readonly failures = new Map<string, Failure>();
  private readonly service: ServiceDefinition = registrationServiceDefinition();
  private readonly timeouts: ReconcilerTimeouts;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly dsw: DesiredStateOfWorld,
    private readonly handlers: Record<string, PluginHandler>,
    timeouts: Partial<ReconcilerTimeouts> = {},
  ) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...timeouts };
  }

  start(): void {
    this.timer ??= setInterval(() => this.kick(), this.timeouts.loopMs).unref();
    this.kick();
  }

  /** Stops the loop and waits for a pass in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Runs a pass now (or right after the one in progress). */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.reconcile().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** The registered plugins (socket path → type/name/endpoint), for tests and the status page. */
  registered(): Map<string, { type: string; name: string; endpoint: string }> {
    return new Map([...this.actual].map(([k, v]) => [k, { type: v.type, name: v.name, endpoint: v.endpoint }]));
  }

  private async reconcile(): Promise<void> {
    for (const [socketPath, plugin] of [...this.actual]) {
      if (this.dsw.generationOf(socketPath) !== plugin.generation) await this.deregister(socketPath, plugin);
    }
    const now = Date.now();
    const due = this.dsw.getPluginsToRegister().filter((p) => {
      const f = this.failures.get(p.socketPath);
      return !this.actual.has(p.socketPath) && !(f && f.generation === p.generation && f.retryAt > now);
    });
    // In parallel, as upstream's operation executor runs one operation per socket: a stalled
    // socket delays only itself.
    await Promise.all(due.map((p) => this.register(p)));
    for (const key of this.failures.keys()) if (this.dsw.generationOf(key) === undefined) this.failures.delete(key);
  }

  private async deregister(socketPath: string, plugin: RegisteredPlugin): Promise<void> {
    this.actual.delete(socketPath);
    try {
      await this.handlers[plugin.type]?.deRegisterPlugin(plugin.name, plugin.endpoint);
      log('pluginmanager').info({ socketPath, type: plugin.type, name: plugin.name }, 'Plugin deregistered');
    } catch (err) {
      log('pluginmanager').warn(
        { socketPath, name: plugin.name, err: (err as Error).message },
        'DeRegisterPlugin failed',
      );
    }
  }

  private async register(p: DesiredPlugin): Promise<void> {
    const client = new UnixGrpcClient(p.socketPath);
    try {
      const info = await this.getInfo(client, p.socketPath);
      try {
        await this.registerWithHandler(p, info);
      } catch (err) {
        await this.notify(client, p.socketPath, false, (err as Error).message);
        throw err;
      }
      await this.notify(client, p.socketPath, true, '');
      this.failures.delete(p.socketPath);
    } catch (err) {
      this.recordFailure(p, err as Error);
    } finally {
      client.close();
    }
  }

  private async getInfo(client: UnixGrpcClient, socketPath: string): Promise<PluginInfo> {
    try {
      return await client.unary<PluginInfo>(this.service, 'GetInfo', {}, this.timeouts.getInfoMs);
    } catch (err) {
      throw new PluginRegistrationError(`plugin socket ${socketPath}: GetInfo failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  private async registerWithHandler(p: DesiredPlugin, info: PluginInfo): Promise<void> {
    const handler = this.handlers[info.type];
    const where = `plugin socket ${p.socketPath}`;
    if (!handler) throw new PluginRegistrationError(`${where}: no handler registered for plugin type: ${info.type}`);
    if (!info.name) throw new PluginRegistrationError(`${where}: the plugin's GetInfo returned an empty name`);
    // upstream's operation executor: no endpoint means the plugin serves its API on this socket
    const endpoint = info.endpoint || p.socketPath;
    await handler.validatePlugin(info.name, endpoint, info.supportedVersions);
    await handler.registerPlugin(info.name, endpoint, info.supportedVersions, this.timeouts.pluginClientMs);
    this.actual.set(p.socketPath, { generation: p.generation, type: info.type, name: info.name, endpoint });
    log('pluginmanager').info({ socketPath: p.socketPath, type: info.type, name: info.name }, 'Plugin registered');
  }

  /** Best effort: a plugin that cannot hear the verdict is logged, not retried (upstream does the same). */
  private async notify(client: UnixGrpcClient, socketPath: string, registered: boolean, error: string): Promise<void> {
    try {
      await client.unary(
        this.service,
        'NotifyRegistrationStatus',
        { pluginRegistered: registered, error },
        this.timeouts.notifyMs,
      );
    } catch (err) {
      log('pluginmanager').warn({ socketPath, err: (err as Error).message }, 'NotifyRegistrationStatus failed');
    }
  }

  private recordFailure(p: DesiredPlugin, err: Error): void {
    const old = this.failures.get(p.socketPath);
    const delayMs =
      old && old.generation === p.generation
        ? Math.min(old.delayMs * 2, this.timeouts.backoffMaxMs)
        : this.timeouts.backoffInitialMs;
    this.failures.set(p.socketPath, { generation: p.generation, delayMs, retryAt: Date.now() + delayMs });
    log('pluginmanager').warn(
      { socketPath: p.socketPath, err: err.message, retryInMs: delayMs },
      'Plugin registration failed',
    );
  }
}
