/**
 * CSI on this node (upstream pkg/volume/csi and pkg/kubelet/pluginmanager): the plugin manager
 * over <root-dir>/plugins_registry with the CSI registration handler, which installs each
 * registered driver into the Node and its CSINode object (API server mode) through the node
 * info manager, and uninstalls it when its registration socket goes.
 */
import type { ApiClient } from '../../apiclient/index.js';
import type { CreateFsWatcher } from '../../fswatch/types.js';
import { log } from '../../util/log.js';
import { CsiRegistrationHandler } from './csi-registration.js';
import { NodeInfoManager } from './node-info-manager.js';
import { CSI_PLUGIN, PluginManager, type ReconcilerTimeouts } from '../../pluginmanager/index.js';

export { CsiRegistrationHandler } from './csi-registration.js';
export { NodeInfoManager, NODE_ID_ANNOTATION } from './node-info-manager.js';
export { PluginManager, PLUGINS_REGISTRY_DIR, CSI_PLUGIN } from '../../pluginmanager/index.js';

export interface CsiPluginManagerOptions {
  rootDir: string;
  createFsWatcher: CreateFsWatcher;
  nodeName: string;
  /** API server mode: where the drivers are installed. Standalone: none, drivers are only kept registered. */
  client?: ApiClient;
  timeouts?: Partial<ReconcilerTimeouts>;
  /** The delays between CSINode initialisation tries (default INIT_RETRY_MS). */
  initRetryMs?: readonly number[];
}

/** The Node registers in parallel with this start: tries 1 s, 2 s, 4 s … apart, about two minutes in all. */
const INIT_RETRY_MS = [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000];

/**
 * upstream initializeCSINode: retried until the Node exists; a failure after the last try is
 * logged (a driver's registration creates the CSINode later anyway), not fatal.
 */
async function initializeCsiNode(nim: NodeInfoManager, delays: readonly number[]): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await nim.initializeCSINode();
    } catch (err) {
      if (i >= delays.length) {
        log('csi').error({ err: (err as Error).message }, 'Failed to initialize CSINode');
        return;
      }
      await new Promise((r) => setTimeout(r, delays[i]).unref());
    }
  }
}

/**
 * The kubelet's plugin manager with the CSIPlugin handler, not yet running (call run()). A failed
 * install fails the registration (the plugin hears NotifyRegistrationStatus(false) and it is
 * retried with back-off), as upstream; a failed uninstall is logged, as upstream.
 */
/** The plugin manager, and its CSI handler: the registered drivers the CSI volume plugin calls. */
export type CsiPluginManager = PluginManager & { readonly csiDrivers: CsiRegistrationHandler };

export function createCsiPluginManager(opts: CsiPluginManagerOptions): CsiPluginManager {
  const nim = opts.client ? new NodeInfoManager({ client: opts.client, nodeName: opts.nodeName }) : undefined;
  if (nim) void initializeCsiNode(nim, opts.initRetryMs ?? INIT_RETRY_MS);
  const handler = new CsiRegistrationHandler({
    onRegister: async (driver, info) => {
      await nim?.installCSIDriver(driver.name, info);
      log('csi').info({ driver: driver.name, nodeId: info.nodeId, endpoint: driver.endpoint }, 'CSI driver registered');
    },
    onDeregister: async (driver) => {
      try {
        await nim?.uninstallCSIDriver(driver.name);
      } catch (err) {
        log('csi').warn({ driver: driver.name, err: (err as Error).message }, 'Uninstalling CSI driver failed');
      }
      log('csi').info({ driver: driver.name }, 'CSI driver deregistered');
    },
  });
  const manager = new PluginManager({
    rootDir: opts.rootDir,
    createFsWatcher: opts.createFsWatcher,
    timeouts: opts.timeouts,
  });
  manager.addHandler(CSI_PLUGIN, handler);
  return Object.assign(manager, { csiDrivers: handler });
}
