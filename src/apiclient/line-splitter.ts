/**
 * Splits a watch stream into its newline-terminated lines in linear time, with a cap on one line.
 * The old splitter appended each chunk to one string and searched it from the start, so a body
 * without newlines was re-scanned and re-copied per chunk (32 MB: 173 s, 705 MiB). Here each byte
 * is scanned for '\n' once, the unfinished line is kept as a list of chunks and joined once when
 * its newline arrives, and the cap is checked as bytes accumulate, before any join.
 */

export class LineSplitter {
  private parts: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** The bytes of the unfinished line held now. */
  get pending(): number {
    return this.pendingBytes;
  }

  /**
   * Feeds one chunk; returns the lines it completed (without '\n' or a trailing '\r'), or
   * undefined once a line is longer than the cap: the stream must then be dropped.
   */
  push(chunk: Buffer): Buffer[] | undefined {
    const lines: Buffer[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      if (this.pendingBytes + (nl - start) > this.maxLineBytes) return undefined;
      lines.push(this.finish(chunk.subarray(start, nl)));
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > this.maxLineBytes) return undefined;
      // A small tail must not pin the whole (possibly pooled) buffer it was cut from.
      this.parts.push(rest.length * 2 < rest.buffer.byteLength ? Buffer.from(rest) : rest);
    }
    return lines;
  }

  private finish(tail: Buffer): Buffer {
    const line = this.parts.length === 0 ? tail : Buffer.concat([...this.parts, tail]);
    this.parts = [];
    this.pendingBytes = 0;
    return line.length > 0 && line[line.length - 1] === 13 ? line.subarray(0, -1) : line;
  }
}
