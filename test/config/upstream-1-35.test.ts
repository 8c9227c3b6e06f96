/**
 * The 1.35 command line and configuration: failCgroupV1 (default true since 1.35, flag
 * --fail-cgroupv1), and the flags 1.35 no longer has (--pod-infra-container-image, removed in
 * 1.35; --register-schedulable and --keep-terminated-pod-volumes, removed before) are unknown,
 * as upstream's pflag makes them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { problems, run } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';
import { UPSTREAM_FLAGS } from '../../src/config/upstream-names.js';

function configFile(body: string): string {
  const p = join(testTempDir('kts-1-35-'), 'config.yaml');
  writeFileSync(p, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${body}`);
  return p;
}

test('failCgroupV1: default true; false from the file or --fail-cgroupv1; the flag wins', () => {
  const table: [argv: string[], want: boolean][] = [
    [[], true],
    [[`--config=${configFile('failCgroupV1: false\n')}`], false],
    [[`--config=${configFile('failCgroupV1: true\n')}`], true],
    [['--fail-cgroupv1=false'], false],
    [['--fail-cgroupv1'], true],
    [[`--config=${configFile('failCgroupV1: false\n')}`, '--fail-cgroupv1=true'], true],
  ];
  for (const [argv, want] of table)
    assert.equal(run([...argv, '--hostname-override=n']).kubelet.failCgroupV1, want, argv.join(' '));
  assert.match(
    problems([`--config=${configFile('failCgroupV1: "no"\n')}`, '--hostname-override=n']).join(),
    /config field failCgroupV1: must be true or false/,
  );
  assert.match(
    problems(['--fail-cgroupv1=maybe', '--hostname-override=n']).join(),
    /--fail-cgroupv1: must be true or false/,
  );
});

test('flags removed by 1.35 are unknown flags (KTS_ERR_FLAG), as upstream', () => {
  for (const flag of ['pod-infra-container-image', 'register-schedulable', 'keep-terminated-pod-volumes']) {
    assert.ok(!(flag in UPSTREAM_FLAGS), flag);
    assert.deepEqual(problems([`--${flag}=x`, '--hostname-override=n']), [`unknown flag: --${flag}`]);
  }
});

test('fields 1.32–1.35 added that we do not act on: accepted at upstream default, refused otherwise', () => {
  const table: [yaml: string, refused?: RegExp][] = [
    ['mergeDefaultEvictionSettings: false'],
    [
      'mergeDefaultEvictionSettings: true',
      /mergeDefaultEvictionSettings: kubelet-ts accepts only upstream's default \(false\)/,
    ],
    ['crashLoopBackOff: {}'],
    ['crashLoopBackOff: {maxContainerRestartPeriod: 0s}'],
    ['crashLoopBackOff: {maxContainerRestartPeriod: 30s}', /crashLoopBackOff: .*KubeletCrashLoopBackOffMax/],
    ['userNamespaces: {idsPerPod: 65536}'],
    // upstream validation_linux.go: at least 65536, a multiple of it, at most 4294967295.
    ['userNamespaces: {idsPerPod: 131072}'],
    ['userNamespaces: {idsPerPod: 1}', /userNamespaces.idsPerPod must not be less than 65536/],
    ['userNamespaces: {idsPerPod: 100000}', /userNamespaces.idsPerPod must be a multiple of 65536/],
    ['userNamespaces: {idsPerPod: 4295032832}', /userNamespaces.idsPerPod must not be more than 4294967295/],
    ['containerLogMaxWorkers: 1'],
    ['containerLogMaxWorkers: 4', /containerLogMaxWorkers/],
  ];
  for (const [yaml, refused] of table) {
    const argv = [`--config=${configFile(`${yaml}\n`)}`, '--hostname-override=n'];
    if (refused) assert.match(problems(argv).join('\n'), refused, yaml);
    else assert.doesNotThrow(() => run(argv), yaml);
  }
  // A typo'd member is still a typo, not a non-default value.
  assert.match(
    problems([`--config=${configFile('userNamespaces: {idsperpod: 1}\n')}`, '--hostname-override=n']).join(),
    /config field userNamespaces: unknown field "idsperpod"/,
  );
});
