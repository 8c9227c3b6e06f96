/**
 * The test device plugin (device-plugin-main.ts) as a child process: "the plugin disappears" is
 * stop() (SIGTERM: streams end, socket removed) or stop('SIGKILL'); "it comes back" is a new spawn
 * on the same state dir.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DevicePluginOptions } from './device-plugin.js';
import { spawnReadyChild, type ReadyChild } from './ready-child.js';

export type DevicePluginProcess = ReadyChild;

function cliArgs(opts: DevicePluginOptions): string[] {
  const args = ['--resource-name', opts.resourceName, '--plugin-dir', opts.pluginDir, '--state-dir', opts.stateDir];
  if (opts.socketName !== undefined) args.push('--socket-name', opts.socketName);
  if (opts.registrationDir !== undefined) args.push('--registration-dir', opts.registrationDir);
  return args;
}

/** Starts `node dist/test/support/device-plugin-main.js`; `devices` is not passed (write devices.json first). */
export async function spawnDevicePlugin(
  opts: DevicePluginOptions,
  env: NodeJS.ProcessEnv = {},
): Promise<DevicePluginProcess> {
  const main = join(dirname(fileURLToPath(import.meta.url)), 'device-plugin-main.js');
  return spawnReadyChild(main, cliArgs(opts), 'device plugin', env);
}
