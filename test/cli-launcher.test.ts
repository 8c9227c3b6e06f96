/**
 * The launcher gives the agent its start-time settings (V8 semi-space size, malloc arenas) however
 * it is started: the bin as an executable (its shebang), `node bin/kubelet-ts.js` and
 * `node dist/src/cmd/cli.js` (one relaunch with them). A --require hook in NODE_OPTIONS records
 * each node process's flags and environment; the exit code and output pass through.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './support/kubelet-process.js';
import { testTempDir } from './support/temp-dir.js';

const dir = testTempDir('kts-launcher-');
const hook = join(dir, 'record.cjs');
writeFileSync(
  hook,
  `require('fs').appendFileSync(${JSON.stringify(join(dir, 'procs'))}, JSON.stringify({ execArgv: process.execArgv, arena: process.env.MALLOC_ARENA_MAX ?? null }) + '\\n');\n`,
);

function launch(name: string, command: string, args: string[]): { execArgv: string[]; arena: string | null }[] {
  const log = join(dir, 'procs');
  writeFileSync(log, '');
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: `--require ${hook}` };
  delete env.MALLOC_ARENA_MAX;
  delete env.KUBELET_TS_RELAUNCHED;
  const r = spawnSync(command, [...args, '--version'], { encoding: 'utf8', env });
  assert.equal(r.status, 0, `${name}: ${r.stderr}`);
  assert.match(r.stdout, /^Kubernetes v\S+\n/, `${name}: the version reaches stdout`);
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { execArgv: string[]; arena: string | null });
}

const FLAGS = [
  '--max-semi-space-size=2',
  '--single-threaded-gc',
  '--v8-pool-size=1',
  '--optimize-for-size',
  '--interrupt-budget=540672',
];

test('every way of starting the agent runs it with its V8 flags and MALLOC_ARENA_MAX', () => {
  const bin = join(REPO_ROOT, 'bin', 'kubelet-ts.js');
  const cases: [string, string, string[], number][] = [
    ['the bin as an executable (shebang)', bin, [], 1],
    ['node bin/kubelet-ts.js', process.execPath, [bin], 2],
    ['node dist/src/cmd/cli.js', process.execPath, [join(REPO_ROOT, 'dist', 'src', 'cmd', 'cli.js')], 2],
    ['node with the flags given (no relaunch)', process.execPath, [...FLAGS, bin], 1],
  ];
  for (const [name, command, args, processes] of cases) {
    const procs = launch(name, command, args);
    assert.equal(procs.length, processes, `${name}: node processes started`);
    const agent = procs.at(-1)!;
    for (const flag of FLAGS)
      assert.ok(agent.execArgv.includes(flag), `${name}: ${flag} in ${JSON.stringify(agent.execArgv)}`);
    if (processes === 2 || name.includes('shebang')) assert.equal(agent.arena, '2', `${name}: MALLOC_ARENA_MAX`);
  }
});
