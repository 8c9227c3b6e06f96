/**
 * systemd's unit API over D-Bus (org.freedesktop.systemd1.Manager at /org/freedesktop/systemd1),
 * the part the systemd cgroup driver needs: transient slices started and stopped with their jobs
 * awaited, properties set and read. Modelled on runc libcontainer/cgroups/systemd/common.go
 * (startUnit, stopUnit, resetFailedUnit, setUnitProperties, and retryOnDisconnect in dbus.go) over
 * go-systemd's dbus/methods.go; written from their behaviour, not their code.
 */
import { BUS_DAEMON, connectDBus } from './dbus-connection.js';
import { DBusConnectionError, DBusError, DBusProtocolError, SystemdJobError } from './errors.js';
import { JobWatcher, MANAGER_INTERFACE, MANAGER_PATH } from './job-watcher.js';
import { isVariant, type DBusValue, type DBusVariant } from './dbus-values.js';
import type { DBusClient, MethodCall, SystemdUnitManager, UnitProperty } from './types.js';

/** A socket to try: systemd's own peer-to-peer socket, or the system message bus. */
export interface SystemdSocket {
  path: string;
  bus: boolean;
}

export interface SystemdManagerOptions {
  /** Tried in order. A bare path is peer-to-peer unless its file name is system_bus_socket. */
  socketPaths?: Array<string | SystemdSocket>;
  /** Connect/authenticate bound and per-call timeout, ms (default 25 s). */
  timeoutMs?: number;
  /** How long to wait for a job's JobRemoved, ms (default 30 s, runc's). */
  jobTimeoutMs?: number;
}

export const DEFAULT_SYSTEMD_SOCKETS: readonly SystemdSocket[] = [
  { path: '/run/systemd/private', bus: false },
  { path: '/run/dbus/system_bus_socket', bus: true },
];
const SYSTEMD_BUS_NAME = 'org.freedesktop.systemd1';
const UNIT_EXISTS = 'org.freedesktop.systemd1.UnitExists';
const NO_SUCH_UNIT = 'org.freedesktop.systemd1.NoSuchUnit';
const DEFAULT_JOB_TIMEOUT_MS = 30_000;
/**
 * Properties systemd takes only when it creates a transient unit; SetUnitProperties on a loaded
 * unit refuses them ("Cannot set property ..."), so they are dropped when the unit already exists.
 */
const TRANSIENT_ONLY = new Set(['Wants', 'Requires', 'After', 'Before', 'Slice', 'DefaultDependencies', 'Delegate']);

interface Session {
  client: DBusClient;
  bus: boolean;
  jobs: JobWatcher;
  /** Manager.Subscribe (and on a bus, AddMatch for JobRemoved), once per connection. */
  subscribed: Promise<void>;
}

export class SystemdManager implements SystemdUnitManager {
  private session: Promise<Session> | undefined;
  private closedByCaller = false;
  private readonly sockets: SystemdSocket[];
  private readonly jobTimeoutMs: number;

  private constructor(private readonly opts: SystemdManagerOptions) {
    this.sockets = (opts.socketPaths ?? DEFAULT_SYSTEMD_SOCKETS).map(toSocket);
    this.jobTimeoutMs = opts.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  }

  /** Connects to the first socket that answers; rejects with DBusConnectionError listing each failure. */
  static async connect(opts: SystemdManagerOptions = {}): Promise<SystemdManager> {
    const m = new SystemdManager(opts);
    await m.current();
    return m;
  }

  async startTransientUnit(name: string, properties: UnitProperty[]): Promise<void> {
    try {
      await this.runJob(name, 'StartTransientUnit', 'ssa(sv)a(sa(sv))', [
        name,
        'replace',
        encodeProperties(properties),
        [],
      ]);
    } catch (err) {
      // runc's startUnit with ignoreExist (kubelet's slices): an existing unit is success.
      if (!isDBusError(err, UNIT_EXISTS)) throw err;
      const live = properties.filter((p) => !TRANSIENT_ONLY.has(p.name));
      if (live.length > 0) await this.setUnitProperties(name, true, live);
    }
  }

  async setUnitProperties(name: string, runtime: boolean, properties: UnitProperty[]): Promise<void> {
    await this.call({
      member: 'SetUnitProperties',
      signature: 'sba(sv)',
      body: [name, runtime, encodeProperties(properties)],
    });
  }

  async stopUnit(name: string): Promise<void> {
    await ignoring(NO_SUCH_UNIT, this.runJob(name, 'StopUnit', 'ss', [name, 'replace']));
  }

  async resetFailedUnit(name: string): Promise<void> {
    await ignoring(NO_SUCH_UNIT, this.call({ member: 'ResetFailedUnit', signature: 's', body: [name] }));
  }

