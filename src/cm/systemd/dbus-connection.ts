/**
 * A D-Bus client connection over a unix socket: SASL EXTERNAL, then method calls matched to
 * replies by serial (spec, "Message Protocol": REPLY_SERIAL), signals to subscribers, a timeout
 * per call, and every pending call rejected when the connection ends. On a message bus the
 * first call is org.freedesktop.DBus.Hello ("Message Bus Specification"); on a peer-to-peer
 * socket such as systemd's /run/systemd/private there is no Hello and no destination
 * (go-systemd dbus/dbus.go: NewSystemdConnectionContext vs. NewSystemConnectionContext).
 */
import { connect, type Socket } from 'node:net';
import { log } from '../../util/log.js';
import { authenticateExternal } from './dbus-auth.js';
import { errorMessage } from '../../errors.js';
import { DBusConnectionError, DBusError, DBusProtocolError } from './errors.js';
import {
  MessageFlag,
  MessageType,
  decodeMessage,
  encodeMessage,
  messageLength,
  type DBusMessage,
} from './dbus-wire.js';
import type { DBusValue } from './dbus-values.js';
import type { DBusClient, MethodCall } from './types.js';

export interface DBusConnectOptions {
  /** The unix socket path. */
  path: string;
  /** A message bus (dbus-daemon): call Hello first. False for a peer-to-peer socket. */
  bus: boolean;
  /** Bound on connect + authentication + Hello, and the default per-call timeout (ms). */
  timeoutMs?: number;
  /** The uid to claim in AUTH EXTERNAL; our own by default. */
  uid?: number;
}

const DEFAULT_TIMEOUT_MS = 25_000; // libdbus's default reply timeout
/** The message bus itself (dbus-daemon), for Hello, AddMatch, GetNameOwner. */
export const BUS_DAEMON = {
  destination: 'org.freedesktop.DBus',
  path: '/org/freedesktop/DBus',
  interface: 'org.freedesktop.DBus',
};

interface Pending {
  member: string;
  resolve: (body: DBusValue[]) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** Connects, authenticates and (on a bus) says Hello; rejects with DBusConnectionError. */
export async function connectDBus(opts: DBusConnectOptions): Promise<DBusClient> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const socket = await openSocket(opts.path, timeoutMs);
  const conn = new Connection(socket, opts.path, timeoutMs);
  try {
    const auth = authenticateExternal(socket, opts.uid ?? process.getuid?.() ?? 0, opts.path);
    const { rest } = await withTimeout(
      auth,
      timeoutMs,
      () => new DBusConnectionError('timeout', `${opts.path}: no SASL reply within ${timeoutMs} ms`),
    );
    conn.start(rest);
    if (opts.bus) conn.uniqueName = await hello(conn, opts.path);
    else await awaitPeerReady(conn, timeoutMs);
    return conn;
  } catch (err) {
    conn.close();
    throw err;
  }
}

async function hello(conn: DBusClient, path: string): Promise<string> {
  const [name] = await conn.call({ ...BUS_DAEMON, member: 'Hello' });
  if (typeof name !== 'string')
    throw new DBusProtocolError(`${path}: Hello returned ${typeof name}, not a unique name`);
  return name;
}

/**
 * systemd's private socket (sd-bus as the server) leaves a message that arrived in the same read
 * as our BEGIN unprocessed until more bytes come (seen with systemd 252: the first call, Subscribe,
 * unanswered on about one connection in three). So a peer connection is used only once a
 * Peer.Ping has been answered; a Ping left unread is followed by another, whose bytes wake the
 * server for both. Any answer counts, an error reply too: the server is reading.
 */
async function awaitPeerReady(conn: DBusClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    try {
      await conn.call({ path: '/', interface: 'org.freedesktop.DBus.Peer', member: 'Ping', timeoutMs: wait });
      return;
    } catch (err) {
      if (err instanceof DBusError) return;
      if (!(err instanceof DBusConnectionError && err.reason === 'timeout') || Date.now() >= deadline) throw err;
    }
  }
}

