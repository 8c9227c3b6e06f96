/**
 * What the CSI volume e2e tests (test/e2e/csi-volumes*.test.ts) share: the agent in API server
 * mode (api-mode-e2e.ts) with its main port open to a client certificate, test CSI drivers run as
 * processes of their own (restartable on the same state directory), the storage objects a test
 * plays the controllers for (CSIDriver, PV, PVC, VolumeAttachment, node.status.volumesAttached),
 * and the observations the tests assert on: the driver's calls.jsonl, pod state and events, and
 * what is mounted under a path.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { mountsUnder } from '../../src/volume/mount.js';
import { apiModeE2e, type ApiModeE2e } from './api-mode-e2e.js';
import { loadCsiProtos, readCallLog, type CsiCall } from './csi-driver.js';
import { spawnCsiDriver, type CsiDriverProcess } from './csi-driver-process.js';
import { randomPort, startKubelet, waitFor } from './kubelet-process.js';
import { mainPortClient } from './main-port.js';
import { issue, makeCA } from './pki.js';
import { TEST_IMAGES } from './images.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- proto-loader's untyped client */

type Json = Record<string, unknown>;

/** One test CSI driver process, restartable on the same sockets and state directory. */
export interface E2eDriver {
  name: string;
  endpoint: string;
  stateDir: string;
  proc: CsiDriverProcess | undefined;
  start(): Promise<void>;
  /** SIGTERM (deregisters: its sockets go) or SIGKILL (the driver killed: stale sockets stay). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  calls(): CsiCall[];
  /** Calls of `method` whose request names `volumeId`, received after the `since`-th call. */
  callsFor(method: string, volumeId: string, since?: number): CsiCall[];
  /** CreateVolume over the driver's socket: the backing directory a PV's handle names. */
  createVolume(name: string): Promise<void>;
  backingDir(volumeId: string): string;
}

export interface CsiE2e extends ApiModeE2e {
  rootDir: string;
  get(path: string): Promise<{ status: number; body: string }>;
  startAgent(extraArgs?: string[]): void;
  driver(name: string): E2eDriver;
  create(path: string, obj: Json): Promise<Json>;
  getPod(name: string): Pod | undefined;
  events(name: string): { reason: string; message: string; type: string }[];
}

const IMAGE = TEST_IMAGES.busybox;

export const sleepCmd = (script: string) => ['sh', '-c', `${script}; trap 'exit 0' TERM; sleep 3600 & wait`];

export async function csiE2e(prefix: string): Promise<CsiE2e> {
  const fx = await apiModeE2e(prefix);
  const ca = makeCA(`${prefix}-ca`);
  const client = issue(ca, 'e2e-admin', { cn: 'e2e-admin' });
  const port = randomPort();
  const rootDir = join(fx.dir, 'root');
  const drivers: E2eDriver[] = [];
  after(async () => {
    for (const d of drivers) await d.stop();
    // CSI_E2E_KEEP=<dir>: keep the agent's log, config and the drivers' calls.jsonl for a post-mortem.
    if (process.env.CSI_E2E_KEEP)
      cpSync(fx.dir, process.env.CSI_E2E_KEEP, {
        recursive: true,
        filter: (p) => !p.includes('/root/') && !p.endsWith('.sock'),
      });
  });
  const mp = mainPortClient(port, () => readFileSync(join(rootDir, 'pki', 'kubelet.crt')));
  return Object.assign(fx, {
    rootDir,
    get: (path: string) => mp.get(path, client),
    startAgent(extraArgs: string[] = []) {
      fx.kubelet = startKubelet({
        dir: fx.dir,
        manifests: fx.manifests,
        endpoint: fx.endpoint,
        port,
        extraArgs: [
          `--kubeconfig=${fx.kubeconfig}`,
          `--hostname-override=${fx.node}`,
          '--node-ip=127.0.0.1',
          '--node-status-update-frequency=2s',
          `--client-ca-file=${ca.cert}`,
          '--authorization-mode=AlwaysAllow',
          ...extraArgs,
        ],
      });
    },
    driver(name: string) {
      const d = makeDriver(fx.dir, rootDir, name);
      drivers.push(d);
      return d;
    },
    async create(path: string, obj: Json) {
      const r = await fx.api.call('POST', path, obj);
      assert.equal(r.status, 201, `POST ${path}: ${JSON.stringify(r.body)}`);
      return r.body as Json;
    },
    getPod: (name: string) => fx.api.store.get('pods', fx.ns, name) as Pod | undefined,
    events: (name: string) =>
      fx.api.store
        .list('events', fx.ns)
        .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name)
        .map((e) => ({ reason: String(e.reason), message: String(e.message), type: String(e.type) })),
  });
}