  /** Reads through the path GetUnit returns (so the unit must be loaded; NoSuchUnit otherwise). */
  async getUnitProperty(name: string, iface: string, property: string): Promise<DBusVariant> {
    return this.withSession(async (s) => {
      const [path] = await s.client.call(managerCall(s, { member: 'GetUnit', signature: 's', body: [name] }));
      const [value] = await s.client.call({
        destination: s.bus ? SYSTEMD_BUS_NAME : undefined,
        path: path as string,
        interface: 'org.freedesktop.DBus.Properties',
        member: 'Get',
        signature: 'ss',
        body: [iface, property],
      });
      if (!isVariant(value))
        throw new DBusProtocolError(
          `Properties.Get ${iface}.${property} of ${name} returned ${JSON.stringify(typeof value)}, not a variant`,
        );
      return value;
    });
  }

  close(): void {
    this.closedByCaller = true;
    void this.session?.then(
      (s) => s.client.close(),
      () => undefined,
    );
    this.session = undefined;
  }

  /** Calls `member`, which returns a job path, and waits for the job; a result other than "done" is a SystemdJobError. */
  private async runJob(unit: string, member: string, signature: string, body: DBusValue[]): Promise<void> {
    const result = await this.withSession(async (s) => {
      await s.subscribed;
      const [job] = await s.client.call(managerCall(s, { member, signature, body }));
      return s.jobs.wait(job as string, unit, this.jobTimeoutMs);
    }).catch((err: unknown) => (err instanceof SystemdJobError ? err : Promise.reject(err)));
    if (result === 'done') return;
    // like runc's startUnit: clear the failed state, so the next start of this name is not refused
    await this.resetFailedUnit(unit).catch(() => undefined);
    throw result instanceof SystemdJobError
      ? result
      : new SystemdJobError(unit, result, `${member} job did not succeed`);
  }

  private call(c: Omit<MethodCall, 'path'>): Promise<DBusValue[]> {
    return this.withSession((s) => s.client.call(managerCall(s, c)));
  }

  /**
   * Runs `fn` on the current connection; if the connection is lost under it (systemd's
   * daemon-reexec closes every client), once more on a new one (runc's retryOnDisconnect).
   */
  private async withSession<T>(fn: (s: Session) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.current());
    } catch (err) {
      if (!(err instanceof DBusConnectionError && err.reason === 'closed') || this.closedByCaller) throw err;
      return fn(await this.current());
    }
  }

  /** The open session, reconnecting lazily when the last one ended (or never opened). */
  private async current(): Promise<Session> {
    if (this.closedByCaller) throw new DBusConnectionError('closed', 'SystemdManager was closed by its caller');
    const known = this.session;
    if (known) {
      const s = await known.catch(() => undefined);
      if (s && !s.client.closed) return s;
      if (this.session !== known) return this.current(); // another caller is already reconnecting
    }
    this.session = this.open();
    return this.session;
  }

  private async open(): Promise<Session> {
    const failures: string[] = [];
    for (const sock of this.sockets) {
      try {
        const client = await connectDBus({ path: sock.path, bus: sock.bus, timeoutMs: this.opts.timeoutMs });
        return newSession(client, sock.bus);
      } catch (err) {
        if (!(err instanceof DBusConnectionError)) throw err;
        failures.push(err.message);
      }
    }
    throw new DBusConnectionError('connect', `cannot reach systemd over D-Bus: ${failures.join('; ')}`);
  }
}

function newSession(client: DBusClient, bus: boolean): Session {
  const session: Session = { client, bus, jobs: new JobWatcher(client), subscribed: Promise.resolve() };
  session.subscribed = subscribe(session);
  session.subscribed.catch(() => undefined); // awaited by each job; a failure surfaces there
  return session;
}

/**
 * go-systemd's Subscribe. On a bus, JobRemoved reaches us only through a match rule, and only
 * systemd's unique name (GetNameOwner) may finish our jobs. On systemd's private socket every
 * signal is sent to every peer; Subscribe is harmless there and what go-systemd does too.
 */
async function subscribe(s: Session): Promise<void> {
  if (s.bus) {
    const rule = `type='signal',sender='${SYSTEMD_BUS_NAME}',path='${MANAGER_PATH}',interface='${MANAGER_INTERFACE}',member='JobRemoved'`;
    await s.client.call({ ...BUS_DAEMON, member: 'AddMatch', signature: 's', body: [rule] });
    const [owner] = await s.client.call({
      ...BUS_DAEMON,
      member: 'GetNameOwner',
      signature: 's',
      body: [SYSTEMD_BUS_NAME],
    });
    s.jobs.acceptOnlyFrom(owner as string);
  }
  await s.client.call(managerCall(s, { member: 'Subscribe' }));
}

function managerCall(s: Session, c: Omit<MethodCall, 'path'>): MethodCall {
  return { ...c, path: MANAGER_PATH, interface: MANAGER_INTERFACE, destination: s.bus ? SYSTEMD_BUS_NAME : undefined };
}

function encodeProperties(properties: UnitProperty[]): DBusValue[] {
  return properties.map((p) => [p.name, p.value]);
}

function toSocket(s: string | SystemdSocket): SystemdSocket {
  return typeof s === 'string' ? { path: s, bus: s.endsWith('/system_bus_socket') } : s;
}

function isDBusError(err: unknown, name: string): boolean {
  return err instanceof DBusError && err.errorName === name;
}

async function ignoring(errorName: string, p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!isDBusError(err, errorName)) throw err;
  }
}
