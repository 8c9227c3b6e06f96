/**
 * Starts kubelet-ts as a child process for end-to-end tests (the real CLI, real containerd) and
 * stops it by the pid it recorded. Every wait is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync, createWriteStream } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'node:http';
import { after } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { connectRuntime } from '../../src/cri/index.js';
import { mountsUnder, unmount } from '../../src/volume/mount.js';
import { removeTestPods, runtimeEndpoint } from './containerd.js';
import { testTempDir } from './temp-dir.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface KubeletProcess {
  dir: string;
  manifests: string;
  readOnlyPort: number;
  /** The main (TLS) port. */
  port: number;
  healthzPort: number;
  logFile: string;
  child: ChildProcess;
  pid: number;
}

/**
 * A port for a test server: random in 10000–32767, below Linux's ephemeral range (32768–60999),
 * so it never collides with the local port of an outgoing connection (EADDRINUSE at start).
 */
export function randomPort(): number {
  return 10000 + Math.floor(Math.random() * 22768);
}

export function makeKubeletDirs(): { dir: string; manifests: string } {
  const dir = testTempDir('kts-e2e-');
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  return { dir, manifests };
}

export function startKubelet(opts: {
  dir: string;
  manifests: string;
  endpoint: string;
  readOnlyPort?: number;
  port?: number;
  healthzPort?: number;
  extraArgs?: string[];
  extraConfig?: string[];
  logLevel?: string;
  /** The whole config file instead of the default one (add `failCgroupV1: false` on cgroup v1 hosts). */
  configText?: (ports: { port: number; readOnlyPort: number; healthzPort: number }) => string;
}): KubeletProcess {
  const readOnlyPort = opts.readOnlyPort ?? randomPort();
  const healthzPort = opts.healthzPort ?? randomPort();
  // Random, so parallel agents (and a real kubelet on this host) never collide on 10250.
  const port = opts.port ?? randomPort();
  const config = join(opts.dir, 'config.yaml');
  if (opts.configText) writeFileSync(config, opts.configText({ port, readOnlyPort, healthzPort }));
  else
    writeFileSync(
      config,
      [
        'apiVersion: kubelet.config.k8s.io/v1beta1',
        'kind: KubeletConfiguration',
        `staticPodPath: ${opts.manifests}`,
        `containerRuntimeEndpoint: ${opts.endpoint}`,
        `readOnlyPort: ${readOnlyPort}`,
        `port: ${port}`,
        'address: 127.0.0.1',
        `healthzPort: ${healthzPort}`,
        `podLogsDir: ${join(opts.dir, 'logs')}`,
        'fileCheckFrequency: 20s',
        // Upstream 1.35 refuses cgroup v1 hosts (these are) unless told so; harmless on cgroup v2.
        'failCgroupV1: false',
        ...(opts.extraConfig ?? []),
        '',
      ].join('\n'),
    );
  const logFile = join(opts.dir, `kubelet-${Date.now()}.log`);
  const out = createWriteStream(logFile);
  // The bin itself (not `node bin/...`), as operators run it: its shebang carries the V8 flags.
  // JSON logs: the tests pick lines by their fields ("reason":"Evicted", msg, err).
  const child = spawn(
    join(REPO_ROOT, 'bin', 'kubelet-ts.js'),
    [
      `--config=${config}`,
      `--root-dir=${join(opts.dir, 'root')}`,
      '--hostname-override=e2e-node',
      '--logging-format=json',
      ...(opts.extraArgs ?? []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBELET_TS_LOG_LEVEL: opts.logLevel ?? 'debug' },
    },
  );
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  return { ...opts, readOnlyPort, port, healthzPort, logFile, child, pid: child.pid! };
}

/** Stop by the recorded pid; SIGKILL when `hard` (a crash), else SIGTERM then SIGKILL. */
export async function stopKubelet(k: Pick<KubeletProcess, 'child' | 'pid'>, hard = false): Promise<void> {
  if (k.child.exitCode !== null || k.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => k.child.once('exit', () => r()));
  process.kill(k.pid, hard ? 'SIGKILL' : 'SIGTERM');
  const t = setTimeout(() => {
    try {
      process.kill(k.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }, 10_000);
  await exited;
  clearTimeout(t);
}

export function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

export async function getPods(k: KubeletProcess): Promise<Pod[]> {
  try {
    const r = await httpGet(k.readOnlyPort, '/pods');
    return r.status === 200 ? (JSON.parse(r.body).items as Pod[]) : [];
  } catch {
    return [];
  }
}

/** Poll until `check` returns a value (not undefined), or fail after `timeoutMs` with `what`. */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined> | T | undefined,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Unmounts what the agent mounted under an e2e directory (tmpfs of secret, projected, downwardAPI
 * and memory emptyDir volumes of pods still running when the file ends: a stopped agent leaves
 * them, as a real one must).
 */
export async function unmountUnder(dir: string): Promise<void> {
  for (const m of await mountsUnder(dir))
    await unmount(m).catch((err: unknown) => console.error('unmount failed', err));
}

/**
 * The usual set-up of an e2e file that runs one agent: a CRI connection to the test containerd,
 * fresh agent directories, and an after() hook that stops the agent (read through `current`,
 * since files restart it) and removes every pod of the file's namespace.
 */
export async function agentTestContext(namespace: string, current: () => KubeletProcess | undefined) {
  const endpoint = await runtimeEndpoint();
  const { runtime } = connectRuntime(endpoint);
  const dirs = makeKubeletDirs();
  after(async () => {
    const k = current();
    if (k) await stopKubelet(k);
    await removeTestPods(runtime, { namespace }, endpoint);
    await unmountUnder(dirs.dir);
    runtime.close();
  });
  return { endpoint, runtime, ...dirs };
}
