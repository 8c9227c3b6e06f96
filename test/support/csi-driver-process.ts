/**
 * The test CSI driver (csi-driver-main.ts) as a child process, for e2e tests that kill it
 * mid-pod and start it again. Waits (bounded) for its ready line; stops it by its own pid.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CsiDriverOptions } from './csi-driver.js';
import { spawnReadyChild, type ReadyChild } from './ready-child.js';

export type CsiDriverProcess = Omit<ReadyChild, 'ready'>;

function cliArgs(opts: CsiDriverOptions): string[] {
  const args = ['--endpoint', opts.endpoint, '--driver-name', opts.driverName, '--node-id', opts.nodeId];
  args.push('--state-dir', opts.stateDir);
  if (opts.registrationDir !== undefined) args.push('--registration-dir', opts.registrationDir);
  if (opts.maxVolumes !== undefined) args.push('--max-volumes', String(opts.maxVolumes));
  if (opts.nodeCapabilities !== undefined) args.push('--node-capabilities', opts.nodeCapabilities.join(','));
  return args;
}

/** Starts `node dist/test/support/csi-driver-main.js` with the driver's options. */
export async function spawnCsiDriver(opts: CsiDriverOptions, env: NodeJS.ProcessEnv = {}): Promise<CsiDriverProcess> {
  const main = join(dirname(fileURLToPath(import.meta.url)), 'csi-driver-main.js');
  return spawnReadyChild(main, cliArgs(opts), 'csi driver', env);
}
