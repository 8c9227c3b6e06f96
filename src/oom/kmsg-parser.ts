/**
 * TypeScript twin of the native kmsg parser (native/src/kmsg.{h,cc}): the same record split,
 * header rules and OOM line rules, byte for byte (the text is handled as latin1 so every byte
 * maps to one char; output strings are decoded as UTF-8, as the addon does).
 */
import type { OomKillRecord } from './types.js';

const U64 = /^[0-9]{1,20}$/;
const INT32_MAX = 2147483647;

function u64(s: string): number | undefined {
  if (!U64.test(s)) return undefined;
  const v = BigInt(s);
  return v > 0xffff_ffff_ffff_ffffn ? undefined : Number(v);
}

function pidOf(s: string): number | undefined {
  const v = u64(s);
  return v === undefined || v > INT32_MAX ? undefined : v;
}

const utf8 = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');

/** Value of key= in a comma list; the last wins. */
function listField(list: string, key: string): string {
  let found = '';
  for (const item of list.split(',')) {
    if (item.length > key.length && item.startsWith(key) && item[key.length] === '=')
      found = item.slice(key.length + 1);
  }
  return found;
}

export interface KmsgRecordHead {
  seq: number;
  tsUs: number;
  message: string;
}

/** One /dev/kmsg record's header and first message line; undefined when the header is malformed. */
export function parseKmsgRecord(rec: string): KmsgRecordHead | undefined {
  const semi = rec.indexOf(';');
  if (semi < 0) return undefined;
  const f = rec.slice(0, semi).split(',');
  if (f.length < 3) return undefined;
  const prio = u64(f[0]!);
  const seq = u64(f[1]!);
  const tsUs = u64(f[2]!);
  if (prio === undefined || seq === undefined || tsUs === undefined) return undefined;
  const msg = rec.slice(semi + 1);
  const nl = msg.indexOf('\n');
  return { seq, tsUs, message: nl < 0 ? msg : msg.slice(0, nl) };
}

export class OomLineParser {
  private lastPid = -1;

  feed(rec: KmsgRecordHead): OomKillRecord | undefined {
    const m = rec.message;
    if (m.startsWith('oom-kill:')) {
      const list = m.slice('oom-kill:'.length);
      const pid = pidOf(listField(list, 'pid'));
      if (pid === undefined) return undefined;
      this.lastPid = pid;
      return {
        seq: rec.seq,
        tsUs: rec.tsUs,
        pid,
        comm: utf8(listField(list, 'task')),
        constraint: utf8(listField(list, 'constraint')),
        oomMemcg: utf8(listField(list, 'oom_memcg')),
        taskMemcg: utf8(listField(list, 'task_memcg')),
      };
    }
    const k = m.indexOf('Killed process ');
    if (k < 0) return undefined;
    const rest = m.slice(k + 'Killed process '.length);
    const sp = rest.indexOf(' ');
    const pid = pidOf(sp < 0 ? rest : rest.slice(0, sp));
    if (pid === undefined) return undefined;
    if (pid === this.lastPid) {
      this.lastPid = -1; // the confirmation of the oom-kill record just reported
      return undefined;
    }
    let comm = '';
    if (sp >= 0 && sp + 1 < rest.length && rest[sp + 1] === '(') {
      const c = rest.slice(sp + 2);
      const close = c.lastIndexOf(')');
      comm = close < 0 ? c : c.slice(0, close);
    }
    return { seq: rec.seq, tsUs: rec.tsUs, pid, comm: utf8(comm), constraint: '', oomMemcg: '', taskMemcg: '' };
  }
}

/** Splits a buffer into records (a line not starting with a space starts one) and parses them. */
export function parseKmsgText(text: string, parser: OomLineParser, out: OomKillRecord[]): void {
  let pos = 0;
  while (pos < text.length) {
    let end = pos;
    for (;;) {
      const nl = text.indexOf('\n', end);
      if (nl < 0) {
        end = text.length;
        break;
      }
      end = nl + 1;
      if (end >= text.length || text[end] !== ' ') break;
    }
    const head = parseKmsgRecord(text.slice(pos, end));
    const kill = head && parser.feed(head);
    if (kill) out.push(kill);
    pos = end;
  }
}

export const parseKmsgTs = (buf: Buffer): OomKillRecord[] => {
  const out: OomKillRecord[] = [];
  parseKmsgText(buf.toString('latin1'), new OomLineParser(), out);
  return out;
};
