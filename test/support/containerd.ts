/**
 * The real containerd that e2e tests drive.
 *
 * `runtimeEndpoint()` returns $KUBELET_TS_TEST_CRI_ENDPOINT when the test script started one
 * containerd for the whole run; otherwise it starts (or finds already running) the test daemon
 * with `scripts/containerd.sh start --state-dir <repo>/.state/test-containerd` and returns its
 * endpoint. That daemon is shared by every test process and is left running for the next run;
 * `stopTestContainerd()` (a global teardown, or `scripts/containerd.sh stop --state-dir
 * .state/test-containerd`) stops it and cleans up after it.
 *
 * Tests remove what they create with `removeTestPods(runtime, match)`.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Labels, RuntimeService } from '../../src/cri/types.js';
import { CriError } from '../../src/errors.js';
import { sleep } from '../../src/util/clock.js';

const execFileAsync = promisify(execFile);

export const TEST_IMAGES = {
  busybox: 'localhost/kubelet-ts/busybox:latest',
  pause: 'localhost/kubelet-ts/pause:latest',
  /** busybox whose image config User is "1000", "1000:1000" and "nobody" (scripts/build-images.mjs). */
  busyboxUid1000: 'localhost/kubelet-ts/busybox-uid1000:latest',
  busyboxUid1000Gid1000: 'localhost/kubelet-ts/busybox-uid1000-gid1000:latest',
  busyboxNobody: 'localhost/kubelet-ts/busybox-nobody:latest',
} as const;

/** Label key tests may put on their sandboxes/containers to find them again. */
export const TEST_LABEL = 'kubelet-ts.test/owner';

/** Env var through which the test script hands its containerd endpoint to the test processes. */
export const ENDPOINT_ENV = 'KUBELET_TS_TEST_CRI_ENDPOINT';

function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'scripts', 'containerd.sh'))) return dir;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(
        `no repository root (package.json + scripts/containerd.sh) above ${fileURLToPath(import.meta.url)}`,
      );
    dir = parent;
  }
}

export const REPO_ROOT = findRepoRoot();
export const TEST_STATE_DIR = join(REPO_ROOT, '.state', 'test-containerd');
const SCRIPT = join(REPO_ROOT, 'scripts', 'containerd.sh');

let started: Promise<string> | undefined;

