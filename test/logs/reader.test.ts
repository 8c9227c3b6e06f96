import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { LineFormatter, parseCriLogLine } from '../../src/logs/cri-format.js';
import { readLogs, tailStart } from '../../src/logs/reader.js';
import type { LogOptions } from '../../src/logs/types.js';
import { rotationSuffix } from '../../src/logs/rotation.js';
import { parseLogOptions } from '../../src/server/container-logs.js';
import { testTempDir } from '../support/temp-dir.js';

test('parses CRI log lines and rejects malformed ones', () => {
  const l = parseCriLogLine(Buffer.from('2024-05-01T10:00:00.123456789Z stderr P:x part one'));
  assert.equal(l.stream, 'stderr');
  assert.equal(l.partial, true);
  assert.equal(l.content.toString(), 'part one');
  assert.equal(l.timeMs, Date.parse('2024-05-01T10:00:00.123Z'));
  assert.throws(() => parseCriLogLine(Buffer.from('nonsense')), /timestamp/);
  assert.throws(() => parseCriLogLine(Buffer.from('2024-05-01T10:00:00Z stdin F x')), /stream/);
});

test('partial lines are joined, the timestamp printed once per line', () => {
  const f = new LineFormatter(true);
  const out = ['2024-01-01T00:00:00Z stdout P ab', '2024-01-01T00:00:01Z stdout F cd']
    .map((s) => f.format(parseCriLogLine(Buffer.from(s))).toString())
    .join('');
  assert.equal(out, '2024-01-01T00:00:00Z abcd\n');
});

test('tailStart and readLogs with tailLines, sinceTime and limitBytes', async () => {
  const dir = testTempDir('kts-logs-');
  const file = join(dir, '0.log');
  writeFileSync(
    file,
    [
      '2024-01-01T00:00:01Z stdout F one',
      'garbage',
      '2024-01-01T00:00:02Z stdout F two',
      '2024-01-01T00:00:03Z stdout F three',
      '',
    ].join('\n'),
  );
  const fh = await open(file);
  assert.equal(await tailStart(fh, 0), (await fh.stat()).size);
  await fh.close();
  const read = async (o: Partial<LogOptions>) => {
    let out = '';
    await readLogs(
      file,
      { follow: false, timestamps: false, previous: false, ...o },
      async (b) => {
        out += b.toString();
      },
      { signal: new AbortController().signal, open: (p) => open(p), isRunning: async () => false, pollMs: 10 },
    );
    return out;
  };
  assert.equal(await read({}), 'one\ntwo\nthree\n', 'a malformed line is skipped');
  assert.equal(await read({ tailLines: 2 }), 'two\nthree\n');
  assert.equal(await read({ tailLines: 10 }), 'one\ntwo\nthree\n');
  assert.equal(await read({ sinceTime: new Date('2024-01-01T00:00:02Z') }), 'two\nthree\n');
  assert.equal(await read({ limitBytes: 5 }), 'one\nt');
});

test('query validation and the rotation suffix', () => {
  const q = (s: string) => parseLogOptions(new URLSearchParams(s), 10_000);
  assert.equal(q('sinceSeconds=5').sinceTime?.getTime(), 5000);
  assert.equal(q('follow=true&tailLines=3').tailLines, 3);
  assert.throws(() => q('tailLines=x'), /tailLines/);
  assert.throws(() => q('limitBytes=0'), /limitBytes/);
  assert.equal(rotationSuffix(new Date('2024-03-04T05:06:07Z')), '20240304-050607');
});
