/**
 * A kubeadm node's files load unchanged: the KubeletConfiguration kubeadm v1.35 writes
 * (/var/lib/kubelet/config.yaml: upstream cmd/kubeadm/app/componentconfigs/kubelet.go defaults,
 * marshalled with every non-omitempty zero value), kubeadm-flags.env and the systemd drop-in's
 * command line. Upstream names we do not act on are accepted and reported; anything else fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { helpText } from '../../src/config/index.js';
import { FIELDS } from '../../src/config/schema.js';
import { UPSTREAM_FIELDS, UPSTREAM_FLAGS } from '../../src/config/upstream-names.js';
import { problems, run } from './helpers.js';
import { KUBEADM_CONFIG, KUBEADM_FLAGS_ENV } from '../support/kubeadm-files.js';
import { testTempDir } from '../support/temp-dir.js';

test("cgroupDriver: kubeadm's systemd and cgroupfs load; anything else is refused, naming the field and both values", () => {
  assert.equal(run([`--config=${file(KUBEADM_CONFIG)}`, '--hostname-override=node-1']).kubelet.cgroupDriver, 'systemd');
  assert.equal(run(['--cgroup-driver=cgroupfs', '--hostname-override=n']).kubelet.cgroupDriver, 'cgroupfs');
  assert.equal(run(['--hostname-override=n']).kubelet.cgroupDriver, 'cgroupfs', 'upstream default');
  const ps = problems(['--cgroup-driver=Systemd', '--hostname-override=n']);
  assert.ok(
    ps.some((p) =>
      p.startsWith('cgroupDriver (--cgroup-driver): "Systemd" is not a cgroup driver; use "cgroupfs" or "systemd"'),
    ),
    ps.join(' | '),
  );
});

function file(body: string): string {
  const dir = testTempDir('kts-kubeadm-');
  const p = join(dir, 'config.yaml');
  writeFileSync(p, body);
  return p;
}

/** The drop-in's ExecStart: $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS. */
function dropInArgv(configPath: string): string[] {
  return [
    '--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf',
    '--kubeconfig=/etc/kubernetes/kubelet.conf',
    `--config=${configPath}`,
    ...KUBEADM_FLAGS_ENV,
    '--hostname-override=node-1',
  ];
}

test("kubeadm's KubeletConfiguration loads, every zero duration defaulted as upstream", () => {
  const c = run([`--config=${file(KUBEADM_CONFIG)}`, '--hostname-override=node-1']);
  const k = c.kubelet;
  assert.equal(k.syncFrequencyMs, 60_000);
  assert.equal(k.fileCheckFrequencyMs, 20_000);
  assert.equal(k.httpCheckFrequencyMs, 20_000);
  assert.equal(k.runtimeRequestTimeoutMs, 120_000);
  assert.equal(k.nodeStatusUpdateFrequencyMs, 10_000);
  assert.equal(k.nodeStatusReportFrequencyMs, 300_000, 'update frequency 0s is not "set explicitly"');
  assert.equal(k.imageMinimumGCAgeMs, 120_000);
  assert.equal(k.imageMaximumGCAgeMs, 0, 'imageMaximumGCAge has no default: 0s stays off');
  assert.equal(k.evictionPressureTransitionPeriodMs, 300_000);
  assert.equal(k.streamingConnectionIdleTimeoutMs, 4 * 3_600_000);
  assert.equal(k.shutdownGracePeriodMs, 0);
  assert.equal(k.containerRuntimeEndpoint, 'unix:///run/containerd/containerd.sock', '"" means the default');
  assert.deepEqual(k.authentication, {
    x509: { clientCAFile: '/etc/kubernetes/pki/ca.crt' },
    webhook: { enabled: true, cacheTTLMs: 120_000 },
    anonymous: { enabled: false },
  });
  assert.deepEqual(k.authorization, {
    mode: 'Webhook',
    webhook: { cacheAuthorizedTTLMs: 300_000, cacheUnauthorizedTTLMs: 30_000 },
  });
  assert.deepEqual(k.clusterDNS, ['10.96.0.10']);
  assert.equal(k.clusterDomain, 'cluster.local');
  assert.equal(k.healthzPort, 10248);
  assert.equal(k.staticPodPath, '/etc/kubernetes/manifests');
  assert.deepEqual([...c.acceptedNotActedOn].sort(), [
    'cpuManagerReconcilePeriod',
    'crashLoopBackOff',
    'logging',
    'memorySwap',
    'volumeStatsAggPeriod',
  ]);
});

test("kubeadm's flags (kubeadm-flags.env) and the systemd drop-in command line parse", () => {
  const c = run(dropInArgv(file(KUBEADM_CONFIG)));
  assert.equal(
    c.kubelet.containerRuntimeEndpoint,
    'unix:///var/run/containerd/containerd.sock',
    'the flag overrides the file',
  );
  assert.equal(c.flags.kubeconfig, '/etc/kubernetes/kubelet.conf');
  assert.equal(c.flags.bootstrapKubeconfig, '/etc/kubernetes/bootstrap-kubelet.conf');
  assert.equal(c.nodeName, 'node-1');
  assert.ok(!c.acceptedNotActedOn.includes('--bootstrap-kubeconfig'), 'TLS bootstrap is acted on');
  assert.equal(c.kubelet.rotateCertificates, true, 'kubeadm sets rotateCertificates');
});

