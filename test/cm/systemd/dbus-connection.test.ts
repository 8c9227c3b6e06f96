/**
 * The D-Bus client connection against a real peer: a private dbus-daemon started by the test
 * (test/support/dbus-daemon.ts). Hello, ListNames, an error reply, Introspect, signals, a call
 * nobody answers (timeout), authentication refused, and the daemon killed mid-call.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { once } from 'node:events';
import {
  BUS_DAEMON,
  DBusConnectionError,
  DBusError,
  MessageType,
  connectDBus,
  decodeMessage,
  encodeMessage,
  messageLength,
  type DBusClient,
  type DBusMessage,
} from '../../../src/cm/systemd/index.js';
import { startDBusDaemon, type TestDBusDaemon } from '../../support/dbus-daemon.js';
import { HELLO_BYTES } from './hand-derived-hello.js';

const BUS = BUS_DAEMON;

/** A client written by hand: SASL, then the hand-derived Hello; it never answers calls. Resolves with its unique name. */
async function rawClient(socketPath: string): Promise<{ socket: Socket; uniqueName: string }> {
  const socket = connect({ path: socketPath });
  await once(socket, 'connect');
  socket.write('\0AUTH EXTERNAL 30\r\n'); // "0" (uid 0) in hex
  let got = Buffer.alloc(0);
  while (!got.includes('\r\n')) got = Buffer.concat([got, (await once(socket, 'data'))[0] as Buffer]);
  assert.match(got.toString('latin1'), /^OK [0-9a-f]+\r\n/);
  socket.write('BEGIN\r\n');
  socket.write(HELLO_BYTES);
  const reply = await firstMessage(socket, got.subarray(got.indexOf('\r\n') + 2));
  return { socket, uniqueName: reply.body[0] as string };
}

async function firstMessage(socket: Socket, start: Buffer): Promise<DBusMessage> {
  let got = start;
  while (got.length < 16 || got.length < messageLength(got)!)
    got = Buffer.concat([got, (await once(socket, 'data'))[0] as Buffer]);
  return decodeMessage(got.subarray(0, messageLength(got)));
}

