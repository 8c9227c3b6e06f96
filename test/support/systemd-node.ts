/**
 * A systemd node for e2e tests (scripts/systemd-node.sh): Debian's systemd as PID 1 of private
 * namespaces, a containerd inside it with SystemdCgroup = true, and commands run inside. Every
 * process inside dies with that systemd, which stop() kills by the pid the script recorded.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { REPO_ROOT, TEST_STATE_DIR } from './containerd.js';
import { waitFor } from './kubelet-process.js';

const execFileAsync = promisify(execFile);
const SCRIPT = join(REPO_ROOT, 'scripts', 'systemd-node.sh');
const CONTAINERD = join(REPO_ROOT, 'scripts', 'containerd.sh');

/** The containerd release the suite runs now (scripts/test.sh passes it; else the test containerd's). */
export function suiteContainerdVersion(): string {
  if (process.env.KUBELET_TS_CTR_VERSION) return process.env.KUBELET_TS_CTR_VERSION;
  try {
    return readFileSync(join(TEST_STATE_DIR, 'version'), 'utf8').trim() || '1.6';
  } catch {
    return '1.6';
  }
}

export interface SystemdNodeOptions {
  stateDir: string;
  /** [host path, path inside] bind mounts. */
  binds?: Array<[string, string]>;
  hostname?: string;
}

export class SystemdNode {
  private constructor(
    readonly stateDir: string,
    readonly hostPid: number,
  ) {}

  static async start(opts: SystemdNodeOptions): Promise<SystemdNode> {
    // A node left by an interrupted run is stopped first (its pid is recorded under the state dir).
    await run(SCRIPT, ['stop', '--state-dir', opts.stateDir]);
    const args = ['start', '--state-dir', opts.stateDir, ...(opts.hostname ? ['--hostname', opts.hostname] : [])];
    for (const [src, dst] of opts.binds ?? []) args.push('--bind', `${src}:${dst}`);
    const out = await run(SCRIPT, args);
    return new SystemdNode(opts.stateDir, Number(out.trim().split('\n').pop()));
  }

  /** Runs a command inside the node and returns its stdout. */
  exec(args: string[], unit?: string): Promise<string> {
    return run(SCRIPT, ['exec', '--state-dir', this.stateDir, ...(unit ? ['--unit', unit] : []), '--', ...args]);
  }

  /** systemctl inside the node. */
  systemctl(...args: string[]): Promise<string> {
    return this.exec(['systemctl', '--no-pager', ...args]);
  }

  /** A unit property (systemctl show -p NAME --value). */
  async unitProperty(unit: string, property: string): Promise<string> {
    return (await this.systemctl('show', '-p', property, '--value', unit)).trim();
  }

  /** Starts a containerd inside (SystemdCgroup = true), in scope kts-containerd; returns its endpoint. */
  async startContainerd(version: string, bridge: string, subnet: string): Promise<string> {
    const out = await this.exec(
      [
        'bash',
        CONTAINERD,
        'start',
        '--state-dir',
        join(this.stateDir, 'containerd'),
        '--version',
        version,
        '--systemd-cgroup',
        '--bridge',
        bridge,
        '--subnet',
        subnet,
      ],
      'kts-containerd',
    );
    const endpoint = out
      .split('\n')
      .filter((l) => l.startsWith('unix://'))
      .pop();
    if (!endpoint) throw new Error(`containerd.sh start printed no endpoint: ${out}`);
    return endpoint;
  }

  /**
   * Starts a long-running command inside the node in a scope named `unit`, its output to
   * `logFile`. The host pid is that of the command itself (nsenter's child), for stop().
   */
  async spawn(args: string[], unit: string, logFile: string): Promise<{ child: ChildProcess; pid: number }> {
    const child = spawn('bash', [SCRIPT, 'exec', '--state-dir', this.stateDir, '--unit', unit, '--', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = createWriteStream(logFile);
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    // bash execs nsenter (same pid), which forks the command into the pid namespace. Before that
    // exec, bash has children of its own (the subshell of `pid=$(node_pid)`): a child is the
    // command's only once the parent is nsenter (a wrong pid once left an agent running in CI).
    const pid = await waitFor(
      `the host pid of ${unit}`,
      10_000,
      () => {
        if (readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim() !== 'nsenter') return undefined;
        const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
        return kids ? Number(kids.split(' ')[0]) : undefined;
      },
      20,
    );
    return { child, pid };
  }

  /** The directory of the node's cgroup root in a host hierarchy (e.g. 'cpu', 'memory', 'unified'). */
  cgroupRoot(hierarchy: string): string {
    const dirs = readFileSync(join(this.stateDir, 'cgroups.list'), 'utf8').split('\n');
    const dir = dirs.find((d) => d.startsWith(`/sys/fs/cgroup/${hierarchy}/`));
    if (!dir) throw new Error(`no ${hierarchy} hierarchy in ${this.stateDir}/cgroups.list`);
    return dir;
  }

  /** Stops the containerd inside (its bridge is the host's), then the node. */
  async stop(): Promise<void> {
    await this.exec(['bash', CONTAINERD, 'stop', '--state-dir', join(this.stateDir, 'containerd')]).catch(
      (err: unknown) => console.error('containerd.sh stop in the systemd node failed', err),
    );
    await run(SCRIPT, ['stop', '--state-dir', this.stateDir]);
  }
}

async function run(script: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [script, ...args], { timeout: 180_000, maxBuffer: 4 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    throw new Error(`${script} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}
