import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { problems, run } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

test('defaults of the daemon fields and flags', () => {
  const c = run([]);
  assert.equal(c.kubelet.staticPodURL, '');
  assert.deepEqual(c.kubelet.staticPodURLHeader, {});
  assert.equal(c.kubelet.imageGCHighThresholdPercent, 85);
  assert.equal(c.kubelet.imageGCLowThresholdPercent, 80);
  assert.equal(c.kubelet.imageMinimumGCAgeMs, 120_000);
  assert.equal(c.kubelet.serializeImagePulls, true);
  assert.equal(c.kubelet.shutdownGracePeriodMs, 0);
  assert.equal(c.flags.runOnce, false);
  assert.equal(c.flags.lockFile, undefined);
  assert.equal(c.kubelet.failCgroupV1, true, "1.35's default");
  assert.deepEqual(c.kubelet.featureGates, {});
});

test('--manifest-url-header is repeatable and adds values in order; the file takes a map of lists', () => {
  const c = run(['--manifest-url=http://x/p', '--manifest-url-header=a:1,b:2', '--manifest-url-header', 'a:3']);
  assert.deepEqual(c.kubelet.staticPodURLHeader, { a: ['1', '3'], b: ['2'] });
  const dir = testTempDir('kts-config-');
  const file = join(dir, 'c.yaml');
  writeFileSync(
    file,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodURL: https://h/m\nstaticPodURLHeader:\n  X-A: [one, two]\nshutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n',
  );
  const f = run([`--config=${file}`, '--runonce', '--lock-file=/tmp/l', '--exit-on-lock-contention']);
  assert.deepEqual(f.kubelet.staticPodURLHeader, { 'X-A': ['one', 'two'] });
  assert.equal(f.kubelet.shutdownGracePeriodMs, 30_000);
  assert.equal(f.flags.runOnce, true);
  assert.equal(f.flags.exitOnLockContention, true);
});

test('invalid daemon settings are named', () => {
  const p = problems([
    '--manifest-url=ftp://x',
    '--manifest-url-header=nocolon',
    '--image-gc-high-threshold=50',
    '--image-gc-low-threshold=60',
    '--exit-on-lock-contention',
  ]);
  assert.ok(
    p.some((m) => /--manifest-url-header: "nocolon" must look like key:value/.test(m)),
    p.join('\n'),
  );
  assert.ok(
    p.some((m) => /staticPodURL \(--manifest-url\): "ftp:\/\/x" must be an http/.test(m)),
    p.join('\n'),
  );
  assert.ok(
    p.some((m) => /imageGCLowThresholdPercent \(60\) must be less than imageGCHighThresholdPercent \(50\)/.test(m)),
    p.join('\n'),
  );
  assert.ok(
    p.some((m) => /--exit-on-lock-contention needs --lock-file/.test(m)),
    p.join('\n'),
  );
  assert.ok(problems(['--image-gc-high-threshold=101']).some((m) => /0-100/.test(m)));
});

test('allowedUnsafeSysctls: the flag (comma list) and the file; a pattern not namespaced is refused as NewAllowlist does', () => {
  assert.deepEqual(run([]).kubelet.allowedUnsafeSysctls, []);
  assert.deepEqual(run(['--allowed-unsafe-sysctls=kernel.msg*,net/ipv4/ip_forward']).kubelet.allowedUnsafeSysctls, [
    'kernel.msg*',
    'net/ipv4/ip_forward',
  ]);
  const file = join(testTempDir('kts-config-'), 'c.yaml');
  writeFileSync(
    file,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nallowedUnsafeSysctls: [kernel.sem, fs.mqueue.*]\n',
  );
  assert.deepEqual(run([`--config=${file}`]).kubelet.allowedUnsafeSysctls, ['kernel.sem', 'fs.mqueue.*']);
  assert.deepEqual(problems(['--allowed-unsafe-sysctls=vm.swappiness,net.*.foo']), [
    'allowedUnsafeSysctls (--allowed-unsafe-sysctls): the sysctl "vm.swappiness" are not known to be namespaced',
    'allowedUnsafeSysctls (--allowed-unsafe-sysctls): sysctl "net.*.foo" must have at most 253 characters and match regex ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]',
  ]);
});
