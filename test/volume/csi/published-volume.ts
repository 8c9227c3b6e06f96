/**
 * A real CSI volume for the stats and expansion tests: the test CSI driver (spawned as its own
 * process) creates it (Controller CreateVolume), and the kubelet's CsiNodeClient stages and
 * publishes it through real bind mounts; `cleanUp` unpublishes, unstages and stops the driver.
 */
import * as grpc from '@grpc/grpc-js';
import { join } from 'node:path';
import { mountsUnder, unmount } from '../../../src/volume/mount.js';
import type { CsiMountedInfo } from '../../../src/volume/csi/csi-types.js';
import type { CsiDriver } from '../../../src/volume/csi/csi-registration.js';
import { CsiNodeClient } from '../../../src/volume/csi/node-client.js';
import { DEFAULT_NODE_CAPABILITIES, loadCsiProtos } from '../../support/csi-driver.js';
import { spawnCsiDriver, type CsiDriverProcess } from '../../support/csi-driver-process.js';

export const isRoot = process.getuid?.() === 0;

export interface TestDriver {
  proc: CsiDriverProcess;
  driver: CsiDriver;
  stateDir: string;
  /** Creates and publishes volume `id` (capacity `bytes`) as a pod's target would have it. */
  publish(id: string, bytes?: number): Promise<CsiMountedInfo>;
}

async function createVolume(endpoint: string, name: string, bytes: number): Promise<void> {
  const Controller = loadCsiProtos().csi.v1.Controller;
  const client = new Controller(`unix:${endpoint}`, grpc.credentials.createInsecure());
  try {
    await new Promise((resolve, reject) =>
      client.CreateVolume(
        { name, capacityRange: { requiredBytes: String(bytes) }, volumeCapabilities: [] },
        { deadline: Date.now() + 5000 },
        (err: unknown, reply: unknown) => (err ? reject(err) : resolve(reply)),
      ),
    );
  } finally {
    client.close();
  }
}

/** Starts the driver `name` under `dir` (its socket, state and the volumes' paths). */
export async function startTestDriver(dir: string, name: string): Promise<TestDriver> {
  const endpoint = join(dir, `${name}.sock`);
  const stateDir = join(dir, `${name}-state`);
  // VOLUME_CONDITION on top of the defaults: the CSIVolumeHealth cases need it.
  const nodeCapabilities = [...DEFAULT_NODE_CAPABILITIES, 'VOLUME_CONDITION'];
  const proc = await spawnCsiDriver({ endpoint, driverName: name, nodeId: 'node-a', stateDir, nodeCapabilities });
  const driver: CsiDriver = { name, endpoint, highestSupportedVersion: { major: 1, minor: 0, patch: 0 } };
  const publish = async (id: string, bytes = 1 << 20): Promise<CsiMountedInfo> => {
    await createVolume(endpoint, id, bytes);
    const client = new CsiNodeClient(endpoint, 5000);
    const stagingPath = join(dir, 'plugins', name, id, 'globalmount');
    const targetPath = join(dir, 'pods', id, 'mount');
    const capability = { accessMode: 'SINGLE_NODE_WRITER' as const };
    try {
      await client.nodeStageVolume({ volumeId: id, stagingTargetPath: stagingPath, capability });
      await client.nodePublishVolume({ volumeId: id, stagingTargetPath: stagingPath, targetPath, capability });
    } finally {
      client.close();
    }
    return { driver: name, volumeHandle: id, targetPath, stagingPath };
  };
  return { proc, driver, stateDir, publish };
}

/** Stops the drivers and undoes every mount under dir (deepest first). */
export async function cleanUp(dir: string, drivers: readonly (TestDriver | undefined)[]): Promise<void> {
  for (const d of drivers) await d?.proc.stop();
  const points = (await mountsUnder(dir)).sort((a, b) => b.length - a.length);
  for (const p of points) await unmount(p);
}
