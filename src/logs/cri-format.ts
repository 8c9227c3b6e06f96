/**
 * The CRI log file format (kubernetes/cri-api "Container log"): each line is
 * `<RFC3339Nano timestamp> <stdout|stderr> <tag>[:<more tags>] <content>\n`, where tag P marks a
 * partial line continued by the next one and F a full line.
 */
import { kubeletErrorClass } from '../errors.js';
import type { CriLogLine } from './types.js';

/** A line that is not in the CRI log format; readers skip it. */
class LogParseError extends kubeletErrorClass('KTS_ERR_CONTAINER_LOGS') {}

/** Parses one line without its trailing newline. */
export function parseCriLogLine(line: Buffer): CriLogLine {
  const s1 = line.indexOf(0x20);
  if (s1 <= 0) throw new LogParseError('timestamp is not found');
  const timestamp = line.subarray(0, s1).toString('latin1');
  const timeMs = Date.parse(timestamp);
  if (Number.isNaN(timeMs)) throw new LogParseError(`unexpected timestamp format ${JSON.stringify(timestamp)}`);
  const s2 = line.indexOf(0x20, s1 + 1);
  if (s2 < 0) throw new LogParseError('stream type is not found');
  const stream = line.subarray(s1 + 1, s2).toString('latin1');
  if (stream !== 'stdout' && stream !== 'stderr')
    throw new LogParseError(`unexpected stream type ${JSON.stringify(stream)}`);
  const s3 = line.indexOf(0x20, s2 + 1);
  if (s3 < 0) throw new LogParseError('log tag is not found');
  const tags = line
    .subarray(s2 + 1, s3)
    .toString('latin1')
    .split(':');
  return { timestamp, timeMs, stream, partial: tags[0] === 'P', content: line.subarray(s3 + 1) };
}

/**
 * Turns parsed lines into output as upstream's logWriter does: a partial line is written without
 * its newline and the next piece continues it (no timestamp prefix in the middle of a line).
 */
export class LineFormatter {
  private midLine = false;

  constructor(private readonly timestamps: boolean) {}

  format(l: CriLogLine): Buffer {
    const prefix = this.timestamps && !this.midLine ? Buffer.from(`${l.timestamp} `) : undefined;
    this.midLine = l.partial;
    const parts = [prefix, l.content, l.partial ? undefined : Buffer.from('\n')].filter(
      (b): b is Buffer => b !== undefined,
    );
    return Buffer.concat(parts);
  }
}
