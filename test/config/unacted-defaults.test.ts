/**
 * Every upstream field and flag kubelet-ts does not act on holds upstream's v1.35 default or is
 * refused (the project standard: never silently ignore what a user asked for). The cases are
 * generated from the table (src/config/unacted-defaults.ts), and the table is checked to cover
 * every unacted name, so a name added to upstream-names.ts without a default fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { problems, run } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';
import { unactedNames } from '../../src/config/load.js';
import { UNACTED_FIELDS, UNACTED_FLAGS, unactedFlagDefault } from '../../src/config/unacted-defaults.js';

const dir = testTempDir('kts-unacted-');
let n = 0;

/** A config file setting `name` to `value` (JSON is YAML). */
function fileArgv(name: string, value: unknown): string[] {
  const p = join(dir, `c${n++}.yaml`);
  const body = `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${name}: ${JSON.stringify(value)}\n`;
  writeFileSync(p, body);
  return [`--config=${p}`, '--hostname-override=n'];
}

/** A file value as the command line writes it: lists comma-separated, maps k=v. */
function flagForm(v: unknown): string {
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(',');
  if (typeof v === 'object' && v !== null)
    return Object.entries(v)
      .map(([k, x]) => `${k}=${String(x)}`)
      .join(',');
  return String(v);
}

test('the table covers every upstream name not acted on, and nothing else', () => {
  const { fields, flags } = unactedNames();
  assert.deepEqual(Object.keys(UNACTED_FIELDS).sort(), [...fields].sort());
  assert.deepEqual(Object.keys(UNACTED_FLAGS).sort(), [...flags].sort());
  for (const [flag, field] of Object.entries(UNACTED_FLAGS))
    if (typeof field === 'string') assert.ok(field in UNACTED_FIELDS, `--${flag} sets ${field}`);
});

test('every unacted config field: the default is accepted and reported, another value refused naming it', () => {
  for (const [name, d] of Object.entries(UNACTED_FIELDS)) {
    const c = run(fileArgv(name, d.sample));
    assert.ok(c.acceptedNotActedOn.includes(name), `${name} is reported as accepted, not acted on`);
    if (d.other === undefined) continue;
    const got = problems(fileArgv(name, d.other)).join('\n');
    assert.ok(got.includes(`config field ${name}: kubelet-ts accepts only upstream's default (${d.shown})`), got);
    assert.ok(got.includes(`(got ${JSON.stringify(d.other)})`) && got.includes('does not implement it'), got);
  }
});

test('every unacted flag: the default is accepted and reported, another value refused naming it', () => {
  for (const name of Object.keys(UNACTED_FLAGS)) {
    const d = unactedFlagDefault(name)!;
    const c = run([`--${name}=${flagForm(d.sample)}`, '--hostname-override=n']);
    assert.ok(c.acceptedNotActedOn.includes(`--${name}`), `--${name} is reported as accepted, not acted on`);
    if (d.other === undefined) continue;
    const raw = flagForm(d.other);
    const got = problems([`--${name}=${raw}`, '--hostname-override=n']).join('\n');
    assert.ok(got.includes(`--${name}: kubelet-ts accepts only upstream's default (${d.shown})`), got);
    assert.ok(got.includes(`(got ${JSON.stringify(raw)})`), got);
  }
});

test('defaults compare by meaning: durations, quantities, zero values defaults.go replaces, lists', () => {
  const accepted: [name: string, value: unknown][] = [
    ['volumeStatsAggPeriod', '60s'],
    ['volumeStatsAggPeriod', '1m0s'],
    ['volumeStatsAggPeriod', '0s'],
    ['cpuManagerReconcilePeriod', '0s'],
    ['cpuCFSQuotaPeriod', '0.1s'],
    ['registryBurst', 0],
    ['cpuManagerPolicy', ''],
    ['memorySwap', {}],
    ['memorySwap', { swapBehavior: 'NoSwap' }],
    ['memorySwap', { swapBehavior: '' }],
    ['volumePluginDir', '/usr/libexec/kubernetes/kubelet-plugins/volume/exec'],
    ['logging', { flushFrequency: 0, options: { json: { infoBufferSize: '0' }, text: { infoBufferSize: '0' } } }],
    ['logging', { format: 'text', flushFrequency: '5s', verbosity: 0 }],
    ['crashLoopBackOff', { maxContainerRestartPeriod: '5m0s' }],
    ['iptablesMasqueradeBit', 3],
    ['iptablesDropBit', 31],
  ];
  for (const [name, v] of accepted) assert.doesNotThrow(() => run(fileArgv(name, v)), `${name}: ${JSON.stringify(v)}`);
  const refused: [name: string, value: unknown][] = [
    ['memorySwap', { swapBehavior: 'LimitedSwap' }],
    ['logging', { verbosity: 4 }],
    ['registryPullQPS', 0],
    ['nodeStatusMaxImages', 0],
  ];
  for (const [name, v] of refused)
    assert.match(problems(fileArgv(name, v)).join(), new RegExp(`config field ${name}:`));
  for (const flag of [
    '--volume-stats-agg-period=60s',
    '--log-json-info-buffer-size=0Ki',
    '--enforce-node-allocatable=pods',
  ])
    assert.doesNotThrow(() => run([flag, '--hostname-override=n']), flag);
});

test('a typo in a nested member is still a typo, not a non-default value', () => {
  assert.match(problems(fileArgv('memorySwap', { swapBehaviour: 'NoSwap' })).join(), /unknown field "swapBehaviour"/);
});
