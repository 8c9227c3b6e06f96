/**
 * gRPC failures → CriError. The code says what happened (unreachable runtime, deadline, missing
 * object, unimplemented method, anything else); the message names the CRI method and carries the
 * runtime's own words. And back: whether a CRI error means NOT_FOUND, and the runtime's words
 * for a waiting reason's message.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { CriError, type ErrorCode } from '../errors.js';

/** The kubelet-ts error code for a gRPC status code. */
export function errorCodeForGrpc(code: number | undefined): ErrorCode {
  switch (code) {
    case GrpcStatus.UNAVAILABLE:
      return 'KTS_ERR_CRI_UNAVAILABLE';
    case GrpcStatus.DEADLINE_EXCEEDED:
      return 'KTS_ERR_CRI_TIMEOUT';
    case GrpcStatus.NOT_FOUND:
      return 'KTS_ERR_CRI_NOT_FOUND';
    case GrpcStatus.UNIMPLEMENTED:
      return 'KTS_ERR_CRI_UNIMPLEMENTED';
    default:
      return 'KTS_ERR_CRI';
  }
}

/** The upper-case gRPC name of a status code (NOT_FOUND, ...), or "UNKNOWN". */
export function grpcCodeName(code: number | undefined): string {
  if (code === undefined) return 'UNKNOWN';
  const name = (GrpcStatus as unknown as Record<number, string>)[code];
  return typeof name === 'string' ? name : `CODE_${code}`;
}

interface GrpcLikeError {
  code?: unknown;
  details?: unknown;
  message?: unknown;
}

/** Wraps whatever a gRPC call threw (a ServiceError, or a local serialization error). */
export function criErrorFrom(method: string, err: unknown): CriError {
  if (err instanceof CriError) return err;
  const e = (err ?? {}) as GrpcLikeError;
  const code = typeof e.code === 'number' ? e.code : undefined;
  if (code === undefined) {
    // Not a gRPC status: a request that could not be encoded, a closed client, ...
    const msg = err instanceof Error ? err.message : String(err);
    return new CriError('KTS_ERR_CRI', method, msg, { cause: err });
  }
  const details =
    typeof e.details === 'string' && e.details ? e.details : typeof e.message === 'string' ? e.message : '';
  return new CriError(errorCodeForGrpc(code), method, `${grpcCodeName(code)}: ${details}`, {
    grpcCode: code,
    cause: err,
  });
}

/** A reply the agent cannot use (missing required fields). */
export function replyError(method: string, message: string): CriError {
  return new CriError('KTS_ERR_CRI_REPLY', method, message);
}

/** The container/sandbox/image is gone (removed between a list and a status call, usually). */
export function isNotFound(err: unknown): boolean {
  if (err instanceof CriError) return err.code === 'KTS_ERR_CRI_NOT_FOUND' || err.grpcCode === GrpcStatus.NOT_FOUND;
  const e = err as { code?: unknown; grpcCode?: unknown } | undefined;
  return e?.code === 'KTS_ERR_CRI_NOT_FOUND' || e?.grpcCode === GrpcStatus.NOT_FOUND;
}

/**
 * The message to show in a waiting reason: the runtime's words without our "CRI Method: "
 * prefix, as upstream shows grpc status.Message().
 */
export function runtimeMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return err instanceof CriError ? msg.replace(/^CRI \w+: /, '') : msg;
}
