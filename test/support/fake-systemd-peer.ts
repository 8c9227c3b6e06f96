/**
 * A stand-in for systemd's private D-Bus socket (/run/systemd/private), speaking the real wire
 * protocol (our src/cm/systemd wire module) over a unix socket: SASL EXTERNAL, then the
 * org.freedesktop.systemd1.Manager methods the unit manager uses, answered the way systemd
 * answers them (org.freedesktop.systemd1(5)): StartTransientUnit returns a job path and later
 * emits JobRemoved; UnitExists, NoSuchUnit, and "Cannot set property" for transient-only
 * properties on a loaded unit. Knobs make jobs fail, never finish, or finish in the same write
 * as the method reply.
 */
import { rm } from 'node:fs/promises';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { authenticateExternal } from '../../src/cm/systemd/dbus-auth.js';
import {
  MessageType,
  decodeMessage,
  encodeMessage,
  messageLength,
  unitObjectPath,
  BUS_DAEMON,
  type DBusMessage,
  type DBusValue,
  type DBusVariant,
} from '../../src/cm/systemd/index.js';
import { testTempDir } from './temp-dir.js';

const MANAGER_PATH = '/org/freedesktop/systemd1';
const MANAGER = 'org.freedesktop.systemd1.Manager';
const LIVE_SETTABLE = /^(Description|CPU.*|Memory.*|IO.*|Tasks.*)$/;

export interface FakeUnit {
  state: 'active' | 'failed';
  properties: Map<string, DBusVariant>;
}

