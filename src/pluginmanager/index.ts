/**
 * The kubelet's plugin manager (upstream pkg/kubelet/pluginmanager): watches
 * <root-dir>/plugins_registry for registration sockets and hands each plugin to the handler of
 * its type (CSIPlugin for the CSI volume plugin, DevicePlugin for the device manager). Also the
 * unary unix-socket gRPC client both use.
 */
export { PluginManager, PLUGINS_REGISTRY_DIR, type PluginManagerOptions } from './plugin-manager.js';
export {
  CSI_PLUGIN,
  DEVICE_PLUGIN,
  DEFAULT_TIMEOUTS,
  type PluginHandler,
  type ReconcilerTimeouts,
} from './plugin-reconciler.js';
export { UnixGrpcClient, unixTarget } from './grpc-unix.js';
export { REGISTRATION_SERVICE, registrationServiceDefinition } from './proto.js';