function openSocket(path: string, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path });
    const timer = setTimeout(
      () => fail(new DBusConnectionError('timeout', `${path}: connect did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(
        err instanceof DBusConnectionError
          ? err
          : new DBusConnectionError('connect', `cannot connect to D-Bus socket ${path}: ${errorMessage(err)}`, {
              cause: err,
            }),
      );
    };
    socket.once('error', fail);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', fail);
      resolve(socket);
    });
  });
}

function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(onTimeout()), ms)));
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}

class Connection implements DBusClient {
  uniqueName: string | undefined;
  private serial = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly signalHandlers = new Set<(m: DBusMessage) => void>();
  private readonly closeHandlers: Array<(err: Error) => void> = [];
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The length of the message being buffered, once its header has arrived. */
  private needed: number | undefined;
  private ended: Error | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly path: string,
    private readonly timeoutMs: number,
  ) {
    socket.on('error', (err) =>
      this.end(new DBusConnectionError('closed', `D-Bus connection ${path} failed: ${err.message}`, { cause: err })),
    );
    socket.on('close', () =>
      this.end(new DBusConnectionError('closed', `D-Bus connection ${path} was closed by the peer`)),
    );
  }

  get closed(): boolean {
    return this.ended !== undefined;
  }

  /** Switches the stream from SASL to messages; `rest` is what arrived after the OK line. */
  start(rest: Buffer): void {
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    if (rest.length > 0) this.receive(rest);
  }

  call(c: MethodCall): Promise<DBusValue[]> {
    if (this.ended) return Promise.reject(this.ended);
    const serial = this.nextSerial();
    let bytes: Buffer;
    try {
      bytes = encodeMessage({
        type: MessageType.METHOD_CALL,
        flags: 0,
        serial,
        destination: c.destination,
        path: c.path,
        interface: c.interface,
        member: c.member,
        signature: c.signature ?? '',
        body: c.body ?? [],
      });
    } catch (err) {
      return Promise.reject(err); // a value that does not fit the signature: nothing was sent
    }
    const timeoutMs = c.timeoutMs ?? this.timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(serial);
        reject(
          new DBusConnectionError(
            'timeout',
            `D-Bus call ${c.member} on ${this.path} got no reply within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      this.pending.set(serial, { member: c.member, resolve, reject, timer });
      this.socket.write(bytes);
    });
  }

  onSignal(handler: (signal: DBusMessage) => void): () => void {
    this.signalHandlers.add(handler);
    return () => this.signalHandlers.delete(handler);
  }

  onClose(handler: (err: Error) => void): void {
    if (this.ended) queueMicrotask(() => handler(this.ended!));
    else this.closeHandlers.push(handler);
  }

  close(): void {
    this.end(new DBusConnectionError('closed', `D-Bus connection ${this.path} was closed by the client`));
  }

  private nextSerial(): number {
    this.serial = this.serial >= 0xffffffff ? 1 : this.serial + 1;
    return this.serial;
  }

  /** Buffers stream bytes and dispatches each whole message; a malformed one ends the connection. */
  private receive(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    try {
      for (let msg = this.nextMessage(); msg && !this.ended; msg = this.nextMessage()) this.dispatch(msg);
    } catch (err) {
      this.end(
        new DBusConnectionError('closed', `D-Bus connection ${this.path} dropped: ${errorMessage(err)}`, {
          cause: err,
        }),
      );
    }
  }

  /** The next whole message, or undefined until it has arrived; its size is checked from its first 16 bytes. */
  private nextMessage(): DBusMessage | undefined {
    if (this.buffered < 16) return undefined;
    this.needed ??= messageLength(this.joined(16))!;
    if (this.buffered < this.needed) return undefined;
    const all = this.joined(this.buffered);
    const length = this.needed;
    this.chunks = length < all.length ? [all.subarray(length)] : [];
    this.buffered -= length;
    this.needed = undefined;
    return decodeMessage(all.subarray(0, length));
  }

  /** The buffered chunks joined until the first holds at least `n` bytes (joined once per message, not per chunk). */
  private joined(n: number): Buffer {
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!;
  }

  private dispatch(msg: DBusMessage): void {
    if (msg.type === MessageType.METHOD_RETURN || msg.type === MessageType.ERROR) return this.settle(msg);
    if (msg.type === MessageType.SIGNAL) {
      for (const h of this.signalHandlers) this.runHandler(h, msg);
      return;
    }
    if (msg.type === MessageType.METHOD_CALL && !(msg.flags & MessageFlag.NO_REPLY_EXPECTED)) this.refuse(msg);
  }

  private settle(msg: DBusMessage): void {
    const p = this.pending.get(msg.replySerial!);
    if (!p) return; // a reply after its call timed out
    this.pending.delete(msg.replySerial!);
    clearTimeout(p.timer);
    if (msg.type === MessageType.METHOD_RETURN) return p.resolve(msg.body);
    const detail = typeof msg.body[0] === 'string' ? msg.body[0] : '';
    p.reject(new DBusError(msg.errorName!, p.member, detail));
  }

  /** We export no objects: a call to us gets UnknownMethod, as libdbus answers for unhandled calls. */
  private refuse(call: DBusMessage): void {
    this.socket.write(
      encodeMessage({
        type: MessageType.ERROR,
        flags: MessageFlag.NO_REPLY_EXPECTED,
        serial: this.nextSerial(),
        replySerial: call.serial,
        destination: call.sender,
        errorName: 'org.freedesktop.DBus.Error.UnknownMethod',
        signature: 's',
        body: [`no method ${call.interface ?? ''}.${call.member ?? ''} on ${call.path ?? ''}`],
      }),
    );
  }

  private runHandler(h: (m: DBusMessage) => void, msg: DBusMessage): void {
    try {
      h(msg);
    } catch (err) {
      log('cm').warn({ err: errorMessage(err), member: msg.member }, 'D-Bus signal handler threw');
    }
  }

  private end(err: DBusConnectionError): void {
    if (this.ended) return;
    this.ended = err;
    this.socket.destroy();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new DBusConnectionError('closed', `D-Bus call ${p.member}: ${err.message}`, { cause: err }));
    }
    this.pending.clear();
    for (const h of this.closeHandlers.splice(0)) h(err);
  }
}
