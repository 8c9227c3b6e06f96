/**
 * Swap at start, as upstream's container manager: with failSwapOn (default true) the agent refuses
 * to start when /proc/swaps lists a device (any line past its header), with upstream's message;
 * a missing /proc/swaps means swap is off. With failSwapOn: false it starts; pods then run with
 * NoSwap semantics (memorySwap.swapBehavior other than NoSwap is refused by the configuration).
 */
import { readFileSync } from 'node:fs';

/** Upstream's error (pkg/kubelet/cm NewContainerManager). */
export const SWAP_ON_REFUSED =
  'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false';

/** The swap devices /proc/swaps lists (its lines past the header); [] when it is absent. */
export function swapDevices(path = '/proc/swaps'): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text.trim().split('\n').slice(1).filter(Boolean);
}

/** A refusal message when swap is on and failSwapOn holds; undefined when the agent may start. */
export function swapRefusal(failSwapOn: boolean, path = '/proc/swaps'): string | undefined {
  if (!failSwapOn) return undefined;
  const devices = swapDevices(path);
  return devices.length > 0 ? `${SWAP_ON_REFUSED}. ${path} contained: ${JSON.stringify(devices)}` : undefined;
}
