/**
 * Every file under bench/results/ is the output of one bench run (issue 30): its `run` block
 * says when, at which commit, with which command and under what load it was measured, so a
 * figure in the docs can always be traced to the run that produced it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const RESULTS_DIR = join(REPO, 'bench', 'results');

export interface RunInfo {
  /** ISO time the run started and ended. */
  started: string;
  finished: string;
  /** The command a reader types to repeat the run. */
  command: string;
  commit: string;
  /** The 1-minute load average when the run started and ended (the machine is shared). */
  load_avg_1m: { start: number; end: number };
  host: { cpus: number; kernel: string; node: string };
}

function commitOf(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    // The results a run has already written are not a change to the code it measured.
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/results'], {
      cwd: REPO,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${head}+dirty` : head;
  } catch {
    return 'unknown';
  }
}

/** Call when a run starts; `finish()` stamps the end. */
export function startRun(command: string): { finish(): RunInfo } {
  const started = new Date().toISOString();
  const loadStart = Number(loadavg()[0]!.toFixed(2));
  return {
    finish: () => ({
      started,
      finished: new Date().toISOString(),
      command,
      commit: commitOf(),
      load_avg_1m: { start: loadStart, end: Number(loadavg()[0]!.toFixed(2)) },
      host: { cpus: cpus().length, kernel: release(), node: process.version },
    }),
  };
}

/** Writes bench/results/<name> as `{ run, ...body }` and returns the path relative to the repo. */
export function writeResult(name: string, run: RunInfo, body: object): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, name), JSON.stringify({ run, ...body }, null, 2) + '\n');
  return join('bench', 'results', name);
}
