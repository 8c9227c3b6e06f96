/**
 * A CSI driver of our own for tests (no CSI driver can be installed from this machine's
 * registries): CSI v1 over a unix socket (Identity, Node, and the Controller's CreateVolume and
 * DeleteVolume), real bind mounts of a directory per volume (csi-driver-volumes.ts), and a
 * pluginregistration v1 server on <registration-dir>/<driver-name>-reg.sock, the socket
 * node-driver-registrar would make for it, so the kubelet's plugin watcher finds it.
 *
 * Tests steer and observe it through its state directory:
 * - `faults`: lines `<Method>=fail:<grpc code name or number>` or `<Method>=stall`, read on every
 *   call (so a test can change them while the driver runs); a stalled call waits until its line
 *   is gone. The CSI_DRIVER_FAULTS environment variable holds more, comma-separated.
 * - `calls.jsonl`: a line when a call arrives (method, request with secrets left out) and one
 *   when it is answered (status code); readCallLog pairs them.
 * e2e tests run it as a process of its own through csi-driver-main.ts.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { CsiError, CsiVolumes } from './csi-driver-volumes.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- requests are proto-loader's untyped messages */

export interface CsiDriverOptions {
  /** The CSI socket path. */
  endpoint: string;
  /** Where the registration socket goes (the kubelet's <root-dir>/plugins_registry); none: no registration. */
  registrationDir?: string;
  driverName: string;
  nodeId: string;
  stateDir: string;
  /** NodeGetInfo's max_volumes_per_node; default 0 (no limit). */
  maxVolumes?: number;
  /** NodeGetCapabilities' RPC types; default STAGE_UNSTAGE_VOLUME, GET_VOLUME_STATS, EXPAND_VOLUME. */
  nodeCapabilities?: string[];
  /** NodeGetInfo's accessible topology; default {"topology.csi.kubelet-ts.io/node": nodeId}. */
  topology?: Record<string, string>;
}

/**
 * One call as the log has it: a `received` line when it arrives (so a stalled call, or one the
 * driver was killed in, is seen) and an `answered` line with the same seq when it is answered.
 */
export interface CsiLogLine {
  /** <driver instance>:<n>, unique across restarts of a driver on one state dir. */
  seq: string;
  phase: 'received' | 'answered';
  time: string;
  method: string;
  /** On `received`: the request, its secrets left out. */
  request?: unknown;
  /** On `answered`: 0 for OK, else the gRPC status code. */
  code?: number;
  error?: string;
}

/** A call with its answer; code is undefined while the call has not been answered. */
export interface CsiCall {
  method: string;
  request: unknown;
  code?: number;
  error?: string;
}

type Fault = { kind: 'fail'; code: grpc.status } | { kind: 'stall' };

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};
export const TOPOLOGY_KEY = 'topology.csi.kubelet-ts.io/node';
export const DEFAULT_NODE_CAPABILITIES = ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS', 'EXPAND_VOLUME'];
const STALL_POLL_MS = 100;

/**
 * src/volume/csi/proto/csi.proto or src/pluginmanager/proto/api.proto (plugin registration) under
 * the package root (the code runs from dist/test/support/).
 */
