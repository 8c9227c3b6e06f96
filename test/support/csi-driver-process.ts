/**
 * The test CSI driver (csi-driver-main.ts) as a child process, for e2e tests that kill it
 * mid-pod and start it again. Waits (bounded) for its ready line; stops it by its own pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CsiDriverOptions } from './csi-driver.js';

const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;

export interface CsiDriverProcess {
  child: ChildProcess;
  pid: number;
  /** SIGTERM (SIGKILL: the "driver killed" case), then waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

function cliArgs(opts: CsiDriverOptions): string[] {
  const args = ['--endpoint', opts.endpoint, '--driver-name', opts.driverName, '--node-id', opts.nodeId];
  args.push('--state-dir', opts.stateDir);
  if (opts.registrationDir !== undefined) args.push('--registration-dir', opts.registrationDir);
  if (opts.maxVolumes !== undefined) args.push('--max-volumes', String(opts.maxVolumes));
  if (opts.nodeCapabilities !== undefined) args.push('--node-capabilities', opts.nodeCapabilities.join(','));
  return args;
}

function waitReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`csi driver not ready in ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes('"ready":true')) return;
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`csi driver exited (${code}) before it was ready`));
    });
  });
}

function stopper(child: ChildProcess): CsiDriverProcess['stop'] {
  return async (signal = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
}

/** Starts `node dist/test/support/csi-driver-main.js` with the driver's options. */
export async function spawnCsiDriver(opts: CsiDriverOptions, env: NodeJS.ProcessEnv = {}): Promise<CsiDriverProcess> {
  const main = join(dirname(fileURLToPath(import.meta.url)), 'csi-driver-main.js');
  const child = spawn(process.execPath, [main, ...cliArgs(opts)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const stop = stopper(child);
  try {
    await waitReady(child);
  } catch (err) {
    await stop('SIGKILL');
    throw err;
  }
  return { child, pid: child.pid!, stop };
}
