/**
 * The errors of the D-Bus client and the systemd unit manager. Callers tell them apart by class:
 * a malformed message (DBusProtocolError), no usable connection (DBusConnectionError), an error
 * reply (DBusError, with its D-Bus error name), a systemd job that did not end "done" (SystemdJobError).
 */
import { KubeletError } from '../../errors.js';

/** Bytes that are not a valid D-Bus message, or a value that cannot be marshalled as its signature says. */
export class DBusProtocolError extends KubeletError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('KTS_ERR_DBUS_PROTOCOL', `D-Bus protocol: ${message}`, options);
  }
}

/** Why a connection-level failure happened. */
export type DBusConnectionFailure = 'connect' | 'auth' | 'closed' | 'timeout';

/** The socket could not be used: not reachable, authentication refused, lost, or no reply in time. */
export class DBusConnectionError extends KubeletError {
  constructor(
    readonly reason: DBusConnectionFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('KTS_ERR_DBUS_CONNECTION', message, options);
  }
}

/** An ERROR reply: `errorName` is the D-Bus error name (org.freedesktop.systemd1.NoSuchUnit, ...). */
export class DBusError extends KubeletError {
  constructor(
    readonly errorName: string,
    readonly member: string,
    detail: string,
  ) {
    super('KTS_ERR_DBUS_CALL', `D-Bus call ${member} failed: ${errorName}${detail ? `: ${detail}` : ''}`);
  }
}

/** A systemd job that ended with `result` other than "done" ("failed", "canceled", ...; "timeout" when we gave up waiting). */
export class SystemdJobError extends KubeletError {
  constructor(
    readonly unit: string,
    readonly result: string,
    detail: string,
  ) {
    super('KTS_ERR_SYSTEMD_JOB', `systemd unit ${unit}: ${detail} (result ${JSON.stringify(result)})`);
  }
}
