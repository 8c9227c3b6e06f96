/**
 * The test device plugin as a process of its own, for e2e tests that kill and restart it:
 *   node dist/test/support/device-plugin-main.js --resource-name <name> --plugin-dir <dir>
 *     --state-dir <dir> [--socket-name <file>] [--registration-dir <plugins_registry>]
 * Prints one JSON line `{"ready":true,...}` once it serves (and has tried to register if
 * kubelet.sock was there); on SIGTERM/SIGINT it ends its streams, removes its socket and exits 0.
 */
import { parseArgs } from 'node:util';
import { startDevicePlugin } from './device-plugin.js';

const { values } = parseArgs({
  options: {
    'resource-name': { type: 'string' },
    'plugin-dir': { type: 'string' },
    'state-dir': { type: 'string' },
    'socket-name': { type: 'string' },
    'registration-dir': { type: 'string' },
  },
  strict: true,
});

function required(name: 'resource-name' | 'plugin-dir' | 'state-dir'): string {
  const v = values[name];
  if (!v) {
    process.stderr.write(`device-plugin: --${name} is required\n`);
    process.exit(2);
  }
  return v;
}

const plugin = await startDevicePlugin({
  resourceName: required('resource-name'),
  pluginDir: required('plugin-dir'),
  stateDir: required('state-dir'),
  socketName: values['socket-name'],
  registrationDir: values['registration-dir'],
});
process.stdout.write(
  JSON.stringify({
    ready: true,
    socket: plugin.socketPath,
    registration: plugin.registrationSocket,
    registrations: plugin.registrations,
  }) + '\n',
);
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.once(sig, () => {
    void plugin.stop().then(() => process.exit(0));
  });
}
