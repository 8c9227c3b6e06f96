import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './support/kubelet-process.js';

test('--version prints the version, the native addon status and build details', () => {
  const out = execFileSync(process.execPath, [join(REPO_ROOT, 'bin', 'kubelet-ts.js'), '--version'], { encoding: 'utf8' });
  assert.match(out, /^Kubernetes v\S+\n/);
  assert.match(out, /node v\d+\.\d+\.\d+, linux\//);
  assert.match(out, /^native addon: /m);
  const impl = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : '(native|ts)';
  assert.match(out, new RegExp(`^hot path pleg: ${impl}$`, 'm'));
});
