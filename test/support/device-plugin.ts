/**
 * A device plugin of our own for tests (no device plugin can be installed from this machine's
 * registries), speaking the kubelet's device plugin API v1beta1 over unix sockets as real plugins
 * do: it serves `v1beta1.DevicePlugin` on <plugin-dir>/<socket-name> first, then calls
 * `v1beta1.Registration/Register` on <plugin-dir>/kubelet.sock. It watches kubelet.sock: when the
 * kubelet makes it again (a restart, which also deletes every other socket in the directory), the
 * plugin serves again if its socket is gone and registers again.
 *
 * Tests steer and observe it through its state directory (device-plugin-state.ts): devices.json
 * (a change sends a new ListAndWatch list), options.json, `faults` (`<Method>=fail:<code>` or
 * `<Method>=stall`, as the test CSI driver reads them), and calls.jsonl (the calls it answered,
 * plus its own Register calls, in the CSI driver's log format: readCallLog reads it).
 * stop() (SIGTERM in device-plugin-main.ts) ends the ListAndWatch streams and removes its socket.
 *
 * With `registrationDir` it takes the other path upstream's kubelet offers instead: no Register
 * call; a pluginregistration server on <registration-dir>/<socket name>-reg.sock whose GetInfo
 * answers type DevicePlugin, the resource name and our socket as endpoint (what the kubelet's
 * plugin watcher finds in <root-dir>/plugins_registry).
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { devicePluginProtoPath } from '../../src/devicemanager/proto.js';
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { bind, loadCsiProtos, parseFaults, readCallLog, type CsiCall, type CsiLogLine } from './csi-driver.js';
import { PluginState, preferredIds, type TestDevice } from './device-plugin-state.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- requests are proto-loader's untyped messages */

export const API_VERSION = 'v1beta1';
export const KUBELET_SOCKET = 'kubelet.sock';
const REGISTER_TIMEOUT_MS = 10_000;
const POLL_MS = 100;
const STALL_POLL_MS = 100;

export interface DevicePluginOptions {
  /** The extended resource it advertises, e.g. kubelet-ts.test/dev. */
  resourceName: string;
  /** The kubelet's device plugin directory (<root-dir>/device-plugins): kubelet.sock and our socket. */
  pluginDir: string;
  stateDir: string;
  /** Our socket's file name in pluginDir (RegisterRequest.endpoint); default kts-test-dev.sock. */
  socketName?: string;
  /** devices.json when the state dir has none; default d0 (c 1 3) and d1 (c 1 5). */
  devices?: TestDevice[];
  /** Register through the plugin watcher (<root-dir>/plugins_registry) instead of kubelet.sock. */
  registrationDir?: string;
}

const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true };

/** The v1beta1 package (DevicePlugin, Registration) as grpc-js constructors. */
export function loadDevicePluginProto(): any {
  const def = protoLoader.loadSync(devicePluginProtoPath(), LOADER_OPTIONS);
  return (grpc.loadPackageDefinition(def) as any).v1beta1;
}

type Unary = (req: any) => Promise<any>;

export class TestDevicePlugin {
  readonly state: PluginState;
  private readonly pkg = loadDevicePluginProto();
  private server: grpc.Server | undefined;
  private regServer: grpc.Server | undefined;
  private readonly streams = new Set<grpc.ServerWritableStream<any, any>>();
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;
  private readonly instance = randomUUID().slice(0, 8);
  private lastDevices = '';
  private kubeletSocketId = '';
  private registering: Promise<void> = Promise.resolve();
  /** How many Register calls succeeded, and the last failure. */
  registrations = 0;
  lastRegisterError: string | undefined;
  /** The last NotifyRegistrationStatus (registration-dir mode). */
  registrationStatus: { pluginRegistered: boolean; error: string } | undefined;

  constructor(readonly opts: DevicePluginOptions) {
    this.state = new PluginState(opts.stateDir, opts.resourceName);
  }

  get socketPath(): string {
    return join(this.opts.pluginDir, this.opts.socketName ?? 'kts-test-dev.sock');
  }

  get kubeletSocket(): string {
    return join(this.opts.pluginDir, KUBELET_SOCKET);
  }

  /** The pluginregistration socket (registration-dir mode only). */
  get registrationSocket(): string | undefined {
    const dir = this.opts.registrationDir;
    return dir === undefined ? undefined : join(dir, basename(this.socketPath).replace(/\.sock$/, '') + '-reg.sock');
  }

  get callLogPath(): string {
    return join(this.opts.stateDir, 'calls.jsonl');
  }

  calls(): CsiCall[] {
    return readCallLog(this.callLogPath);
  }

