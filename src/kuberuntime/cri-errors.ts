/** Reading CRI errors: NOT_FOUND detection and the runtime's own message for status reasons. */
import { CriError } from '../errors.js';

const GRPC_NOT_FOUND = 5;

/** The container/sandbox/image is gone (removed between a list and a status call, usually). */
export function isNotFound(err: unknown): boolean {
  if (err instanceof CriError) return err.code === 'KTS_ERR_CRI_NOT_FOUND' || err.grpcCode === GRPC_NOT_FOUND;
  const e = err as { code?: unknown; grpcCode?: unknown } | undefined;
  return e?.code === 'KTS_ERR_CRI_NOT_FOUND' || e?.grpcCode === GRPC_NOT_FOUND;
}

/**
 * The message to show in a waiting reason: the runtime's words without our "CRI Method: "
 * prefix, as upstream shows grpc status.Message().
 */
export function runtimeMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return err instanceof CriError ? msg.replace(/^CRI \w+: /, '') : msg;
}
