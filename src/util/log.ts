/**
 * One pino logger for the process, writing upstream's line formats (./log-format.ts): klog's
 * one-line text by default, component-base's JSON with `--logging-format=json`. pino keeps the
 * API (levels, children, the async fd writer); a logMethod hook builds the line itself instead
 * of pino's {"level":30,"time":…} record.
 *
 * Verbosity follows klog's -v, a line of verbosity v is written when v <= -v: info and warn are
 * V(0), debug V(2), trace V(4); errors always. Subsystems take a child at use time:
 * `log('pleg')`, so a logger put in place later (configureLogging, or a test's setLogger) is the
 * one they write to.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import { pino, destination, type Level, type Logger } from 'pino';
import { formatJson, formatText, type LogRecord, type Severity } from './log-format.js';
import { findOriginal, sourceMapText, type SourceMapText } from './source-map-lookup.js';

export type { Logger };
export type LogFormat = 'json' | 'text';

/** pino's numeric level → klog severity and verbosity (undefined: error lines carry no "v"). */
const LEVELS: Record<number, { severity: Severity; v?: number }> = {
  10: { severity: 'I', v: 4 },
  20: { severity: 'I', v: 2 },
  30: { severity: 'I', v: 0 },
  40: { severity: 'W', v: 0 },
  50: { severity: 'E' },
  60: { severity: 'F' },
};

/** The pino level that lets through exactly the lines of verbosity <= `verbosity`. */
export function levelForVerbosity(verbosity: number): Level {
  return verbosity >= 4 ? 'trace' : verbosity >= 2 ? 'debug' : 'info';
}

// --- caller -------------------------------------------------------------------------------
// The call site costs a V8 stack capture (~6 µs per line here, against ~1.5 µs to format it; docs/operating.md,
// Logging), paid only for lines that are written: pino drops a disabled level before the hook
// runs. Cheap enough to keep the real call site instead of a fixed name per logger. Positions are mapped to the .ts line through dist's source maps,
// read once per file; the result is cached per JS position.
//
// A map is kept as its text and looked up on demand (./source-map-lookup.ts): node:module's
// parsed SourceMap held 435 KiB of heap for kubelet.js alone, 2.2 MiB for all at 100 pods (issue
// 18's heap snapshot), and was parsed again in a pod delete's memory peak (issue 30). The texts
// are only needed until every call site that logs has been seen, so they are dropped once no new
// call site has come for SOURCE_MAP_IDLE_MS; a call site first seen later reads its file's map
// again (well under a millisecond, once).

export const SOURCE_MAP_IDLE_MS = 10_000;
const THIS_FILE = fileURLToPath(import.meta.url);
const sourceMaps = new Map<string, SourceMapText | null>();
const callers = new Map<string, string>();
let dropMaps: NodeJS.Timeout | undefined;

