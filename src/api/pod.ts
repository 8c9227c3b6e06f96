/** Small facts about a Pod that several subsystems ask, each defined once. */
import { ConfigMirrorAnnotationKey, ConfigSourceAnnotationKey, type Pod } from './types.js';

/** Succeeded and Failed are final: a pod never leaves them (upstream podutil.IsPodPhaseTerminal). */
export function isTerminalPhase(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
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
