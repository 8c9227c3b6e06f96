import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './support/kubelet-process.js';
import { PACKAGE_VERSION, VERSION } from '../src/version.js';

test('--version prints the version, the native addon status and build details', () => {
  const out = execFileSync(process.execPath, [join(REPO_ROOT, 'bin', 'kubelet-ts.js'), '--version'], {
    encoding: 'utf8',
  });
  // upstream's `kubelet --version` prints `Kubernetes v1.35.x`; ours names that minor plus our own version
  assert.ok(out.startsWith('Kubernetes v1.35.0-kts.0.1.0\n'), out);
  assert.equal(VERSION, 'v1.35.0-kts.0.1.0');
  assert.match(out, /node v\d+\.\d+\.\d+, linux\//);
  assert.match(out, /^native addon: /m);
  const impl = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : '(native|ts)';
  assert.match(out, new RegExp(`^hot path pleg: ${impl}$`, 'm'));
});

test("the version suffix is package.json's version", () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(PACKAGE_VERSION, pkg.version);
  assert.match(VERSION, /^v1\.\d+\.\d+-kts\.\d+\.\d+\.\d+$/);
});
