/**
 * One pino logger for the process. JSON by default (upstream's --logging-format=json);
 * `configureLogging({format:'text'})` switches to a human format. Verbosity follows klog's -v:
 * 0 → info, 1–3 → debug, ≥4 → trace. Subsystems take a child at use time: `log('pleg')`, so a
 * logger put in place later (configureLogging, or a test's setLogger) is the one they write to.
 */
import { pino, destination, type Logger } from 'pino';

export type { Logger };

function build(format: 'json' | 'text', verbosity: number): Logger {
  const level = process.env.KUBELET_TS_LOG_LEVEL ?? (verbosity >= 4 ? 'trace' : verbosity >= 1 ? 'debug' : 'info');
  if (format === 'text') {
    return pino({ level, transport: { target: 'pino-pretty', options: { colorize: false, destination: 2, translateTime: 'SYS:HH:MM:ss.l' } } });
  }
  return pino({ level, base: { pid: process.pid } }, destination({ fd: 2, sync: false }));
}

let root: Logger = build('json', 0);
if (process.env.KUBELET_TS_LOG_LEVEL === undefined && process.env.NODE_TEST_CONTEXT) root.level = 'silent';

export function configureLogging(opts: { format: 'json' | 'text'; verbosity: number }): void {
  root = build(opts.format, opts.verbosity);
}

/** Puts `logger` in place of the process logger and returns the one it replaced (tests read log lines this way). */
export function setLogger(logger: Logger): Logger {
  const previous = root;
  root = logger;
  return previous;
}

/** The process logger; call at use time (not module load) so configureLogging takes effect. */
export function log(component?: string): Logger {
  return component ? root.child({ component }) : root;
}
