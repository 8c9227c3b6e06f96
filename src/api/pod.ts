/** Small facts about a Pod that several subsystems ask, each defined once. */
import { ConfigMirrorAnnotationKey, ConfigSourceAnnotationKey, type Container, type Pod } from './types.js';

/** Succeeded and Failed are final: a pod never leaves them (upstream podutil.IsPodPhaseTerminal). */
export function isTerminalPhase(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

/** upstream eviction.PodIsEvicted: Failed with reason Evicted. */
export function isPodEvicted(status: { phase?: string; reason?: string } | undefined): boolean {
  return status?.phase === 'Failed' && status.reason === 'Evicted';
}

/** A pod from a file or URL source (upstream kubetypes.IsStaticPod): not one from the API server. */
export function isStaticPod(pod: Pod | undefined): boolean {
  const src = pod?.metadata?.annotations?.[ConfigSourceAnnotationKey];
  return src !== undefined && src !== 'api';
}

/** The API server's copy of a static pod (upstream kubetypes.IsMirrorPod). */
export function isMirrorPod(pod: Pod | undefined): boolean {
  return pod?.metadata?.annotations?.[ConfigMirrorAnnotationKey] !== undefined;
}

/** upstream podutil.IsRestartableInitContainer: an init container with restartPolicy Always (a sidecar). */
export function isRestartableInitContainer(c: Pick<Container, 'restartPolicy'> | undefined): boolean {
  return c?.restartPolicy === 'Always';
}

/** upstream fileModeErrorMsg: volume file modes (defaultMode, items[].mode) are 0..0777. */
export const FILE_MODE_MESSAGE = 'must be a number between 0 and 0777 (octal), both inclusive';

export function isValidFileMode(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0o777;
}

/** upstream IsValidUserID / IsValidGroupID: uids and gids (runAsUser, fsGroup, ...) are 0..2^31-1. */
export const ID_MESSAGE = 'must be between 0 and 2147483647, inclusive';

export function isValidId(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2147483647;
}

/** A volume file mode as octal for messages (upstream prints decimal; 0640 is what people write). */
export function octal(mode: unknown): string {
  return typeof mode === 'number' && Number.isInteger(mode) && mode >= 0 ? `0${mode.toString(8)} (${mode})` : JSON.stringify(mode) ?? String(mode);
}