export function csiProtoPath(file: 'csi.proto' | 'api.proto'): string {
  const rel =
    file === 'csi.proto' ? join('src', 'volume', 'csi', 'proto', file) : join('src', 'pluginmanager', 'proto', file);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const p = join(dir, rel);
    if (existsSync(join(dir, 'package.json')) && existsSync(p)) return p;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${rel}`);
    dir = parent;
  }
}

export function loadCsiProtos(): any {
  const def = protoLoader.loadSync([csiProtoPath('csi.proto'), csiProtoPath('api.proto')], LOADER_OPTIONS);
  return grpc.loadPackageDefinition(def);
}

function parseCode(text: string): grpc.status | undefined {
  if (/^\d+$/.test(text)) return Number(text) as grpc.status;
  return (grpc.status as unknown as Record<string, grpc.status>)[text.toUpperCase()];
}

/** `Method=fail:CODE` / `Method=stall` lines (or comma-separated entries) into a map. */
export function parseFaults(text: string): Map<string, Fault> {
  const out = new Map<string, Fault>();
  for (const entry of text.split(/[\n,]/)) {
    const m = /^\s*(\w+)\s*=\s*(stall|fail:(\w+))\s*$/.exec(entry);
    if (!m) continue;
    const code = m[3] === undefined ? undefined : parseCode(m[3]);
    if (m[2] === 'stall') out.set(m[1]!, { kind: 'stall' });
    else if (code !== undefined) out.set(m[1]!, { kind: 'fail', code });
  }
  return out;
}

/** Requests as logged: the CSI secrets maps never reach the log. */
function loggable(request: any): unknown {
  if (!request || typeof request !== 'object') return request;
  const { secrets: _secrets, ...rest } = request;
  return rest;
}

/** The calls in a driver's calls.jsonl, in the order received, each with its answer if any. */
export function readCallLog(path: string): CsiCall[] {
  if (!existsSync(path)) return [];
  const calls = new Map<string, CsiCall>();
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (text === '') continue;
    const line = JSON.parse(text) as CsiLogLine;
    if (line.phase === 'received') calls.set(line.seq, { method: line.method, request: line.request });
    const call = calls.get(line.seq);
    if (line.phase === 'answered' && call) Object.assign(call, { code: line.code, error: line.error });
  }
  return [...calls.values()];
}

export class TestCsiDriver {
  private readonly csiServer = new grpc.Server();
  private readonly regServer = new grpc.Server();
  private readonly volumes: CsiVolumes;
  private stopped = false;
  private seq = 0;
  private readonly instance = randomUUID().slice(0, 8);
  /** The last NotifyRegistrationStatus the kubelet sent. */
  registrationStatus: { pluginRegistered: boolean; error: string } | undefined;

  constructor(readonly opts: CsiDriverOptions) {
    this.volumes = new CsiVolumes(opts.stateDir);
  }

  get registrationSocket(): string | undefined {
    const dir = this.opts.registrationDir;
    return dir === undefined ? undefined : join(dir, `${this.opts.driverName}-reg.sock`);
  }

  get callLogPath(): string {
    return join(this.opts.stateDir, 'calls.jsonl');
  }

  get faultsPath(): string {
    return join(this.opts.stateDir, 'faults');
  }

  backingDir(volumeId: string): string {
    return this.volumes.backingDir(volumeId);
  }

  /** Every call received so far, oldest first. */
  calls(): CsiCall[] {
    return readCallLog(this.callLogPath);
  }

  async start(): Promise<void> {
    mkdirSync(join(this.opts.stateDir, 'volumes'), { recursive: true });
    const pkg = loadCsiProtos();
    this.csiServer.addService(pkg.csi.v1.Identity.service, this.wrap(this.identity()));
    this.csiServer.addService(pkg.csi.v1.Node.service, this.wrap(this.node()));
    this.csiServer.addService(pkg.csi.v1.Controller.service, this.wrap(this.controller()));
    await bind(this.csiServer, this.opts.endpoint);
    const reg = this.registrationSocket;
    if (reg === undefined) return;
    this.regServer.addService(pkg.pluginregistration.Registration.service, this.wrap(this.registration()));
    mkdirSync(dirname(reg), { recursive: true });
    await bind(this.regServer, reg);
  }

  /** Stops both servers at once (stalled calls are cancelled) and removes the sockets. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of [this.regServer, this.csiServer]) s.forceShutdown();
    for (const p of [this.registrationSocket, this.opts.endpoint]) if (p !== undefined) rmSync(p, { force: true });
  }

  private faultFor(method: string): Fault | undefined {
    const file = existsSync(this.faultsPath) ? readFileSync(this.faultsPath, 'utf8') : '';
    return parseFaults(`${process.env.CSI_DRIVER_FAULTS ?? ''}\n${file}`).get(method);
  }

  /** The fault to answer with, after waiting out a stall (which ends when its line goes). */
  private async injected(method: string): Promise<Fault | undefined> {
    let fault = this.faultFor(method);
    while (fault?.kind === 'stall' && !this.stopped) {
      await sleep(STALL_POLL_MS);
      fault = this.faultFor(method);
    }
    if (this.stopped) return { kind: 'fail', code: grpc.status.UNAVAILABLE };
    return fault;
  }

  private log(line: Omit<CsiLogLine, 'time'>): void {
    appendFileSync(this.callLogPath, JSON.stringify({ ...line, time: new Date().toISOString() }) + '\n');
  }

  private async answer(method: string, handler: (req: any) => Promise<any>, request: any): Promise<any> {
    const fault = await this.injected(method);
    if (fault?.kind === 'fail') throw new CsiError(fault.code, `injected failure of ${method}`);
    try {
      return await handler(request);
    } catch (err) {
      if (err instanceof CsiError) throw err;
      throw new CsiError(grpc.status.INTERNAL, `${method}: ${String(err)}`);
    }
  }

  /** Each handler: log the call, apply its injected fault, answer. */
  private wrap(handlers: Record<string, (req: any) => Promise<any>>): grpc.UntypedServiceImplementation {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [method, handler] of Object.entries(handlers)) {
      impl[method] = (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
        const seq = `${this.instance}:${++this.seq}`;
        this.log({ seq, phase: 'received', method, request: loggable(call.request) });
        this.answer(method, handler, call.request).then(
          (reply) => {
            this.log({ seq, phase: 'answered', method, code: 0 });
            callback(null, reply);
          },
          (err: CsiError) => {
            this.log({ seq, phase: 'answered', method, code: err.code, error: err.message });
            callback({ code: err.code, details: err.message });
          },
        );
      };
    }
    return impl;
  }

  private identity(): Record<string, (req: any) => Promise<any>> {
    return {
      GetPluginInfo: async () => ({ name: this.opts.driverName, vendorVersion: '0.1.0', manifest: {} }),
      GetPluginCapabilities: async () => ({
        capabilities: [
          { service: { type: 'CONTROLLER_SERVICE' } },
          { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } },
          { volumeExpansion: { type: 'ONLINE' } },
        ],
      }),
      Probe: async () => ({ ready: { value: true } }),
    };
  }

  private node(): Record<string, (req: any) => Promise<any>> {
    const v = this.volumes;
    const rpc = (type: string) => ({ rpc: { type } });
    return {
      NodeGetInfo: async () => ({
        nodeId: this.opts.nodeId,
        maxVolumesPerNode: String(this.opts.maxVolumes ?? 0),
        accessibleTopology: { segments: this.opts.topology ?? { [TOPOLOGY_KEY]: this.opts.nodeId } },
      }),
      NodeGetCapabilities: async () => ({
        capabilities: (this.opts.nodeCapabilities ?? DEFAULT_NODE_CAPABILITIES).map(rpc),
      }),
      NodeStageVolume: (r) => v.stage(r),
      NodeUnstageVolume: (r) => v.unstage(r),
      NodePublishVolume: (r) => v.publish(r),
      NodeUnpublishVolume: (r) => v.unpublish(r),
      NodeGetVolumeStats: (r) => v.stats(r),
      NodeExpandVolume: (r) => v.expand(r),
    };
  }

  private controller(): Record<string, (req: any) => Promise<any>> {
    return { CreateVolume: (r) => this.volumes.create(r), DeleteVolume: (r) => this.volumes.delete(r) };
  }

  /** node-driver-registrar's side of the handshake: the CSI endpoint is this driver's socket. */
  private registration(): Record<string, (req: any) => Promise<any>> {
    return {
      GetInfo: async () => ({
        type: 'CSIPlugin',
        name: this.opts.driverName,
        endpoint: this.opts.endpoint,
        supportedVersions: ['1.0.0'],
      }),
      NotifyRegistrationStatus: async (r) => {
        this.registrationStatus = { pluginRegistered: r.pluginRegistered, error: r.error };
        return {};
      },
    };
  }
}

/** Listens on a unix socket, replacing a stale socket file a killed driver left. */
export async function bind(server: grpc.Server, socketPath: string): Promise<void> {
  mkdirSync(dirname(socketPath), { recursive: true });
  rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    );
  });
}

export async function startCsiDriver(opts: CsiDriverOptions): Promise<TestCsiDriver> {
  const driver = new TestCsiDriver(opts);
  await driver.start();
  return driver;
}
