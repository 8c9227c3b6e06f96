/** loadConfig outcomes for config tests: the frozen Config of a run, or every problem reported. */
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';

export function run(argv: string[]) {
  const r = loadConfig(argv, {});
  assert.equal(r.kind, 'run');
  return (r as Extract<typeof r, { kind: 'run' }>).config;
}

export function problems(argv: string[]): string[] {
  try {
    loadConfig(argv, {});
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}
