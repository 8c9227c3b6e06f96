import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { testTempDir } from '../support/temp-dir.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SCRIPT = join(REPO, 'scripts', 'e2e-matrix.mjs');
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Entry = { run?: unknown; why?: unknown };
const WHY = 'a reason';
/**
 * One file of each kind: a runtime test with a hot path, a runtime test without one, a hot path
 * with a twin, the agent's own logic.
 */
const FOUR: Record<string, Entry> = {
  'pleg.test.ts': { run: 'every', why: WHY },
  'cri.test.ts': { run: 'runtimes', why: WHY },
  'subpath.test.ts': { run: 'twins', why: WHY },
  'api.test.ts': { run: 'once', why: WHY },
};

/** Runs the script on a test/e2e made of `files` classified by `entries`. */
function plan(
  files: string[],
  entries: Record<string, Entry>,
  ...args: string[]
): { status: number | null; lines: string[] } {
  const dir = testTempDir('kts-e2e-matrix-');
  dirs.push(dir);
  for (const f of files) writeFileSync(join(dir, f), '');
  writeFileSync(join(dir, 'matrix.json'), JSON.stringify({ files: entries }));
  const run = spawnSync(process.execPath, [SCRIPT, '--dir', dir, ...args], { encoding: 'utf8' });
  return { status: run.status, lines: `${run.stdout}${run.stderr}`.split('\n').filter(Boolean) };
}

describe('scripts/e2e-matrix.mjs', () => {
  it('default runtimes: every and runtimes on each, TS leg on 1.6 with every and twins, once and twins native on 2 only', () => {
    assert.deepEqual(plan(Object.keys(FOUR), FOUR), {
      status: 0,
      lines: [
        'e2e-native 1.6 1 cri.test.js pleg.test.js',
        'e2e-ts 1.6 0 pleg.test.js subpath.test.js',
        'e2e-native-containerd-1.7 1.7 1 cri.test.js pleg.test.js',
        'e2e-native-containerd-2 2 1 api.test.js cri.test.js pleg.test.js subpath.test.js',
      ],
    });
  });

  it('a single runtime runs every file natively and the TS leg there', () => {
    assert.deepEqual(plan(Object.keys(FOUR), FOUR, '--runtimes', '1.6').lines, [
      'e2e-native 1.6 1 api.test.js cri.test.js pleg.test.js subpath.test.js',
      'e2e-ts 1.6 0 pleg.test.js subpath.test.js',
    ]);
  });

  it('the TS leg goes with the first runtime listed; --only keeps the named files', () => {
    assert.deepEqual(plan(Object.keys(FOUR), FOUR, '--runtimes', '1.7 2', '--only', 'api cri subpath').lines, [
      'e2e-native-containerd-1.7 1.7 1 cri.test.js',
      'e2e-ts-containerd-1.7 1.7 0 subpath.test.js',
      'e2e-native-containerd-2 2 1 api.test.js cri.test.js subpath.test.js',
    ]);
    assert.equal(plan(Object.keys(FOUR), FOUR, '--only', 'nope').status, 2);
  });

  it('an unclassified file, a stale entry, a bad class and a missing reason fail together, each named', () => {
    const r = plan(['pleg.test.ts', 'new.test.ts', 'bad.test.ts', 'mute.test.ts', 'helper.ts'], {
      'pleg.test.ts': { run: 'every', why: WHY },
      'gone.test.ts': { run: 'once', why: WHY },
      'bad.test.ts': { run: 'sometimes', why: WHY },
      'mute.test.ts': { run: 'once', why: ' ' },
    });
    assert.equal(r.status, 1);
    assert.deepEqual(r.lines, [
      'test/e2e/new.test.ts is not classified: add it to test/e2e/matrix.json with "run": every | runtimes | twins | once and a one-line "why" (docs/testing.md says which)',
      'test/e2e/matrix.json names gone.test.ts, which test/e2e/ does not have: remove or rename the entry',
      'test/e2e/matrix.json: bad.test.ts has "run": "sometimes"; expected every | runtimes | twins | once',
      'test/e2e/matrix.json: mute.test.ts needs a one-line "why"',
    ]);
  });

  it("scripts/test.sh e2e-plan prints the repository's plan, narrowed by KUBELET_TS_E2E_RUNTIMES and KUBELET_TS_E2E_FILES", () => {
    const run = spawnSync('bash', [join(REPO, 'scripts', 'test.sh'), 'e2e-plan'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        KUBELET_TS_E2E_RUNTIMES: '1.6 2',
        KUBELET_TS_E2E_FILES: 'cri cri-events daemon url-source',
      },
    });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(run.stdout.split('\n').filter(Boolean), [
      'e2e-native 1.6 1 cri-events.test.js cri.test.js',
      'e2e-ts 1.6 0 cri-events.test.js daemon.test.js',
      'e2e-native-containerd-2 2 1 cri-events.test.js cri.test.js daemon.test.js url-source.test.js',
    ]);
  });
});
