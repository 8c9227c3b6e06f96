/**
 * `kubelet-ts` entry: parse flags, configure logging, start the daemon, handle signals.
 * SIGTERM/SIGINT stop the loops and servers and exit 0, leaving containers running for the
 * next start to adopt; a second signal exits at once.
 */
import { ConfigError, errorMessage, KubeletError } from '../errors.js';
import { loadConfig } from '../config/index.js';
import { configureLogging, log } from '../util/log.js';
import { startDaemon } from './main.js';
import { formatRunOnce } from '../kubelet/run-once.js';
import { versionText } from './start-info.js';
import { VERSION } from '../version.js';
import { acquireLockFile, watchLockContention, type ContentionWatch, type HeldLock } from '../util/flock.js';
import { fileURLToPath } from 'node:url';
import { cgroupVersionVerdict, isCgroup2UnifiedMode } from '../cm/cgroup-version.js';
import { swapRefusal } from '../cm/swap.js';

export async function main(argv: string[]): Promise<number> {
  let result;
  try {
    result = loadConfig(argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`kubelet-ts: invalid configuration: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  if (result.kind === 'help') {
    process.stdout.write(result.text + '\n');
    return 0;
  }
  if (result.kind === 'version') {
    process.stdout.write(versionText());
    return 0;
  }
  const { config } = result;
  // Upstream validates this with the configuration, before anything starts (1.35 default: refuse).
  const cgroups = cgroupVersionVerdict(config.kubelet.failCgroupV1, isCgroup2UnifiedMode());
  if (cgroups.kind === 'refuse') {
    process.stderr.write(`kubelet-ts: invalid configuration: ${cgroups.message}\n`);
    return 1;
  }
  // Upstream's container manager refuses this before any pod starts.
  const swap = swapRefusal(config.kubelet.failSwapOn);
  if (swap) {
    process.stderr.write(`kubelet-ts: failed to run Kubelet: ${swap}\n`);
    return 1;
  }
  configureLogging({ format: config.flags.loggingFormat, verbosity: config.flags.verbosity });
  log().info(
    {
      version: VERSION,
      nodeName: config.nodeName,
      rootDir: config.flags.rootDir,
      mode: config.flags.kubeconfig ? 'apiserver' : 'standalone',
    },
    'Starting kubelet-ts',
  );
  // One line for every upstream field/flag that was set but is ignored, so nothing is silently dropped.
  if (config.acceptedNotActedOn.length > 0)
    log().info({ names: config.acceptedNotActedOn }, `accepted, not acted on: ${config.acceptedNotActedOn.join(', ')}`);

  let lock: HeldLock | undefined;
  let contention: ContentionWatch | undefined;
  try {
    if (config.flags.lockFile) {
      const path = config.flags.lockFile;
      lock = await acquireLockFile(path, {
        onWaiting: () => log().info({ path }, 'Waiting for the lock file held by another process'),
      });
      log().info({ path }, 'Acquired the lock file');
      if (config.flags.exitOnLockContention) contention = await watchLockContention(path);
    }
  } catch (err) {
    log().fatal({ err: errorMessage(err) }, 'Failed to take the lock file');
    return 1;
  }

  let daemon;
  try {
    daemon = await startDaemon(config);
  } catch (err) {
    // The code too, so that an operator (and a test) can match on it rather than on the text.
    log().fatal(
      { err: errorMessage(err), ...(err instanceof KubeletError ? { code: err.code } : {}) },
      'Failed to start',
    );
    return 1;
  }
  if (daemon.runOnce) {
    const { text, code } = formatRunOnce(await daemon.runOnce());
    process.stdout.write(text);
    await daemon.stop();
    return code;
  }
  let signals = 0;
  const onSignal = (sig: string) => {
    signals++;
    if (signals > 1) process.exit(1);
    log().info({ signal: sig }, 'Shutting down; containers are left running for the next start');
    void daemon.stop().then(() => {
      contention?.close();
      lock?.release();
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  // Upstream watchForLockfileContention: another agent opened the lock file to take it; leave cleanly.
  void contention?.contended.then(() => onSignal('lock file contention'));
  void lock?.lost.then((why) => {
    log().fatal({ path: lock!.path, why }, 'Lost the lock file');
    process.exit(1);
  });
  await daemon.done;
  return 0;
}

// `node dist/src/cmd/cli.js …` starts the agent too, through the launcher: it adds the V8 and
// malloc settings that must be given at process start (bin/kubelet-ts.js). Not awaited: the
// launcher imports this module, which must finish evaluating first.
if (process.argv[1] !== undefined && process.argv[1] === fileURLToPath(import.meta.url)) {
  void import(new URL('../../../bin/kubelet-ts.js', import.meta.url).href);
}
