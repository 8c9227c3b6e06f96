// seccompDefault (upstream KubeletConfiguration field and --seccomp-default): acted on, so any
// value is accepted; false by default, the flag over the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { problems, run } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

test('seccompDefault: false by default, true from the file or --seccomp-default, the flag winning', () => {
  assert.equal(run([]).kubelet.seccompDefault, false);
  assert.equal(run(['--seccomp-default']).kubelet.seccompDefault, true);
  const file = join(testTempDir('kts-config-'), 'c.yaml');
  writeFileSync(file, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nseccompDefault: true\n');
  const c = run([`--config=${file}`]);
  assert.equal(c.kubelet.seccompDefault, true);
  assert.ok(!c.acceptedNotActedOn.includes('seccompDefault'), 'acted on, not merely accepted');
  assert.equal(run([`--config=${file}`, '--seccomp-default=false']).kubelet.seccompDefault, false);
  assert.match(problems(['--seccomp-default=maybe']).join('\n'), /seccomp-default/);
});
