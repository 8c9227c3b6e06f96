/**
 * A private dbus-daemon (/usr/bin/dbus-daemon) for tests: its own config allowing EXTERNAL
 * authentication and every call, listening on a unix socket in a temporary directory. The
 * daemon is started with --nofork and its pid is kept, so stop() ends exactly that process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testTempDir } from './temp-dir.js';

export interface TestDBusDaemon {
  /** The bus socket path. */
  socketPath: string;
  pid: number;
  /** SIGKILL, as a crash would end it. */
  kill(): void;
  /** Stops the daemon and removes its directory. */
  stop(): Promise<void>;
}

const CONFIG = (socketPath: string) => `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=${socketPath}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`;

const DBUS_DAEMON = '/usr/bin/dbus-daemon';

export async function startDBusDaemon(): Promise<TestDBusDaemon> {
  if (!existsSync(DBUS_DAEMON))
    throw new Error(`${DBUS_DAEMON} is missing: install Debian's dbus-daemon (bash scripts/install-deps.sh)`);
  const dir = testTempDir('kts-dbus-');
  const socketPath = join(dir, 'bus');
  await writeFile(join(dir, 'bus.conf'), CONFIG(socketPath));
  const child = spawn(DBUS_DAEMON, [`--config-file=${join(dir, 'bus.conf')}`, '--nofork', '--print-address'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await printedAddress(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    socketPath,
    pid: child.pid!,
    kill: () => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once the daemon prints its address (it is listening then); rejects if it exits first. */
function printedAddress(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`dbus-daemon exited (${code}) before listening: ${err.trim()}`)));
  });
}
