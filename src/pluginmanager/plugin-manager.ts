/**
 * The plugin manager (upstream: pkg/kubelet/pluginmanager): the plugin watcher feeding the desired
 * state of world, and the reconciler registering what it holds with the handler of each plugin
 * type (addHandler('CSIPlugin', ...)). The kubelet owns one, over <root-dir>/plugins_registry.
 */
import { join } from 'node:path';
import type { CreateFsWatcher } from '../fswatch/types.js';
import { DesiredStateOfWorld, PluginWatcher } from './plugin-watcher.js';
import { type PluginHandler, PluginReconciler, type ReconcilerTimeouts } from './plugin-reconciler.js';

/** Upstream's plugin registration directory under the kubelet root dir. */
export const PLUGINS_REGISTRY_DIR = 'plugins_registry';

export interface PluginManagerOptions {
  /** The kubelet's --root-dir; the sockets are looked for in <rootDir>/plugins_registry. */
  rootDir: string;
  createFsWatcher: CreateFsWatcher;
  timeouts?: Partial<ReconcilerTimeouts>;
}

export class PluginManager {
  private readonly handlers: Record<string, PluginHandler> = {};
  private readonly reconciler: PluginReconciler;
  private readonly watcher: PluginWatcher;

  constructor(opts: PluginManagerOptions) {
    const dsw = new DesiredStateOfWorld();
    this.reconciler = new PluginReconciler(dsw, this.handlers, opts.timeouts);
    this.watcher = new PluginWatcher({
      dir: join(opts.rootDir, PLUGINS_REGISTRY_DIR),
      createFsWatcher: opts.createFsWatcher,
      dsw,
      onChange: () => this.reconciler.kick(),
    });
  }

  /** Registers the handler of one plugin type (before run()). */
  addHandler(pluginType: string, handler: PluginHandler): void {
    this.handlers[pluginType] = handler;
  }

  /** Starts watching and reconciling; throws if the registry directory cannot be created. */
  run(): void {
    this.watcher.start();
    this.reconciler.start();
  }

  async stop(): Promise<void> {
    this.watcher.stop();
    await this.reconciler.stop();
  }

  registered(): ReturnType<PluginReconciler['registered']> {
    return this.reconciler.registered();
  }
}
