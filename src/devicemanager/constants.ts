/**
 * The device plugin contract's constants (upstream kubelet/pkg/apis/deviceplugin/v1beta1/constants.go,
 * cm/devicemanager/types.go and plugin/v1beta1/api.go), with upstream's values and error texts.
 */

/** The API version of this kubelet (Version) and the versions a plugin may register with. */
export const VERSION = 'v1beta1';
export const SUPPORTED_VERSIONS: readonly string[] = [VERSION];

/** Device health strings; anything other than HEALTHY counts as unhealthy (upstream compares to Healthy only). */
export const HEALTHY = 'Healthy';
export const UNHEALTHY = 'Unhealthy';

/**
 * The directory under --root-dir holding kubelet.sock, the plugins' sockets and the checkpoint.
 * Upstream hard-codes /var/lib/kubelet/device-plugins/, the same path under the default root.
 */
export const DEVICE_PLUGINS_DIR = 'device-plugins';
/** The registration socket's file name in that directory (KubeletSocket). */
export const KUBELET_SOCKET = 'kubelet.sock';
/** The checkpoint's file name in that directory (kubeletDeviceManagerCheckpoint). */
export const CHECKPOINT_FILE = 'kubelet_internal_checkpoint';

/** PreStartContainer's deadline (KubeletPreStartContainerRPCTimeoutInSecs). */
export const PRE_START_TIMEOUT_MS = 30_000;
/**
 * Our deadline for Allocate, GetPreferredAllocation and GetDevicePluginOptions, which upstream
 * calls without one: a stalled plugin must not stall admission forever (docs/differences.md).
 */
export const RPC_TIMEOUT_MS = 30_000;
/** The blocking dial's deadline (plugin/v1beta1/client.go dial). */
export const DIAL_TIMEOUT_MS = 10_000;
/** How long a stopped endpoint's resource is still reported (endpointStopGracePeriod). */
export const ENDPOINT_STOP_GRACE_MS = 5 * 60_000;

/** NUMA node of a device without topology, as the checkpoint writes it (nodeWithoutTopology). */
export const NODE_WITHOUT_TOPOLOGY = -1;

/** Upstream's error formats, as functions of their arguments. */
export const MESSAGES = {
  unsupportedVersion: (version: string): string =>
    `requested API version ${goQuote(version)} is not supported by kubelet. Supported version is ${goStringSlice(SUPPORTED_VERSIONS)}`,
  invalidResourceName: (name: string): string => `the ResourceName ${goQuote(name)} is invalid`,
  failedToDial: (err: string): string => `failed to dial device plugin: ${err}`,
  endpointStopped: (resource: string): string => `endpoint ${resource} has been stopped`,
  badSocketPath: (path: string): string => `bad socketPath, must be an absolute path: ${path}`,
  pluginVersionMismatch: (versions: readonly string[]): string =>
    `manager version, ${VERSION}, is not among plugin supported versions [${versions.join(' ')}]`,
  invalidSocketName: (name: string): string =>
    `invalid name of device plugin socket: the ResourceName ${goQuote(name)} is invalid`,
} as const;

/** Go's %q of a string (ASCII-printable inputs print as JSON does). */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Go's %q of a []string: ["a" "b"]. */
function goStringSlice(list: readonly string[]): string {
  return `[${list.map(goQuote).join(' ')}]`;
}
