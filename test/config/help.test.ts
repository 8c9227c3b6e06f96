import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { helpText } from '../../src/config/index.js';
import { ENVIRONMENT, renderDefault } from '../../src/config/help.js';
import { formatDuration } from '../../src/util/duration.js';
import { REPO_ROOT } from '../support/kubelet-process.js';

// upstream Go time.Duration.String() (src/time/time_test.go durationTests), in milliseconds
describe('Go-style durations', () => {
  const cases: Array<[number, string]> = [
    [0, '0s'],
    [1, '1ms'],
    [500, '500ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [10_000, '10s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [90_500, '1m30.5s'],
    [120_000, '2m0s'],
    [3_600_000, '1h0m0s'],
    [14_400_000, '4h0m0s'],
    [3_661_000, '1h1m1s'],
    [-1500, '-1.5s'],
    [0.5, '0.5ms'],
  ];
  for (const [ms, want] of cases) it(`${ms} ms → ${want}`, () => assert.equal(formatDuration(ms), want));
});

describe('--help', () => {
  const text = helpText();
  const flagLines = text.split('\n').filter((l) => l.startsWith('  --'));

  it('durations in Go syntax, never milliseconds', () => {
    assert.match(text, /--sync-frequency duration +.*default 1m0s\)/);
    assert.match(text, /--streaming-connection-idle-timeout duration +.*default 4h0m0s\)/);
    assert.match(text, /--file-check-frequency duration +.*default 20s\)/);
    for (const l of flagLines.filter((x) => / duration /.test(x)))
      assert.doesNotMatch(l, /default \d+\)/, `a bare number is not a duration: ${l}`);
  });

  it('descriptions start in one column', () => {
    const columns = new Set(flagLines.map((l) => /^ {2}--\S+(?: \S+)? +/.exec(l)![0].length));
    assert.equal(columns.size, 1, [...columns].join(','));
  });

  it('zero defaults are not shown, maps in flag syntax', () => {
    assert.equal(renderDefault('string', ''), '');
    assert.equal(renderDefault('int', 0), '');
    assert.equal(renderDefault('evictionMap', { 'memory.available': '100Mi' }), 'memory.available<100Mi');
    assert.equal(renderDefault('reservedMap', { cpu: '1' }), 'cpu=1');
  });

  it('lists every environment variable read under src/', () => {
    const read = new Set<string>();
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts'))
          for (const m of readFileSync(p, 'utf8').matchAll(/\benv(?:\.|\[')([A-Z][A-Z0-9_]+)/g)) read.add(m[1]!);
      }
    };
    walk(join(REPO_ROOT, 'src'));
    read.delete('NODE_TEST_CONTEXT'); // set by node --test only: silences the logger under the test runner
    const listed = ENVIRONMENT.map(([name]) => name);
    assert.deepEqual([...read].sort(), [...listed].sort());
    assert.match(text, /\nEnvironment variables:\n/);
    for (const name of listed) assert.match(text, new RegExp(`\\n {2}${name} +\\S`));
  });
});
