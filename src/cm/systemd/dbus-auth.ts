/**
 * The client side of D-Bus SASL authentication (spec, "Authentication Protocol"): one NUL byte,
 * `AUTH EXTERNAL <uid in ASCII, hex-encoded>`, the server's `OK <guid>`, then `BEGIN`; after BEGIN
 * the stream carries messages. The kernel vouches for our uid (SO_PEERCRED), so EXTERNAL is all
 * systemd and dbus-daemon need from root (go-systemd's dbus.go and runc use the same mechanism).
 */
import type { Socket } from 'node:net';
import { DBusConnectionError } from './errors.js';

/** A server line longer than this is not a SASL reply. */
const MAX_AUTH_LINE = 16 * 1024;

export interface AuthResult {
  /** The server's GUID from `OK <guid>`. */
  guid: string;
  /** Bytes that arrived after the OK line (none from a well-behaved server; kept anyway). */
  rest: Buffer;
}

/** Authenticates on a connected socket; rejects with DBusConnectionError('auth') if refused. */
export function authenticateExternal(socket: Socket, uid: number, where: string): Promise<AuthResult> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const done = (err: Error | undefined, result?: AuthResult) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      if (err) reject(err);
      else resolve(result!);
    };
    const onClose = () =>
      done(new DBusConnectionError('auth', `${where}: the server closed the connection during authentication`));
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n');
      if (end < 0) {
        if (buffered.length > MAX_AUTH_LINE)
          done(new DBusConnectionError('auth', `${where}: SASL reply longer than ${MAX_AUTH_LINE} bytes`));
        return;
      }
      const line = buffered.subarray(0, end).toString('latin1');
      const ok = /^OK ([0-9a-fA-F]+)$/.exec(line);
      if (!ok)
        return done(
          new DBusConnectionError(
            'auth',
            `${where}: AUTH EXTERNAL for uid ${uid} refused: ${JSON.stringify(line.slice(0, 200))}`,
          ),
        );
      socket.write('BEGIN\r\n');
      done(undefined, { guid: ok[1]!, rest: buffered.subarray(end + 2) });
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(`\0AUTH EXTERNAL ${Buffer.from(String(uid), 'ascii').toString('hex')}\r\n`);
  });
}