function sourceMapOf(file: string): SourceMapText | null {
  let sm = sourceMaps.get(file);
  if (sm === undefined) {
    try {
      sm = sourceMapText(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    } catch {
      sm = null; // no map (a build without them): the .js position is reported
    }
    sourceMaps.set(file, sm);
  }
  return sm;
}

/** (Re)arms the timer that drops the parsed source maps once call sites stop being new. */
function scheduleSourceMapDrop(): void {
  if (dropMaps) dropMaps.refresh();
  else (dropMaps = setTimeout(releaseSourceMaps, SOURCE_MAP_IDLE_MS)).unref();
}

/** Drops the parsed source maps (resolved call sites stay cached); returns how many were held. */
export function releaseSourceMaps(): number {
  const n = sourceMaps.size;
  sourceMaps.clear();
  dropMaps = undefined;
  return n;
}

/** zap's ShortCallerEncoder: the last directory and the file name. */
function shortPath(path: string): string {
  const parts = path.split('/');
  return parts.slice(-2).join('/');
}

function resolveCaller(file: string, line: number, col: number): string {
  const map = sourceMapOf(file);
  const original = map ? findOriginal(map, line - 1, col - 1) : undefined;
  if (original) return `${shortPath(original.source)}:${original.line + 1}`;
  return `${shortPath(file)}:${line}`;
}

/** `dir/file.ts:line` of the first frame outside pino and this file. */
export function callerOf(): string {
  const prepare = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  Error.prepareStackTrace = (_e, sites) => sites;
  Error.stackTraceLimit = 5; // this file, pino's level function, the caller; a little slack
  const holder: { stack?: NodeJS.CallSite[] } = {};
  Error.captureStackTrace(holder, callerOf);
  const sites = holder.stack ?? [];
  Error.prepareStackTrace = prepare;
  Error.stackTraceLimit = limit;
  for (const site of sites) {
    let file = site.getFileName() ?? '';
    if (file.startsWith('file://')) file = fileURLToPath(file);
    if (!file || file === THIS_FILE || file.includes('/node_modules/pino/')) continue;
    const line = site.getLineNumber() ?? 0;
    const col = site.getColumnNumber() ?? 0;
    const key = `${file}:${line}:${col}`;
    let caller = callers.get(key);
    if (caller === undefined) {
      callers.set(key, (caller = resolveCaller(file, line, col)));
      scheduleSourceMapDrop();
    }
    return caller;
  }
  return '';
}

// --- time -----------------------------------------------------------------------------------
// klog prints microseconds and zap a float of milliseconds; Date.now() has whole milliseconds.
// The monotonic clock adds the fraction, re-anchored whenever it strays a millisecond from the
// wall clock (NTP steps, suspend), so a line's time is never off by more than that.
let anchorWall = Date.now();
let anchorMono = performance.now();

export function nowMs(): number {
  const wall = Date.now();
  const est = anchorWall + (performance.now() - anchorMono);
  if (Math.abs(est - wall) < 1) return est;
  anchorWall = wall;
  anchorMono = performance.now();
  return wall;
}

// --- records --------------------------------------------------------------------------------

const errText = (e: unknown): string =>
  e instanceof Error ? e.message : typeof e === 'string' ? e : (JSON.stringify(e) ?? String(e));

/** A pino call's arguments — (obj, msg, …args), (err, msg), (msg, …args) — as a record's parts. */
export function recordFromCall(
  args: unknown[],
  bindings: Record<string, unknown>,
): Pick<LogRecord, 'msg' | 'kv' | 'err' | 'logger'> {
  const { component, ...bound } = bindings;
  const kv: Array<[string, unknown]> = Object.entries(bound);
  let err: string | undefined;
  let rest = args;
  const first = args[0];
  if (first instanceof Error) {
    err = first.message;
    rest = args.length > 1 ? args.slice(1) : [first.message];
  } else if (first !== null && typeof first === 'object') {
    for (const [k, v] of Object.entries(first)) {
      if (k === 'err') err = v === undefined ? undefined : errText(v);
      else kv.push([k, v]);
    }
    rest = args.slice(1);
  }
  const msg =
    rest.length === 0
      ? ''
      : typeof rest[0] === 'string'
        ? format(...(rest as [string, ...unknown[]]))
        : errText(rest[0]);
  return { msg, kv, err, logger: typeof component === 'string' ? component : undefined };
}

const boundCache = new WeakMap<object, Record<string, unknown>>();

function bindingsOf(logger: Logger): Record<string, unknown> {
  let b = boundCache.get(logger);
  if (b === undefined) boundCache.set(logger, (b = logger.bindings()));
  return b;
}

function build(format: LogFormat, verbosity: number): Logger {
  const level = process.env['KUBELET_TS_LOG_LEVEL'] || levelForVerbosity(verbosity);
  const dest = destination({ fd: 2, sync: false });
  const formatLine = format === 'json' ? formatJson : formatText;
  return pino(
    {
      level,
      base: undefined,
      hooks: {
        // Replaces pino's serialization: the line is written here and pino's own record never built.
        logMethod(args, _method, num) {
          const lvl = LEVELS[num] ?? LEVELS[30]!;
          const parts = recordFromCall(args, bindingsOf(this));
          dest.write(formatLine({ timeMs: nowMs(), severity: lvl.severity, v: lvl.v, caller: callerOf(), ...parts }));
        },
      },
    },
    dest,
  );
}

let root: Logger = build('text', 0);
if (process.env['KUBELET_TS_LOG_LEVEL'] === undefined && process.env['NODE_TEST_CONTEXT']) root.level = 'silent';

export function configureLogging(opts: { format: LogFormat; verbosity: number }): void {
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