test("the issue's kubeadm flags are accepted (bool flags alone or with a value) and reported once", () => {
  const c = run([
    '--hostname-override=n',
    '--cert-dir',
    '/var/lib/kubelet/pki',
    '--rotate-certificates',
    '--cgroup-driver=cgroupfs',
    '--fail-swap-on=false',
    '--feature-gates=NodeSwap=true',
    '--resolv-conf=/run/systemd/resolve/resolv.conf',
    '--node-ip=10.0.0.5',
  ]);
  assert.deepEqual([...c.acceptedNotActedOn], [], 'every one of them is acted on');
  assert.equal(c.kubelet.failSwapOn, false, '--fail-swap-on=false is acted on (starts with swap on)');
  assert.equal(c.kubelet.resolvConf, '/run/systemd/resolve/resolv.conf', '--resolv-conf is acted on');
  assert.deepEqual(c.kubelet.featureGates, { NodeSwap: true }, '--feature-gates is ours');
  assert.equal(c.flags.nodeIP, '10.0.0.5', '--node-ip is ours');
});

test('typos fail, naming the field or flag; accepted values are type-checked', () => {
  const p = file(
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDrvier: systemd\nfailSwapOn: "no"\ncpuManagerReconcilePeriod: soon\nmemorySwap: {swapBehaviour: NoSwap}\n',
  );
  const ps = problems([
    `--config=${p}`,
    '--hostname-override=n',
    '--rotate-certificate',
    '--fail-swap-on=maybe',
    '--cpu-manager-reconcile-period=10',
  ]);
  const has = (s: string) =>
    assert.ok(
      ps.some((x) => x.includes(s)),
      `expected a problem naming ${s}: ${ps.join(' | ')}`,
    );
  has('unknown field "cgroupDrvier"');
  has('config field failSwapOn: must be true or false');
  has('config field cpuManagerReconcilePeriod: must be a duration');
  has('unknown field "swapBehaviour"');
  has('unknown flag: --rotate-certificate');
  has('--fail-swap-on: must be true or false');
  has('--cpu-manager-reconcile-period: must be a duration');
});

test('registerWithTaints: Taint objects in the file, key=value:Effect on the flag', () => {
  const p = file(
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nregisterWithTaints:\n- key: node-role.kubernetes.io/control-plane\n  effect: NoSchedule\n- {key: dedicated, value: gpu, effect: NoExecute}\n',
  );
  assert.deepEqual(run([`--config=${p}`, '--hostname-override=n']).kubelet.registerWithTaints, [
    'node-role.kubernetes.io/control-plane:NoSchedule',
    'dedicated=gpu:NoExecute',
  ]);
  assert.deepEqual(
    run(['--register-with-taints=a=b:NoSchedule,c:NoExecute', '--hostname-override=n']).kubelet.registerWithTaints,
    ['a=b:NoSchedule', 'c:NoExecute'],
  );
  const bad = file(
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nregisterWithTaints:\n- {key: a, effect: NoSchedul}\n',
  );
  assert.match(
    problems([`--config=${bad}`, '--hostname-override=n']).join('\n'),
    /registerWithTaints\[0\]\.effect: must be one of NoSchedule, PreferNoSchedule, NoExecute/,
  );
  const strings = file(
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nregisterWithTaints: ["a:NoSchedule"]\n',
  );
  assert.match(
    problems([`--config=${strings}`, '--hostname-override=n']).join('\n'),
    /registerWithTaints\[0\]: must be a Taint object/,
  );
});

test('--help lists the accepted, not acted on names in a section of their own', () => {
  const text = helpText();
  const section = text.slice(text.indexOf('Accepted, not acted on'));
  assert.ok(section.length > 0 && section.includes('cpuManagerPolicy') && section.includes('--cpu-manager-policy'));
  assert.ok(!section.includes('failSwapOn') && !section.includes('--fail-swap-on'), 'failSwapOn is acted on');
  assert.ok(
    !section.includes('--bootstrap-kubeconfig') && !section.includes('--rotate-certificates'),
    'TLS bootstrap and rotation are acted on',
  );
  assert.ok(!section.includes('--container-runtime-endpoint'), 'a flag we act on is not in the section');
  assert.ok(!/\bsyncFrequency\b/.test(section), 'a field we act on is not in the section');
});

test('every field and flag we act on is an upstream name (ours are a subset of the data file)', () => {
  for (const f of FIELDS) {
    assert.ok(f.name in UPSTREAM_FIELDS, `${f.name} is not an upstream field`);
    if (f.flag) assert.ok(f.flag in UPSTREAM_FLAGS, `--${f.flag} is not an upstream flag`);
  }
});

test('/configz shows registerWithTaints as Taint objects, as the file gives them', async () => {
  const { renderConfigz } = await import('../../src/config/index.js');
  const p = file(
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nregisterWithTaints:\n- {key: a, effect: NoSchedule}\n- {key: b, value: c, effect: NoExecute}\n',
  );
  assert.deepEqual(renderConfigz(run([`--config=${p}`, '--hostname-override=n']).kubelet).registerWithTaints, [
    { key: 'a', effect: 'NoSchedule' },
    { key: 'b', value: 'c', effect: 'NoExecute' },
  ]);
});
