/**
 * The two line formats of upstream's component-base, as pure functions of one record:
 *  - json: zapr/zap with component-base's encoder config (logs/json/json.go):
 *    {"ts":<epoch ms, float>,"logger":…,"caller":"dir/file.ts:N","msg":…,"v":N,<kv…>,"err":…};
 *    error lines carry no "v", as zapr's Error does not.
 *  - text: klog's header `Lmmdd hh:mm:ss.uuuuuu threadid file:line] "msg" err="…" key=value`,
 *    values serialized as klog's textlogger does (k8s.io/klog/v2/internal/serialize).
 */

export type Severity = 'I' | 'W' | 'E' | 'F';

export interface LogRecord {
  /** Wall-clock time in milliseconds since the epoch, fractional for sub-millisecond precision. */
  timeMs: number;
  severity: Severity;
  /** klog verbosity of the line (0 for info and warnings); absent on error lines. */
  v?: number;
  /** `dir/file.ts:line` of the call site, or '' when unknown. */
  caller: string;
  /** The logger's name (our `log('pleg')` component); zap's "logger" key, klog's `logger=` pair. */
  logger?: string;
  msg: string;
  /** Key/value pairs in order: the child logger's bindings first, then the call's. */
  kv: Array<[string, unknown]>;
  err?: string;
}

/** JSON.stringify that never throws (cycles, BigInt): what klog/zap print instead of failing. */
function safeJson(value: unknown): string {
  try {
    return (
      JSON.stringify(value, (_k, v: unknown) =>
        typeof v === 'bigint' ? v.toString() : v instanceof Error ? v.message : v,
      ) ?? 'null'
    );
  } catch (err) {
    return JSON.stringify(`<internal error: ${(err as Error).message}>`);
  }
}

export function formatJson(r: LogRecord): string {
  let line = `{"ts":${r.timeMs}`;
  if (r.logger) line += `,"logger":${JSON.stringify(r.logger)}`;
  if (r.caller) line += `,"caller":${JSON.stringify(r.caller)}`;
  line += `,"msg":${JSON.stringify(r.msg)}`;
  if (r.v !== undefined) line += `,"v":${r.v}`;
  for (const [k, v] of r.kv) if (v !== undefined) line += `,${JSON.stringify(k)}:${safeJson(v)}`;
  if (r.err !== undefined) line += `,"err":${JSON.stringify(r.err)}`;
  return line + '}\n';
}

// Go's strconv.Quote escapes control characters with its own short forms or \xNN where JSON uses \u00NN.
const GO_ESCAPES: Record<string, string> = { '0007': '\\a', '000b': '\\v', '007f': '\\x7f' };

/** Go's strconv.Quote for the strings we log: JSON's escaping with Go's spelling of control characters. */
export function goQuote(s: string): string {
  return JSON.stringify(s)
    .replace(/\x7f/g, '\\u007f')
    .replace(
      /\\u(00[0-7][0-9a-f])/gi,
      (_m, hex: string) => GO_ESCAPES[hex.toLowerCase()] ?? `\\x${hex.slice(2).toLowerCase()}`,
    );
}

/** klog's writeStringValue: quoted on one line, or a `<` … ` >` block with tab-indented lines. */
function textString(s: string): string {
  if (!s.includes('\n')) return goQuote(s);
  const lines = s.split('\n');
  const last = lines.pop()!;
  let out = '<\n' + lines.map((l) => `\t${l}\n`).join('');
  out += last === '' ? ' >' : `\t${last}\n >`;
  return out;
}

/** One value as klog's KVFormat writes it after `key=`. */
export function textValue(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return textString(v);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(v);
    default:
      if (v instanceof Error) return textString(v.message);
      return safeJson(v); // klog's formatAny: JSON
  }
}

const pad2 = (n: number) => (n < 10 ? '0' : '') + n;

/** klog's header: severity, mmdd, hh:mm:ss.uuuuuu (local time), the thread id padded to 7, file:line. */
function textHeader(r: LogRecord): string {
  const d = new Date(Math.floor(r.timeMs));
  const micros = String(Math.floor((r.timeMs % 1000) * 1000)).padStart(6, '0');
  const file = r.caller.slice(r.caller.lastIndexOf('/') + 1) || '???:1';
  return `${r.severity}${pad2(d.getMonth() + 1)}${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${micros} ${String(process.pid).padStart(7)} ${file}] `;
}

export function formatText(r: LogRecord): string {
  let line = textHeader(r) + goQuote(r.msg);
  if (r.err !== undefined) line += ` err=${textString(r.err)}`;
  if (r.logger) line += ` logger=${goQuote(r.logger)}`;
  for (const [k, v] of r.kv) if (v !== undefined) line += ` ${k}=${textValue(v)}`;
  return line + '\n';
}
