/**
 * The interfaces of the systemd cgroup driver's D-Bus layer: a D-Bus client connection, and the
 * unit manager the pod container manager uses (upstream: runc libcontainer/cgroups/systemd's use
 * of go-systemd's dbus.Conn).
 */
import type { DBusMessage } from './dbus-wire.js';
import type { DBusValue, DBusVariant } from './dbus-values.js';

export interface MethodCall {
  /** A bus name; needed on a message bus, omitted on a peer-to-peer connection. */
  destination?: string;
  path: string;
  interface?: string;
  member: string;
  /** The body's signature; '' or absent for no arguments. */
  signature?: string;
  body?: DBusValue[];
  /** Overrides the connection's default call timeout. */
  timeoutMs?: number;
}

export interface DBusClient {
  /** The unique name the bus gave us (Hello); undefined on a peer-to-peer connection. */
  readonly uniqueName: string | undefined;
  readonly closed: boolean;
  /** Resolves with the reply's body; rejects with DBusError (error reply) or DBusConnectionError. */
  call(c: MethodCall): Promise<DBusValue[]>;
  /** Calls `handler` for every signal received; returns the unsubscribe function. */
  onSignal(handler: (signal: DBusMessage) => void): () => void;
  /** Calls `handler` once when the connection ends, for any reason. */
  onClose(handler: (err: Error) => void): void;
  close(): void;
}

/** One property of a unit, as StartTransientUnit and SetUnitProperties take it: a(sv). */
export interface UnitProperty {
  name: string;
  value: DBusVariant;
}

/** What the systemd cgroup driver needs of systemd (org.freedesktop.systemd1.Manager). */
export interface SystemdUnitManager {
  /** Starts a transient unit and waits for its job to end "done"; an existing unit gets `properties` set instead. */
  startTransientUnit(name: string, properties: UnitProperty[]): Promise<void>;
  setUnitProperties(name: string, runtime: boolean, properties: UnitProperty[]): Promise<void>;
  /** Stops a unit and waits for its job; a unit that does not exist is already stopped. */
  stopUnit(name: string): Promise<void>;
  resetFailedUnit(name: string): Promise<void>;
  /** One property of a loaded unit, e.g. ('kubepods.slice', 'org.freedesktop.systemd1.Unit', 'ActiveState'). */
  getUnitProperty(name: string, iface: string, property: string): Promise<DBusVariant>;
  close(): void;
}