async function containerdScript(...args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [SCRIPT, ...args, '--state-dir', TEST_STATE_DIR], {
      timeout: 180_000,
      maxBuffer: 4 * 1024 * 1024,
    });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    throw new Error(`scripts/containerd.sh ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

/** The CRI endpoint (unix:///...) of the test containerd, starting it if needed. */
export function runtimeEndpoint(): Promise<string> {
  const fromEnv = process.env[ENDPOINT_ENV];
  if (fromEnv) return Promise.resolve(fromEnv);
  started ??= containerdScript('start').then((out) => {
    const endpoint = out
      .split('\n')
      .filter((l) => l.startsWith('unix://'))
      .pop();
    if (!endpoint) throw new Error(`scripts/containerd.sh start printed no endpoint: ${out}`);
    return endpoint;
  });
  started.catch(() => {
    started = undefined;
  });
  return started;
}

/**
 * Stops the test containerd started by runtimeEndpoint() (and removes its containers, shims,
 * mounts, network). Does nothing when the endpoint came from $KUBELET_TS_TEST_CRI_ENDPOINT: the
 * script that started that one stops it. Other test processes may share the daemon: call this
 * only from a global teardown.
 */
export async function stopTestContainerd(): Promise<void> {
  if (process.env[ENDPOINT_ENV]) return;
  started = undefined;
  await containerdScript('stop');
}

export interface TestPodMatch {
  /** Every label must match (CRI label selector). */
  labels?: Labels;
  /** Sandbox metadata.name starts with this (containers: their sandbox's name). */
  namePrefix?: string;
  /** Sandbox metadata.namespace equals this. */
  namespace?: string;
}

function ignoreNotFound(err: unknown): void {
  if (err instanceof CriError && err.code === 'KTS_ERR_CRI_NOT_FOUND') return;
  throw err;
}

/**
 * How long removal keeps retrying what containerd refuses for now: a container still in its
 * "starting" state after a StartContainer whose caller gave up, or an exit not yet handled.
 */
const REMOVE_RETRY_MS = 20_000;
/** After this long refused with "cannot delete running task", the task is deleted with ctr. */
const LEAKED_TASK_AFTER_MS = 3_000;

/**
 * containerd 2.x (seen in CI after the frozen-runtime test, whose agent's StartContainer calls
 * time out) can keep a task whose container its CRI plugin already reports exited; RemoveContainer
 * then fails with "cannot delete running task" for good, and no CRI call removes the task. A test
 * cleaning up after itself kills and deletes it with containerd's own client, and says so.
 */
async function deleteLeakedTask(endpoint: string, id: string): Promise<void> {
  const sock = endpoint.replace(/^unix:\/\//, '');
  process.stderr.write(
    `removeTestPods: containerd refuses to remove ${id} ("cannot delete running task"); deleting its task with ctr\n`,
  );
  for (const args of [
    ['task', 'kill', '-s', 'SIGKILL', id],
    ['task', 'delete', '-f', id],
  ]) {
    await execFileAsync('ctr', ['-a', sock, '-n', 'k8s.io', ...args], { timeout: 30_000 }).catch(() => undefined);
  }
}

/** Runs `remove` until it succeeds or REMOVE_RETRY_MS have passed; `onRefused` sees each refusal. */
async function retryRefused(
  remove: () => Promise<void>,
  onRefused?: (err: Error, waitedMs: number) => Promise<void>,
): Promise<void> {
  const start = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await remove();
    } catch (err) {
      const waited = Date.now() - start;
      if (waited > REMOVE_RETRY_MS) throw err;
      await onRefused?.(err as Error, waited);
      await sleep(Math.min(250 * attempt, 1000));
    }
  }
}

/**
 * Stops and removes every sandbox matching `match`, and every container in them or carrying the
 * labels. Refuses an empty match (that would remove everything on the runtime). What containerd
 * refuses for now is retried for a while; what still fails does not stop the rest from being
 * removed, and is thrown at the end. `endpoint` (default: the test containerd's) is where a leaked
 * task is deleted with ctr. Returns how many sandboxes and containers it removed.
 */
export async function removeTestPods(
  runtime: RuntimeService,
  match: TestPodMatch,
  endpoint?: string,
): Promise<{ sandboxes: number; containers: number }> {
  const hasLabels = match.labels && Object.keys(match.labels).length > 0;
  if (!hasLabels && !match.namePrefix && !match.namespace) throw new Error('removeTestPods: empty match');
  const sandboxes = (await runtime.listPodSandbox(hasLabels ? { labelSelector: match.labels } : undefined)).filter(
    (s) =>
      (!match.namePrefix || s.metadata.name.startsWith(match.namePrefix)) &&
      (!match.namespace || s.metadata.namespace === match.namespace),
  );
  const sandboxIds = new Set(sandboxes.map((s) => s.id));
  const containers = (await runtime.listContainers()).filter(
    (c) =>
      sandboxIds.has(c.podSandboxId) ||
      (hasLabels && Object.entries(match.labels!).every(([k, v]) => c.labels[k] === v)),
  );
  const socket = () => (endpoint ? Promise.resolve(endpoint) : runtimeEndpoint());
  const failed: unknown[] = [];
  for (const c of containers) {
    const remove = async () => {
      await runtime.stopContainer(c.id, 0).catch(ignoreNotFound);
      await runtime.removeContainer(c.id).catch(ignoreNotFound);
    };
    const leaked = async (err: Error, waited: number) => {
      if (waited > LEAKED_TASK_AFTER_MS && /cannot delete running task/.test(err.message))
        await deleteLeakedTask(await socket(), c.id);
    };
    await retryRefused(remove, leaked).catch((err) => failed.push(err));
  }
  for (const s of sandboxes) {
    const remove = async () => {
      await runtime.stopPodSandbox(s.id).catch(ignoreNotFound);
      await runtime.removePodSandbox(s.id).catch(ignoreNotFound);
    };
    await retryRefused(remove).catch((err) => failed.push(err));
  }
  if (failed.length === 1) throw failed[0];
  if (failed.length > 1)
    throw new AggregateError(
      failed,
      `removeTestPods: ${failed.length} removals failed: ${failed.map((e) => (e as Error).message).join('; ')}`,
    );
  return { sandboxes: sandboxes.length, containers: containers.length };
}

/** containerd's major.minor, from CRI Version (e.g. "1.7.24~ds1", "2.1.9+unknown", "v2.0.0"). */
export async function runtimeRelease(runtime: RuntimeService): Promise<[number, number]> {
  const v = await runtime.version();
  const m = /^v?(\d+)\.(\d+)/.exec(v.runtimeVersion);
  if (!m) throw new Error(`not a containerd version: ${v.runtimeVersion}`);
  return [Number(m[1]), Number(m[2])];
}

/**
 * The CDI spec directory of the containerd at `endpoint` (scripts/containerd.sh writes it to
 * DIR/cdi.env): undefined on 1.6 (no CDI) or for a daemon the script did not start.
 */
export function cdiSpecDir(endpoint: string): string | undefined {
  const env = join(dirname(endpoint.replace(/^unix:\/\//, '')), 'cdi.env');
  if (!existsSync(env)) return undefined;
  const m = /^CDI_SPEC_DIR=(.*)$/m.exec(readFileSync(env, 'utf8'));
  return m?.[1] ? m[1] : undefined;
}

/** A name unique to this process and call, for sandbox names / label values in tests. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
}

/** A containerd of a test's own, started with an empty CNI conf dir (`containerd.sh --no-cni-config`). */
export interface NoCniContainerd {
  endpoint: string;
  /** Copies the conflist the script set aside into the conf dir: the runtime's network comes up. */
  writeCniConfig(): void;
  /** Stops the daemon and removes everything it left (containers, mounts, bridge). */
  stop(): Promise<void>;
}

/**
 * The bridge and /16 of a second daemon: derived from $KUBELET_TS_CTR_BRIDGE/SUBNET when set (work
 * trees of one machine each have their own, 10.1NN → 10.2NN), else the script's default for the
 * state dir (a hash of its path).
 */
function secondNetwork(): string[] {
  const bridge = process.env.KUBELET_TS_CTR_BRIDGE;
  const m = /^10\.(\d+)\.0\.0\/16$/.exec(process.env.KUBELET_TS_CTR_SUBNET ?? '');
  if (!bridge || !m) return [];
  return ['--bridge', `${bridge.slice(0, 13)}nc`, '--subnet', `10.${(Number(m[1]) + 100) % 256}.0.0/16`];
}

/**
 * Starts a containerd of the release under test ($KUBELET_TS_CTR_VERSION) under `stateDir` with
 * no CNI config, as a freshly joined node before its network add-on: NetworkReady=false.
 */
export async function startNoCniContainerd(stateDir: string): Promise<NoCniContainerd> {
  const env = { ...process.env };
  delete env.KUBELET_TS_CTR_BRIDGE;
  delete env.KUBELET_TS_CTR_SUBNET;
  const run = async (...args: string[]) => {
    try {
      const opts = { env, timeout: 180_000, maxBuffer: 4 * 1024 * 1024 };
      return (await execFileAsync('bash', [SCRIPT, ...args, '--state-dir', stateDir], opts)).stdout.trim();
    } catch (err) {
      const e = err as { stderr?: string; message?: string };
      throw new Error(`scripts/containerd.sh ${args[0]} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
    }
  };
  const out = await run('start', '--no-cni-config', ...secondNetwork());
  const endpoint = out
    .split('\n')
    .filter((l) => l.startsWith('unix://'))
    .pop();
  if (!endpoint) throw new Error(`scripts/containerd.sh start printed no endpoint: ${out}`);
  const conflist = '10-kubelet-ts.conflist';
  return {
    endpoint,
    writeCniConfig: () => copyFileSync(join(stateDir, 'cni', conflist), join(stateDir, 'cni', 'net.d', conflist)),
    stop: async () => void (await run('stop')),
  };
}