  /** Serves, registers if kubelet.sock is there, and from then on follows the state dir and kubelet.sock. */
  async start(): Promise<void> {
    mkdirSync(this.opts.stateDir, { recursive: true });
    this.state.init(this.opts.devices);
    this.lastDevices = JSON.stringify(this.state.devices());
    await this.serve();
    if (this.opts.registrationDir !== undefined) await this.serveRegistration();
    else await this.checkKubeletSocket();
    this.timer = setInterval(() => void this.poll(), POLL_MS);
  }

  /** Ends every ListAndWatch stream (the kubelet sees a stream end), stops serving, removes the socket. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.registering;
    this.regServer?.forceShutdown();
    if (this.registrationSocket !== undefined) rmSync(this.registrationSocket, { force: true });
    await this.shutdownServer();
  }

  /** Resolves after the next successful Register (or rejects after timeoutMs). */
  async waitRegistered(count: number, timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.registrations < count) {
      if (Date.now() > until) throw new Error(`not registered ${count} times: ${this.lastRegisterError ?? 'no error'}`);
      await sleep(20);
    }
  }

  private async serve(): Promise<void> {
    const server = new grpc.Server();
    server.addService(this.pkg.DevicePlugin.service, this.handlers());
    await bind(server, this.socketPath);
    this.server = server;
  }

  /** node-driver-registrar's side of the plugin watcher handshake, for a device plugin. */
  private async serveRegistration(): Promise<void> {
    const server = new grpc.Server();
    const handlers: Record<string, Unary> = {
      GetInfo: async () => ({
        type: 'DevicePlugin',
        name: this.opts.resourceName,
        endpoint: this.socketPath,
        supportedVersions: [API_VERSION],
      }),
      NotifyRegistrationStatus: async (r) => {
        this.registrationStatus = { pluginRegistered: r.pluginRegistered, error: r.error };
        return {};
      },
    };
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [method, handler] of Object.entries(handlers)) impl[method] = this.wrapUnary(method, handler);
    server.addService(loadCsiProtos().pluginregistration.Registration.service, impl);
    await bind(server, this.registrationSocket!);
    this.regServer = server;
  }

  private async shutdownServer(): Promise<void> {
    for (const s of this.streams) s.end();
    this.streams.clear();
    const server = this.server;
    this.server = undefined;
    if (server) {
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => (server.forceShutdown(), resolve()), 1000);
        server.tryShutdown(() => (clearTimeout(force), resolve()));
      });
    }
    rmSync(this.socketPath, { force: true });
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    try {
      this.checkDevices();
      if (this.opts.registrationDir === undefined) await this.checkKubeletSocket();
    } catch (err) {
      process.stderr.write(`test device plugin: ${String(err)}\n`);
    }
  }

  /** devices.json changed: every open ListAndWatch stream gets the new full list. */
  private checkDevices(): void {
    const text = JSON.stringify(this.state.devices());
    if (text === this.lastDevices) return;
    this.lastDevices = text;
    for (const s of this.streams) s.write(this.listResponse());
  }

  /** kubelet.sock is new (another inode): serve again if our socket went with the old kubelet, register. */
  private async checkKubeletSocket(): Promise<void> {
    const id = socketId(this.kubeletSocket);
    if (id === this.kubeletSocketId) return;
    this.kubeletSocketId = id;
    if (id === '') return;
    this.registering = this.reRegister();
    await this.registering;
  }

  private async reRegister(): Promise<void> {
    if (!existsSync(this.socketPath) && !this.stopped) {
      await this.shutdownServer();
      await this.serve();
    }
    await this.register();
  }

  private async register(): Promise<void> {
    const opts = this.state.options();
    const request = {
      version: API_VERSION,
      endpoint: this.socketPath.slice(this.opts.pluginDir.length + 1),
      resourceName: this.opts.resourceName,
      options: {
        preStartRequired: opts.preStartRequired ?? false,
        getPreferredAllocationAvailable: opts.getPreferredAllocationAvailable ?? false,
      },
    };
    const seq = this.nextSeq();
    this.log({ seq, phase: 'received', method: 'Register', request });
    const client = new this.pkg.Registration(`unix:${this.kubeletSocket}`, grpc.credentials.createInsecure());
    try {
      await new Promise<void>((resolve, reject) =>
        client.Register(request, { deadline: Date.now() + REGISTER_TIMEOUT_MS }, (err: grpc.ServiceError | null) =>
          err ? reject(err) : resolve(),
        ),
      );
      this.registrations++;
      this.log({ seq, phase: 'answered', method: 'Register', code: 0 });
    } catch (err) {
      const e = err as grpc.ServiceError;
      this.lastRegisterError = e.details || e.message;
      this.log({ seq, phase: 'answered', method: 'Register', code: e.code, error: this.lastRegisterError });
    } finally {
      client.close();
    }
  }

  private listResponse(): any {
    return { devices: this.state.devices().map((d) => ({ ID: d.id, health: d.health ?? 'Healthy' })) };
  }

  private handlers(): grpc.UntypedServiceImplementation {
    const unary: Record<string, Unary> = {
      GetDevicePluginOptions: async () => {
        const o = this.state.options();
        return {
          preStartRequired: o.preStartRequired ?? false,
          getPreferredAllocationAvailable: o.getPreferredAllocationAvailable ?? false,
        };
      },
      GetPreferredAllocation: async (r) => ({
        containerResponses: r.containerRequests.map((c: any) => ({ deviceIDs: preferredIds(c) })),
      }),
      Allocate: async (r) => ({
        containerResponses: r.containerRequests.map((c: any) => this.state.containerResponse(c.devicesIds)),
      }),
      PreStartContainer: async () => ({}),
    };
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [method, handler] of Object.entries(unary)) impl[method] = this.wrapUnary(method, handler);
    impl.ListAndWatch = (call: grpc.ServerWritableStream<any, any>) => void this.listAndWatch(call);
    return impl;
  }

  /** The full list now, and again on every devices.json change, until the plugin stops or the kubelet hangs up. */
  private async listAndWatch(call: grpc.ServerWritableStream<any, any>): Promise<void> {
    const seq = this.nextSeq();
    this.log({ seq, phase: 'received', method: 'ListAndWatch', request: {} });
    const fault = await this.injected('ListAndWatch');
    if (fault?.kind === 'fail') {
      this.log({ seq, phase: 'answered', method: 'ListAndWatch', code: fault.code });
      call.destroy(Object.assign(new Error('injected failure of ListAndWatch'), { code: fault.code }));
      return;
    }
    this.streams.add(call);
    call.write(this.listResponse());
    let ended = false;
    const done = () => {
      this.streams.delete(call);
      if (!ended) this.log({ seq, phase: 'answered', method: 'ListAndWatch', code: 0 });
      ended = true;
    };
    call.once('cancelled', done);
    call.once('finish', done);
  }

  private wrapUnary(method: string, handler: Unary) {
    return (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      const seq = this.nextSeq();
      this.log({ seq, phase: 'received', method, request: call.request });
      this.answer(method, handler, call.request).then(
        (reply) => {
          this.log({ seq, phase: 'answered', method, code: 0 });
          callback(null, reply);
        },
        (err: { code: grpc.status; message: string }) => {
          this.log({ seq, phase: 'answered', method, code: err.code, error: err.message });
          callback({ code: err.code, details: err.message });
        },
      );
    };
  }

  private async answer(method: string, handler: Unary, request: any): Promise<any> {
    const fault = await this.injected(method);
    if (fault?.kind === 'fail') throw { code: fault.code, message: `injected failure of ${method}` };
    try {
      return await handler(request);
    } catch (err) {
      throw { code: grpc.status.INTERNAL, message: `${method}: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private faultFor(method: string) {
    const path = join(this.opts.stateDir, 'faults');
    const file = existsSync(path) ? readFileSync(path, 'utf8') : '';
    return parseFaults(`${process.env.DEVICE_PLUGIN_FAULTS ?? ''}\n${file}`).get(method);
  }

  /** The fault to answer with, after waiting out a stall (which ends when its line goes). */
  private async injected(method: string) {
    let fault = this.faultFor(method);
    while (fault?.kind === 'stall' && !this.stopped) {
      await sleep(STALL_POLL_MS);
      fault = this.faultFor(method);
    }
    if (this.stopped) return { kind: 'fail' as const, code: grpc.status.UNAVAILABLE };
    return fault;
  }

  private nextSeq(): string {
    return `${this.instance}:${++this.seq}`;
  }

  private log(line: Omit<CsiLogLine, 'time'>): void {
    appendFileSync(this.callLogPath, JSON.stringify({ ...line, time: new Date().toISOString() }) + '\n');
  }
}

/** dev:inode of a socket file, '' when there is none: a re-made kubelet.sock has a new inode. */
function socketId(path: string): string {
  try {
    const st = statSync(path);
    return st.isSocket() ? `${st.dev}:${st.ino}:${st.ctimeMs}` : '';
  } catch {
    return '';
  }
}

export async function startDevicePlugin(opts: DevicePluginOptions): Promise<TestDevicePlugin> {
  const plugin = new TestDevicePlugin(opts);
  await plugin.start();
  return plugin;
}
