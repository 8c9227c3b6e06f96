/**
 * The kubelet side of device plugin registration (upstream plugin/v1beta1/server.go and
 * handler.go): serves v1beta1.Registration on <root-dir>/device-plugins/kubelet.sock, and is the
 * plugin manager's handler of type DevicePlugin (plugins_registry). Either way a plugin is
 * checked (version, extended resource name), dialled, asked for its options and then watched
 * through ListAndWatch until its stream ends.
 *
 * Clients are keyed by (resource, socket path), as upstream after PR #135437: the end of an old
 * plugin's stream disconnects only that plugin, never the one that re-registered after it.
 */
import { lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { isExtendedResourceName } from '../util/resource-names.js';
import { DevicePluginError } from '../errors.js';
import { metrics } from '../metrics/index.js';
import type { PluginHandler } from '../pluginmanager/index.js';
import { log } from '../util/log.js';
import { CHECKPOINT_FILE, DIAL_TIMEOUT_MS, KUBELET_SOCKET, MESSAGES, SUPPORTED_VERSIONS } from './constants.js';
import { PluginClient } from './plugin-client.js';
import { REGISTRATION_SERVICE, devicePluginService } from './proto.js';
import type { Device, DevicePluginOptions, RegisterRequest } from './types.js';

/** What the manager does with clients (upstream ClientHandler). */
export interface ClientHandler {
  /** The plugin answered GetDevicePluginOptions: it now serves `resource`. */
  pluginConnected(resource: string, client: PluginClient, opts: DevicePluginOptions): void;
  /** One ListAndWatch message (a full list). */
  pluginListAndWatch(resource: string, client: PluginClient, devices: Device[]): void;
  /** The client's stream ended or it was deregistered. */
  pluginDisconnected(resource: string, client: PluginClient): void;
}

export interface RegistrationServerOptions {
  /** <root-dir>/device-plugins. */
  dir: string;
  handler: ClientHandler;
  dialTimeoutMs?: number;
}

const clientKey = (resource: string, socketPath: string): string => `${resource}\u0000${socketPath}`;

/** upstream isVersionCompatibleWithPlugin: one of the plugin's versions is ours. */
function versionCompatible(versions: readonly string[]): boolean {
  return versions.some((v) => SUPPORTED_VERSIONS.includes(v));
}

export class RegistrationServer implements PluginHandler {
  private readonly clients = new Map<string, PluginClient>();
  private server: grpc.Server | undefined;
  private failure: string | undefined;
  /** ListAndWatch loops in flight, so stop() can wait for them. */
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly opts: RegistrationServerOptions) {}

  get socketPath(): string {
    return join(this.opts.dir, KUBELET_SOCKET);
  }

  /** mkdir 0750, remove stale sockets (plugins see kubelet.sock come back and re-register), serve Registration. */
  async start(): Promise<void> {
    mkdirSync(this.opts.dir, { recursive: true, mode: 0o750 });
    this.cleanupPluginDirectory();
    const server = new grpc.Server();
    server.addService(devicePluginService(REGISTRATION_SERVICE) as unknown as grpc.ServiceDefinition, {
      Register: (call: grpc.ServerUnaryCall<RegisterRequest, object>, cb: grpc.sendUnaryData<object>) => {
        this.register(call.request).then(
          () => cb(null, {}),
          (err: Error) => cb({ code: grpc.status.UNKNOWN, details: err.message }),
        );
      },
    });
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${this.socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => {
        if (!err) return resolve();
        this.failure = 'device plugin registration gRPC server failed and no device plugins can register';
        reject(new DevicePluginError(`cannot serve ${this.socketPath}: ${err.message}`, { cause: err }));
      }),
    );
    this.server = server;
    log('devicemanager').info({ socket: this.socketPath }, 'Serving device plugin registration server');
  }

  /** Stops serving, disconnects every client and waits for their streams to end. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    for (const c of [...this.clients.values()]) c.disconnect();
    await Promise.all([...this.running]);
    this.clients.clear();
  }

  /** Undefined while serving (or not started); the healthz failure text once serving failed. */
  healthy(): string | undefined {
    return this.failure;
  }

  /** The legacy path's Register (upstream server.Register): synchronous check, dial and options, then watch. */
  async register(req: RegisterRequest): Promise<void> {
    log('devicemanager').info({ resource: req.resourceName, endpoint: req.endpoint }, 'Got registration request');
    metrics.devicePluginRegistrationTotal.inc({ resource_name: req.resourceName });
    if (!versionCompatible([req.version])) throw new DevicePluginError(MESSAGES.unsupportedVersion(req.version));
    if (!isExtendedResourceName(req.resourceName))
      throw new DevicePluginError(MESSAGES.invalidResourceName(req.resourceName));
    await this.connectClient(req.resourceName, join(this.opts.dir, req.endpoint));
  }

  // --- the plugin manager's DevicePlugin handler (plugins_registry) ---

  validatePlugin(name: string, _endpoint: string, versions: string[]): void {
    if (!versionCompatible(versions)) throw new DevicePluginError(MESSAGES.pluginVersionMismatch(versions));
    if (!isExtendedResourceName(name)) throw new DevicePluginError(MESSAGES.invalidSocketName(name));
  }

  async registerPlugin(name: string, endpoint: string, _versions?: string[], _timeoutMs?: number): Promise<void> {
    if (!isAbsolute(endpoint)) throw new DevicePluginError(MESSAGES.badSocketPath(endpoint));
    await this.connectClient(name, endpoint);
  }

  deRegisterPlugin(name: string, endpoint: string): void {
    const client = this.clients.get(clientKey(name, endpoint));
    if (client) this.disconnectClient(client);
  }

  /** Registered clients as (resource, socket path), for tests and the status page. */
  registered(): Array<{ resource: string; socketPath: string }> {
    return [...this.clients.values()].map((c) => ({ resource: c.resource, socketPath: c.socketPath }));
  }

  private async connectClient(resource: string, socketPath: string): Promise<void> {
    const client = new PluginClient(resource, socketPath);
    const key = clientKey(resource, socketPath);
    const old = this.clients.get(key);
    old?.disconnect(); // the same plugin again: its old connection is done
    this.clients.set(key, client);
    let opts: DevicePluginOptions;
    try {
      opts = await client.connect(this.opts.dialTimeoutMs ?? DIAL_TIMEOUT_MS);
      this.opts.handler.pluginConnected(resource, client, opts);
    } catch (err) {
      if (this.clients.get(key) === client) this.clients.delete(key);
      client.disconnect();
      // the old connection is closed and nothing replaced it: its endpoint stops (if it still serves)
      if (old) this.opts.handler.pluginDisconnected(resource, old);
      log('devicemanager').error(
        { resource, socketPath, err: (err as Error).message },
        'Failed to connect to new client',
      );
      throw err;
    }
    log('devicemanager').info({ resource, socketPath }, 'Connected to new client');
    const loop = this.runClient(client).finally(() => this.running.delete(loop));
    this.running.add(loop);
  }

  private async runClient(client: PluginClient): Promise<void> {
    const why = await client.run((devices) => this.opts.handler.pluginListAndWatch(client.resource, client, devices));
    log('devicemanager').warn({ resource: client.resource, err: why }, 'ListAndWatch ended for device plugin');
    if (this.clients.get(clientKey(client.resource, client.socketPath)) === client) this.disconnectClient(client);
  }

  private disconnectClient(client: PluginClient): void {
    const key = clientKey(client.resource, client.socketPath);
    if (this.clients.get(key) === client) this.clients.delete(key);
    client.disconnect();
    this.opts.handler.pluginDisconnected(client.resource, client);
    log('devicemanager').info(
      { resource: client.resource, socketPath: client.socketPath },
      'Device plugin disconnected',
    );
  }

  /** upstream CleanupPluginDirectory: every socket goes, except the checkpoint; directories and other files stay. */
  private cleanupPluginDirectory(): void {
    for (const name of readdirSync(this.opts.dir)) {
      if (name === CHECKPOINT_FILE) continue;
      const path = join(this.opts.dir, name);
      try {
        if (lstatSync(path).isSocket()) rmSync(path, { force: true });
      } catch (err) {
        log('devicemanager').error({ path, err: (err as Error).message }, 'Failed to remove stale socket');
      }
    }
  }
}
