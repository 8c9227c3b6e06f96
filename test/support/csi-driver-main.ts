/**
 * The test CSI driver as a process of its own, for e2e tests that kill and restart it:
 *   node dist/test/support/csi-driver-main.js --endpoint <csi.sock> --registration-dir <dir>
 *     --driver-name <name> --node-id <id> --state-dir <dir> [--max-volumes N]
 *     [--node-capabilities STAGE_UNSTAGE_VOLUME,GET_VOLUME_STATS,...]
 * Prints one JSON line `{"ready":true,...}` once both sockets listen; stops on SIGTERM/SIGINT.
 */
import { parseArgs } from 'node:util';
import { startCsiDriver } from './csi-driver.js';

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string' },
    'registration-dir': { type: 'string' },
    'driver-name': { type: 'string' },
    'node-id': { type: 'string' },
    'state-dir': { type: 'string' },
    'max-volumes': { type: 'string' },
    'node-capabilities': { type: 'string' },
  },
  strict: true,
});

function required(name: 'endpoint' | 'driver-name' | 'node-id' | 'state-dir'): string {
  const v = values[name];
  if (!v) {
    process.stderr.write(`csi-driver: --${name} is required\n`);
    process.exit(2);
  }
  return v;
}

const driver = await startCsiDriver({
  endpoint: required('endpoint'),
  registrationDir: values['registration-dir'],
  driverName: required('driver-name'),
  nodeId: required('node-id'),
  stateDir: required('state-dir'),
  maxVolumes: values['max-volumes'] === undefined ? undefined : Number(values['max-volumes']),
  nodeCapabilities: values['node-capabilities']?.split(',').filter((c) => c !== ''),
});
process.stdout.write(
  JSON.stringify({ ready: true, endpoint: driver.opts.endpoint, registration: driver.registrationSocket }) + '\n',
);
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.once(sig, () => {
    void driver.stop().then(() => process.exit(0));
  });
}