function makeDriver(dir: string, rootDir: string, name: string): E2eDriver {
  const endpoint = join(dir, `${name}.sock`);
  const stateDir = join(dir, `${name}-state`);
  const d: E2eDriver = {
    name,
    endpoint,
    stateDir,
    proc: undefined,
    async start() {
      d.proc = await spawnCsiDriver({
        endpoint,
        registrationDir: join(rootDir, 'plugins_registry'),
        driverName: name,
        // One node id for all: each driver's topology label is the node's, and must agree.
        nodeId: 'e2e-csi-node',
        stateDir,
      });
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      await d.proc?.stop(signal);
      d.proc = undefined;
    },
    calls: () => readCallLog(join(stateDir, 'calls.jsonl')),
    callsFor: (method, volumeId, since = 0) =>
      d
        .calls()
        .slice(since)
        .filter((c) => c.method === method && (c.request as { volumeId?: string }).volumeId === volumeId),
    createVolume: (volume: string) => createVolume(endpoint, volume),
    backingDir: (volumeId: string) => join(stateDir, 'volumes', volumeId),
  };
  return d;
}

async function createVolume(endpoint: string, name: string): Promise<void> {
  const pkg = loadCsiProtos();
  const client = new pkg.csi.v1.Controller(`unix:${endpoint}`, grpc.credentials.createInsecure());
  const cap = { mount: { fsType: '', mountFlags: [] }, accessMode: { mode: 'SINGLE_NODE_WRITER' } };
  try {
    await new Promise((resolve, reject) =>
      client.CreateVolume({ name, volumeCapabilities: [cap] }, { deadline: Date.now() + 5000 }, (err: any, r: any) =>
        err ? reject(err) : resolve(r),
      ),
    );
  } finally {
    client.close();
  }
}

/** storage.k8s.io/v1 CSIDriver. */
export function csiDriverObject(name: string, spec: Json): Json {
  return { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name }, spec };
}

/** A PV with a csi source, bound to `claim` when given (upstream checks the claimRef's uid too). */
export function csiPv(
  name: string,
  driver: string,
  handle: string,
  claim?: { namespace: string; name: string; uid: string },
): Json {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      csi: { driver, volumeHandle: handle, fsType: 'ext4' },
      ...(claim ? { claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', ...claim } } : {}),
    },
    status: { phase: claim ? 'Bound' : 'Available' },
  };
}

/** A PVC, bound to `volumeName` when given (the test plays the PV controller). */
export function pvc(ns: string, name: string, volumeName?: string, owner?: Json): Json {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns, ...(owner ? { ownerReferences: [owner] } : {}) },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      ...(volumeName ? { volumeName } : {}),
    },
    status: volumeName
      ? { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } }
      : { phase: 'Pending' },
  };
}

/** A pod on the node: one busybox container running `command`, `volumes` mounted at /data/<name>. */
export function volumePod(
  ns: string,
  node: string,
  name: string,
  spec: { volumes: Json[]; command: string[]; restartPolicy?: string },
): Pod {
  const mounts = spec.volumes.map((v) => ({ name: v.name, mountPath: `/data/${String(v.name)}` }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 5,
      restartPolicy: spec.restartPolicy ?? 'Always',
      containers: [
        { name: 'main', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: spec.command, volumeMounts: mounts },
      ],
      volumes: spec.volumes,
    },
  } as unknown as Pod;
}

export const claimVolume = (name: string, claimName: string): Json => ({
  name,
  persistentVolumeClaim: { claimName },
});

/** The pod's first container waiting in ContainerCreating (the phase still Pending). */
export function waitingCreating(pod: Pod | undefined): boolean {
  return (
    pod?.status?.phase === 'Pending' &&
    pod.status.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating'
  );
}

export const isRunning = (pod: Pod | undefined): boolean =>
  pod?.status?.phase === 'Running' && !!pod.status.containerStatuses?.[0]?.state?.running;

export async function waitRunning(fx: CsiE2e, name: string, ms = 60_000): Promise<Pod> {
  return waitFor(`pod ${name} running`, ms, () => (isRunning(fx.getPod(name)) ? fx.getPod(name) : undefined), 250);
}

/** Graceful DELETE through the API; resolves once the agent has finished the pod (it is gone). */
export async function deletePod(fx: CsiE2e, name: string, ms = 60_000): Promise<void> {
  const r = await fx.api.call('DELETE', `/api/v1/namespaces/${fx.ns}/pods/${name}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  await waitFor(`pod ${name} gone from the API`, ms, () => (fx.getPod(name) ? undefined : true), 250);
}

/** An exec in the pod's running container (through the CRI, not the agent). */
export async function execIn(fx: CsiE2e, pod: Pod, script: string): Promise<string> {
  const cid = pod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
  const r = await fx.runtime.execSync(cid, ['sh', '-c', script], 10);
  assert.equal(r.exitCode, 0, `${script}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

/** The pod's volume directories of the CSI plugin: pods/<uid>/volumes/kubernetes.io~csi. */
export const podCsiDir = (fx: CsiE2e, uid: string): string =>
  join(fx.rootDir, 'pods', uid, 'volumes', 'kubernetes.io~csi');

/** Mount points at or below `path` (mountinfo). */
export async function mountedAt(path: string): Promise<string[]> {
  const text = readFileSync('/proc/self/mountinfo', 'utf8');
  const exact = text.split('\n').some((l) => l.split(' ')[4] === path);
  return [...(exact ? [path] : []), ...(await mountsUnder(path))];
}
