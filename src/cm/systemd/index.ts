/**
 * The D-Bus layer of the systemd cgroup driver: a hand-written D-Bus client (wire format,
 * SASL EXTERNAL, calls and signals over a unix socket) and systemd's unit manager on top of it.
 */
export type { DBusClient, MethodCall, SystemdUnitManager, UnitProperty } from './types.js';
export type { DBusValue, DBusVariant } from './dbus-values.js';
export { variant, MAX_MESSAGE_BYTES, MAX_ARRAY_BYTES, MAX_CONTAINER_DEPTH } from './dbus-values.js';
export {
  DBusProtocolError,
  DBusConnectionError,
  DBusError,
  SystemdJobError,
  type DBusConnectionFailure,
} from './errors.js';
export {
  encodeMessage,
  decodeMessage,
  messageLength,
  MessageType,
  MessageFlag,
  type DBusMessage,
} from './dbus-wire.js';
export { connectDBus, BUS_DAEMON, type DBusConnectOptions } from './dbus-connection.js';
export {
  SystemdManager,
  DEFAULT_SYSTEMD_SOCKETS,
  type SystemdManagerOptions,
  type SystemdSocket,
} from './systemd-manager.js';
export { slice, unitProperty, unitObjectPath, UNLIMITED } from './unit-properties.js';
