/**
 * A test peer (CSI driver, device plugin) as a child process of its own, for e2e tests that kill
 * it and start it again: waits (bounded) for its `{"ready":true,...}` line on stdout and stops it
 * by its own pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;

export interface ReadyChild {
  child: ChildProcess;
  pid: number;
  /** The parsed ready line. */
  ready: Record<string, unknown>;
  /** SIGTERM (SIGKILL: the "peer killed" case), then waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

function waitReady(child: ChildProcess, label: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${label} not ready in ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.includes('"ready":true'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code}) before it was ready`));
    });
  });
}

function stopper(child: ChildProcess): ReadyChild['stop'] {
  return async (signal = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
}

/** Starts `node <main> <args>` and resolves once it printed its ready line. */
export async function spawnReadyChild(
  main: string,
  args: string[],
  label: string,
  env: NodeJS.ProcessEnv = {},
): Promise<ReadyChild> {
  const child = spawn(process.execPath, [main, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const stop = stopper(child);
  try {
    const ready = await waitReady(child, label);
    return { child, pid: child.pid!, ready, stop };
  } catch (err) {
    await stop('SIGKILL');
    throw err;
  }
}
