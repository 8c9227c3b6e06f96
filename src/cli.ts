/**
 * `kubelet-ts` entry: parse flags, configure logging, start the daemon, handle signals.
 * SIGTERM/SIGINT stop the loops and servers and exit 0, leaving containers running for the
 * next start to adopt; a second signal exits at once.
 */
import { ConfigError, errorMessage } from './errors.js';
import { loadConfig } from './config/index.js';
import { configureLogging, log } from './util/log.js';
import { startDaemon, VERSION } from './main.js';

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
    process.stdout.write(`Kubernetes ${VERSION}\n`);
    return 0;
  }
  const { config } = result;
  configureLogging({ format: config.flags.loggingFormat, verbosity: config.flags.verbosity });
  log().info({ version: VERSION, nodeName: config.nodeName, rootDir: config.flags.rootDir, mode: config.flags.kubeconfig ? 'apiserver' : 'standalone' }, 'Starting kubelet-ts');

  let daemon;
  try {
    daemon = await startDaemon(config);
  } catch (err) {
    log().fatal({ err: errorMessage(err) }, 'Failed to start');
    return 1;
  }
  let signals = 0;
  const onSignal = (sig: string) => {
    signals++;
    if (signals > 1) process.exit(1);
    log().info({ signal: sig }, 'Shutting down; containers are left running for the next start');
    void daemon.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  await daemon.done;
  return 0;
}