export interface FakeSystemdPeer {
  socketPath: string;
  units: Map<string, FakeUnit>;
  /** Every method call received, in order. */
  calls: DBusMessage[];
  /** Connections accepted so far. */
  connections: number;
  /** The result of the next jobs ("done" by default), by unit name. */
  jobResult: (unit: string) => string;
  /** 'same-write': JobRemoved in the reply's write; a number: after that many ms; 'never'. */
  jobRemoved: 'same-write' | number | 'never';
  /** Also serves on a message bus as org.freedesktop.systemd1 (what systemd does on the system bus). */
  joinBus(busSocketPath: string): Promise<void>;
  /** Closes every client connection, as systemd's daemon-reexec does. */
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startFakeSystemdPeer(): Promise<FakeSystemdPeer> {
  const dir = testTempDir('kts-fake-systemd-');
  const sockets = new Set<Socket>();
  let jobId = 0;
  const peer: FakeSystemdPeer = {
    socketPath: join(dir, 'private'),
    units: new Map(),
    calls: [],
    connections: 0,
    jobResult: () => 'done',
    jobRemoved: 10,
    joinBus: (busSocketPath) => joinBus(busSocketPath),
    dropConnections: () => sockets.forEach((s) => s.destroy()),
    close: async () => {
      peer.dropConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const handle = (call: DBusMessage) => {
    peer.calls.push(call);
    return answer(peer, call, () => ++jobId);
  };
  const server: Server = createServer((socket) => {
    peer.connections++;
    track(socket);
    serveConnection(socket, handle, { authenticated: false, rest: Buffer.alloc(0) });
  });
  async function joinBus(busSocketPath: string): Promise<void> {
    const socket = connect({ path: busSocketPath });
    await once(socket, 'connect');
    track(socket);
    const { rest } = await authenticateExternal(socket, 0, busSocketPath);
    await new Promise<void>((resolve) => {
      serveConnection(socket, handle, {
        authenticated: true,
        rest,
        intro: BUS_INTRO,
        onReturn: (m) => m.replySerial === 2 && resolve(),
      });
    });
  }
  await new Promise<void>((resolve) => server.listen(peer.socketPath, resolve));
  return peer;
}

/** What to send back for one call: the reply, and a JobRemoved signal to send with it or later. */
interface Answer {
  reply: DBusMessage;
  job?: DBusMessage;
  delivery?: FakeSystemdPeer['jobRemoved'];
}

/** Hello, then RequestName("org.freedesktop.systemd1", DBUS_NAME_FLAG_DO_NOT_QUEUE): serials 1 and 2 on a bus. */
const BUS_INTRO: DBusMessage[] = [
  { type: MessageType.METHOD_CALL, flags: 0, serial: 0, ...BUS_DAEMON, member: 'Hello', signature: '', body: [] },
  {
    type: MessageType.METHOD_CALL,
    flags: 0,
    serial: 0,
    ...BUS_DAEMON,
    member: 'RequestName',
    signature: 'su',
    body: ['org.freedesktop.systemd1', 4],
  },
];

interface ServeOptions {
  /** False for a server socket (SASL first); true once a client socket has authenticated. */
  authenticated: boolean;
  /** Bytes already read past SASL. */
  rest: Buffer;
  /** Calls to send first (as a bus client). */
  intro?: DBusMessage[];
  /** Replies to our own calls. */
  onReturn?: (reply: DBusMessage) => void;
}

function serveConnection(socket: Socket, handle: (call: DBusMessage) => Answer, opts: ServeOptions): void {
  let buf = Buffer.alloc(0);
  let authenticated = opts.authenticated;
  let okSent = false;
  let serial = 0;
  for (const m of opts.intro ?? []) socket.write(encodeMessage({ ...m, serial: ++serial }));
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    if (!authenticated) {
      const text = buf.toString('latin1');
      if (!text.includes('BEGIN\r\n')) {
        if (!okSent && /^\0AUTH EXTERNAL [0-9a-f]+\r\n/.test(text))
          socket.write('OK 0123456789abcdef0123456789abcdef\r\n');
        okSent ||= text.includes('\r\n');
        return;
      }
      authenticated = true;
      buf = buf.subarray(buf.indexOf('BEGIN\r\n') + 7);
    }
    while (buf.length >= 16 && buf.length >= messageLength(buf)!) {
      const length = messageLength(buf)!;
      const call = decodeMessage(buf.subarray(0, length));
      buf = buf.subarray(length);
      if (call.type === MessageType.METHOD_RETURN) opts.onReturn?.(call);
      if (call.type !== MessageType.METHOD_CALL) continue; // bus signals (NameAcquired), replies to our intro
      const { reply, job, delivery } = handle(call);
      const stamp = (m: DBusMessage) => encodeMessage({ ...m, serial: ++serial });
      const mode = delivery ?? 'never';
      if (!job || mode === 'never') socket.write(stamp(reply));
      else if (mode === 'same-write') socket.write(Buffer.concat([stamp(reply), stamp(job)]));
      else {
        socket.write(stamp(reply));
        setTimeout(() => !socket.destroyed && socket.write(stamp(job)), mode);
      }
    }
  };
  socket.on('data', onData);
  if (opts.rest.length > 0) onData(opts.rest);
}

function answer(peer: FakeSystemdPeer, call: DBusMessage, nextJob: () => number): Answer {
  const [name] = call.body as [string];
  const unit = peer.units.get(name);
  switch (`${call.interface}.${call.member}`) {
    case `${MANAGER}.Subscribe`:
      return { reply: ret(call, '', []) };
    case `${MANAGER}.StartTransientUnit`: {
      if (unit) return { reply: err(call, 'org.freedesktop.systemd1.UnitExists', `Unit ${name} already exists.`) };
      const result = peer.jobResult(name);
      const props = new Map((call.body[2] as Array<[string, DBusVariant]>).map(([k, v]) => [k, v]));
      peer.units.set(name, { state: result === 'done' ? 'active' : 'failed', properties: props });
      return job(peer, call, { id: nextJob(), unit: name, result });
    }
    case `${MANAGER}.StopUnit`:
      if (!unit) return { reply: noSuchUnit(call, name) };
      peer.units.delete(name);
      return job(peer, call, { id: nextJob(), unit: name, result: 'done' });
    case `${MANAGER}.SetUnitProperties`:
      return { reply: unit ? setProperties(call, unit) : noSuchUnit(call, name) };
    case `${MANAGER}.ResetFailedUnit`:
      if (!unit) return { reply: noSuchUnit(call, name) };
      if (unit.state === 'failed') peer.units.delete(name);
      return { reply: ret(call, '', []) };
    case `${MANAGER}.GetUnit`:
      return { reply: unit ? ret(call, 'o', [unitObjectPath(name)]) : noSuchUnit(call, name) };
    case 'org.freedesktop.DBus.Properties.Get':
      return { reply: getProperty(peer, call) };
    default:
      return { reply: err(call, 'org.freedesktop.DBus.Error.UnknownMethod', `Unknown method ${call.member}`) };
  }
}

/** The reply to a job-starting call, and the JobRemoved signal for job `id` on `unit` with `result`. */
function job(
  peer: FakeSystemdPeer,
  call: DBusMessage,
  { id, unit, result }: { id: number; unit: string; result: string },
): Answer {
  const path = `${MANAGER_PATH}/job/${id}`;
  const signal: DBusMessage = {
    type: MessageType.SIGNAL,
    flags: 0,
    serial: 0,
    path: MANAGER_PATH,
    interface: MANAGER,
    member: 'JobRemoved',
    signature: 'uoss',
    body: [id, path, unit, result],
  };
  return { reply: ret(call, 'o', [path]), job: signal, delivery: peer.jobRemoved };
}

function setProperties(call: DBusMessage, unit: FakeUnit): DBusMessage {
  const props = call.body[2] as Array<[string, DBusVariant]>;
  const refused = props.find(([k]) => !LIVE_SETTABLE.test(k));
  if (refused)
    return err(
      call,
      'org.freedesktop.DBus.Error.PropertyReadOnly',
      `Cannot set property ${refused[0]}, or unknown property.`,
    );
  for (const [k, v] of props) unit.properties.set(k, v);
  return ret(call, '', []);
}

function getProperty(peer: FakeSystemdPeer, call: DBusMessage): DBusMessage {
  const [, property] = call.body as [string, string];
  const name = [...peer.units.keys()].find((n) => unitObjectPath(n) === call.path);
  const unit = name === undefined ? undefined : peer.units.get(name)!;
  if (!unit || name === undefined)
    return err(call, 'org.freedesktop.DBus.Error.UnknownObject', `Unknown object '${call.path}'.`);
  if (property === 'ActiveState') return ret(call, 'v', [{ sig: 's', value: unit.state }]);
  if (property === 'ControlGroup') return ret(call, 'v', [{ sig: 's', value: sliceCgroup(name) }]);
  const value = unit.properties.get(property);
  return value
    ? ret(call, 'v', [value])
    : err(call, 'org.freedesktop.DBus.Error.UnknownProperty', `Unknown property ${property}`);
}

/** systemd nests a-b-c.slice in a.slice/a-b.slice/: /a.slice/a-b.slice/a-b-c.slice. */
function sliceCgroup(name: string): string {
  const parts = name.replace(/\.slice$/, '').split('-');
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join('-')}.slice`).join('');
}

function ret(call: DBusMessage, signature: string, body: DBusValue[]): DBusMessage {
  return {
    type: MessageType.METHOD_RETURN,
    flags: 0,
    serial: 0,
    replySerial: call.serial,
    destination: call.sender,
    signature,
    body,
  };
}

function err(call: DBusMessage, errorName: string, message: string): DBusMessage {
  return {
    type: MessageType.ERROR,
    flags: 0,
    serial: 0,
    replySerial: call.serial,
    destination: call.sender,
    errorName,
    signature: 's',
    body: [message],
  };
}

function noSuchUnit(call: DBusMessage, name: string): DBusMessage {
  return err(call, 'org.freedesktop.systemd1.NoSuchUnit', `Unit ${name} not loaded.`);
}