describe('DBusConnection against a real dbus-daemon', () => {
  let daemon: TestDBusDaemon;
  let conn: DBusClient;

  before(async () => {
    daemon = await startDBusDaemon();
    conn = await connectDBus({ path: daemon.socketPath, bus: true, timeoutMs: 5000 });
  });

  after(async () => {
    conn?.close();
    await daemon?.stop();
  });

  it('says Hello and gets a unique name', () => {
    assert.match(conn.uniqueName ?? '', /^:1\.\d+$/);
  });

  it('ListNames lists the bus and us', async () => {
    const [names] = await conn.call({ ...BUS, member: 'ListNames' });
    assert.ok(Array.isArray(names));
    assert.ok(names.includes('org.freedesktop.DBus'));
    assert.ok(names.includes(conn.uniqueName!));
  });

  it('GetNameOwner of a name nobody owns is a DBusError NameHasNoOwner', async () => {
    const err = await conn.call({ ...BUS, member: 'GetNameOwner', signature: 's', body: ['com.example.Nobody'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof DBusError, String(err));
    assert.equal(err.errorName, 'org.freedesktop.DBus.Error.NameHasNoOwner');
    assert.equal(err.code, 'KTS_ERR_DBUS_CALL');
    assert.match(
      err.message,
      /GetNameOwner failed: org\.freedesktop\.DBus\.Error\.NameHasNoOwner: .*com\.example\.Nobody/,
    );
  });

  it('Introspect returns the bus XML', async () => {
    const [xml] = await conn.call({ ...BUS, interface: 'org.freedesktop.DBus.Introspectable', member: 'Introspect' });
    assert.match(xml as string, /<interface name="org\.freedesktop\.DBus">/);
  });

  it('accepts the hand-derived Hello bytes from a hand-written client', async () => {
    const raw = await rawClient(daemon.socketPath);
    assert.match(raw.uniqueName, /^:1\.\d+$/);
    raw.socket.destroy();
  });

  it('delivers signals to subscribers: NameOwnerChanged for a new client', async () => {
    await conn.call({ ...BUS, member: 'AddMatch', signature: 's', body: ["type='signal',member='NameOwnerChanged'"] });
    const seen: DBusMessage[] = [];
    const unsubscribe = conn.onSignal((m) => seen.push(m));
    const other = await connectDBus({ path: daemon.socketPath, bus: true });
    await waitFor(() => seen.some((m) => m.body[0] === other.uniqueName));
    unsubscribe();
    other.close();
    const signal = seen.find((m) => m.body[0] === other.uniqueName)!;
    assert.equal(signal.sender, 'org.freedesktop.DBus');
    assert.deepEqual(signal.body, [other.uniqueName, '', other.uniqueName]);
  });

  it('a call nobody answers times out with DBusConnectionError(timeout); the connection stays usable', async () => {
    const silent = await rawClient(daemon.socketPath);
    const started = Date.now();
    const err = await conn
      .call({ destination: silent.uniqueName, path: '/x', member: 'Anything', timeoutMs: 300 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof DBusConnectionError && err.reason === 'timeout', String(err));
    assert.match(err.message, /Anything .* no reply within 300 ms/);
    assert.ok(Date.now() - started >= 290);
    silent.socket.destroy();
    assert.ok(Array.isArray((await conn.call({ ...BUS, member: 'ListNames' }))[0]));
  });

  it('a call to our own connection is refused with UnknownMethod (we export no objects)', async () => {
    const err = await conn
      .call({ destination: conn.uniqueName, path: '/x', interface: 'com.example.I', member: 'M' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof DBusError, String(err));
    assert.equal(err.errorName, 'org.freedesktop.DBus.Error.UnknownMethod');
  });

  it('refuses AUTH EXTERNAL for a uid that is not ours', async () => {
    const err = await connectDBus({ path: daemon.socketPath, bus: true, uid: 4242, timeoutMs: 2000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof DBusConnectionError && err.reason === 'auth', String(err));
    assert.match(err.message, /AUTH EXTERNAL for uid 4242 refused: "REJECTED/);
  });

  it('a missing socket is DBusConnectionError(connect) naming the path', async () => {
    const err = await connectDBus({ path: `${daemon.socketPath}.missing`, bus: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof DBusConnectionError && err.reason === 'connect', String(err));
    assert.match(err.message, /cannot connect to D-Bus socket .*bus\.missing: .*ENOENT/);
  });

  it('a call after close() rejects at once', async () => {
    const c = await connectDBus({ path: daemon.socketPath, bus: true });
    c.close();
    assert.ok(c.closed);
    await assert.rejects(
      c.call({ ...BUS, member: 'ListNames' }),
      (e: unknown) => e instanceof DBusConnectionError && /closed by the client/.test(e.message),
    );
  });
});

describe('DBusConnection when the daemon dies mid-call', () => {
  it('rejects the pending call with DBusConnectionError(closed) and reports the close', async () => {
    const daemon = await startDBusDaemon();
    try {
      const c = await connectDBus({ path: daemon.socketPath, bus: true });
      const silent = await rawClient(daemon.socketPath);
      const closed = new Promise<Error>((resolve) => c.onClose(resolve));
      const pending = c.call({
        destination: silent.uniqueName,
        path: '/x',
        member: 'NeverAnswered',
        timeoutMs: 10_000,
      });
      setTimeout(() => daemon.kill(), 100);
      const err = await pending.then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof DBusConnectionError && err.reason === 'closed', String(err));
      assert.match(err.message, /NeverAnswered: D-Bus connection .* closed by the peer/);
      assert.ok((await closed) instanceof DBusConnectionError);
      assert.ok(c.closed);
      silent.socket.destroy();
    } finally {
      await daemon.stop();
    }
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('DBusConnection authentication against misbehaving servers', () => {
  async function serverThatSays(
    reply: (socket: Socket) => void,
  ): Promise<{ path: string; close: () => Promise<void> }> {
    const dir = await mkdtemp(`${tmpdir()}/kts-dbus-auth-`);
    const server = createServer((s) => s.once('data', () => reply(s)));
    await new Promise<void>((r) => server.listen(`${dir}/sock`, r));
    const close = async () => {
      await new Promise((r) => server.close(r));
      await rm(dir, { recursive: true, force: true });
    };
    return { path: `${dir}/sock`, close };
  }

  it('a peer that leaves the message sent with BEGIN unread (sd-bus, systemd 252) is woken by a second Ping', async () => {
    const dir = await mkdtemp(`${tmpdir()}/kts-dbus-stuck-`);
    const seen: string[] = [];
    const server = createServer((s) => {
      let buf = Buffer.alloc(0);
      let authed = false;
      s.on('data', (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        if (!authed) {
          const begin = buf.indexOf('BEGIN\r\n');
          if (buf.indexOf('AUTH') >= 0 && buf.indexOf('\r\n') >= 0 && begin < 0 && !seen.includes('auth')) {
            seen.push('auth');
            s.write('OK 0123456789abcdef0123456789abcdef\r\n');
          }
          if (begin < 0) return;
          authed = true;
          buf = buf.subarray(begin + 7);
        }
        for (let n = messageLength(buf); n !== undefined && buf.length >= n; n = messageLength(buf)) {
          const msg = decodeMessage(buf.subarray(0, n));
          buf = buf.subarray(n);
          seen.push(msg.member ?? '?');
          // Like sd-bus: the first message is only looked at once more bytes arrive; then both are answered.
          if (seen.filter((m) => m === 'Ping').length < 2) continue;
          for (const serial of [msg.serial - 1, msg.serial])
            s.write(
              encodeMessage({
                type: MessageType.METHOD_RETURN,
                flags: 0,
                serial: 100 + serial,
                replySerial: serial,
                signature: '',
                body: [],
              }),
            );
        }
      });
    });
    await new Promise<void>((r) => server.listen(`${dir}/sock`, r));
    try {
      const conn = await connectDBus({ path: `${dir}/sock`, bus: false, timeoutMs: 5000 });
      conn.close();
      assert.deepEqual(seen, ['auth', 'Ping', 'Ping']);
    } finally {
      await new Promise((r) => server.close(r));
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a server that hangs up during SASL is DBusConnectionError(auth), at once', async () => {
    const srv = await serverThatSays((s) => s.destroy());
    try {
      const started = Date.now();
      const err = await connectDBus({ path: srv.path, bus: false, timeoutMs: 5000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof DBusConnectionError && err.reason === 'auth', String(err));
      assert.ok(Date.now() - started < 2000);
    } finally {
      await srv.close();
    }
  });

  it('an endless SASL line is refused after 16 KiB; silence times out', async () => {
    const chatty = await serverThatSays((s) => s.write(Buffer.alloc(20_000, 0x41)));
    const silent = await serverThatSays(() => undefined);
    try {
      await assert.rejects(connectDBus({ path: chatty.path, bus: false }), /SASL reply longer than 16384 bytes/);
      await assert.rejects(
        connectDBus({ path: silent.path, bus: false, timeoutMs: 200 }),
        (e: unknown) => e instanceof DBusConnectionError && e.reason === 'timeout',
      );
    } finally {
      await chatty.close();
      await silent.close();
    }
  });
});
