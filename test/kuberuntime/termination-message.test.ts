// terminationMessagePolicy FallbackToLogsOnError (upstream TestGetTerminationMessage-like cases
// and readLastStringFromContainerLogs: 80 lines, 2048 bytes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastLogString, needsLogFallback } from '../../src/kuberuntime/termination-message.js';

const exited = { exitCode: 1, reason: 'Error', logPath: '/l', terminationMessagePolicy: 'FallbackToLogsOnError' };

test('the log is read only for FallbackToLogsOnError, a non-zero exit, a container that ran, a log path', () => {
  assert.equal(needsLogFallback(exited), true);
  assert.equal(needsLogFallback({ ...exited, terminationMessagePolicy: 'File' }), false);
  assert.equal(needsLogFallback({ ...exited, exitCode: 0 }), false);
  assert.equal(needsLogFallback({ ...exited, reason: 'ContainerCannotRun' }), false);
  assert.equal(needsLogFallback({ ...exited, logPath: '' }), false);
});

const line = (i: number, stream = 'stdout') =>
  `2026-11-27T13:00:00.${String(i).padStart(9, '0')}Z ${stream} F line ${i}\n`;

test('the last 80 lines, at most their last 2048 bytes, without the CRI prefixes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kts-tmsg-'));
  try {
    const short = join(dir, 'short.log');
    await writeFile(short, line(1) + line(2, 'stderr'));
    assert.equal(await lastLogString(short), 'line 1\nline 2\n');
    const long = join(dir, 'long.log');
    await writeFile(long, Array.from({ length: 200 }, (_, i) => line(i)).join(''));
    const s = await lastLogString(long);
    assert.ok(s.endsWith('line 199\n'), s.slice(-20));
    assert.ok(!s.includes('line 119\n'), 'only the last 80 lines');
    const wide = join(dir, 'wide.log');
    await writeFile(wide, `2026-11-27T13:00:00.000000000Z stdout F ${'x'.repeat(5000)}END\n`);
    const w = await lastLogString(wide);
    assert.equal(w.length, 2048);
    assert.ok(w.endsWith('END\n'));
    assert.match(await lastLogString(join(dir, 'missing.log')), /^Error on reading termination message from logs: /);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
