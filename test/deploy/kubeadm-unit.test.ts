/**
 * The units for a kubeadm node (deploy/kubeadm/): kubelet.service restarts for ever and runs the
 * bin (its shebang carries the V8 flags), and the drop-in passes kubeadm's four variables. The
 * drop-in's command line, expanded as systemd expands it (unquoted $VAR splits on whitespace),
 * with kubeadm's kubeadm-flags.env and an /etc/default/kubelet, is a command line the agent loads.
 * Every unit in deploy/ opts out of 1.35's cgroup v1 refusal (these hosts are cgroup v1).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/kubelet-process.js';
import { KUBEADM_CONFIG, KUBEADM_FLAGS_ENV } from '../support/kubeadm-files.js';
import { run } from '../config/helpers.js';
import { testTempDir } from '../support/temp-dir.js';

const unit = (name: string) => readFileSync(join(REPO_ROOT, 'deploy', 'kubeadm', name), 'utf8');
const settings = (text: string, key: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));

test('kubelet.service restarts for ever and runs the bin as an executable', () => {
  const u = unit('kubelet.service');
  assert.deepEqual(settings(u, 'Restart'), ['always']);
  assert.deepEqual(settings(u, 'StartLimitIntervalSec'), ['0']);
  assert.deepEqual(settings(u, 'KillMode'), ['process']);
  assert.match(
    settings(u, 'ExecStart')[0]!,
    /^\/opt\/kubelet-ts\/bin\/kubelet-ts\.js\b/,
    'not `node bin/…`: the shebang gives the V8 flags',
  );
  assert.match(settings(u, 'ExecStart')[0]!, / --fail-cgroupv1=false$/, '1.35 refuses cgroup v1 hosts otherwise');
  assert.match(
    readFileSync(join(REPO_ROOT, 'bin', 'kubelet-ts.js'), 'utf8').split('\n')[0]!,
    /--max-semi-space-size=2/,
  );
});

test("the drop-in's command line with kubeadm's files is one the agent loads", () => {
  const d = unit('10-kubeadm.conf');
  assert.ok(settings(d, 'EnvironmentFile').includes('-/var/lib/kubelet/kubeadm-flags.env'));
  assert.ok(settings(d, 'EnvironmentFile').includes('-/etc/default/kubelet'));
  const exec = settings(d, 'ExecStart').filter(Boolean);
  assert.equal(exec.length, 1);
  assert.match(
    exec[0]!,
    /\$KUBELET_KUBECONFIG_ARGS \$KUBELET_CONFIG_ARGS \$KUBELET_KUBEADM_ARGS \$KUBELET_CGROUPV1_ARGS \$KUBELET_EXTRA_ARGS$/,
  );

  // systemd's expansion: Environment= values, the EnvironmentFiles, then unquoted $VAR split on whitespace.
  const dir = testTempDir('kts-kubeadm-unit-');
  const config = join(dir, 'config.yaml');
  writeFileSync(config, KUBEADM_CONFIG);
  const env: Record<string, string> = {};
  for (const e of settings(d, 'Environment')) {
    const m = /^"([A-Z0-9_]+)=(.*)"$/.exec(e)!;
    env[m[1]!] = m[2]!;
  }
  env.KUBELET_CONFIG_ARGS = `--config=${config}`; // the test's copy of /var/lib/kubelet/config.yaml
  env.KUBELET_KUBEADM_ARGS = KUBEADM_FLAGS_ENV.join(' ');
  env.KUBELET_EXTRA_ARGS = '--node-labels=example.com/pool=blue --hostname-override=node-1';
  const argv = exec[0]!
    .split(/\s+/)
    .slice(1)
    .flatMap((w) => (w.startsWith('$') ? (env[w.slice(1)] ?? '').split(/\s+/).filter(Boolean) : [w]));
  const c = run(argv);
  assert.equal(c.flags.bootstrapKubeconfig, '/etc/kubernetes/bootstrap-kubelet.conf');
  assert.equal(c.flags.kubeconfig, '/etc/kubernetes/kubelet.conf');
  assert.equal(c.kubelet.containerRuntimeEndpoint, 'unix:///var/run/containerd/containerd.sock');
  assert.equal(c.flags.nodeLabels['example.com/pool'], 'blue');
  assert.equal(c.kubelet.rotateCertificates, true);
  assert.equal(c.kubelet.cgroupDriver, 'systemd');
  assert.equal(c.kubelet.failCgroupV1, false, "the drop-in's opt-out: 1.35 refuses cgroup v1 hosts otherwise");
});

test("our own unit (deploy/kubelet-ts.service) opts out of 1.35's cgroup v1 refusal", () => {
  const u = readFileSync(join(REPO_ROOT, 'deploy', 'kubelet-ts.service'), 'utf8');
  // systemd joins a line ending in a backslash with the next one.
  const exec = settings(u.replace(/\\\n/g, ' '), 'ExecStart')[0] ?? '';
  assert.match(exec, /^\/opt\/kubelet-ts\/bin\/kubelet-ts\.js .*--fail-cgroupv1=false/, exec);
});
