import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, parseDuration } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { problems, run } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

function configFile(body: string): string {
  const dir = testTempDir('kts-config-');
  const p = join(dir, 'config.yaml');
  writeFileSync(p, body);
  return p;
}

test('upstream defaults', () => {
  const c = run(['--hostname-override=node-a']);
  assert.equal(c.kubelet.healthzPort, 10248);
  assert.equal(c.kubelet.readOnlyPort, 0, 'read-only port is off unless configured');
  assert.equal(c.kubelet.port, 10250);
  assert.equal(c.kubelet.fileCheckFrequencyMs, 20_000);
  assert.equal(c.kubelet.maxPods, 110);
  assert.equal(c.flags.rootDir, '/var/lib/kubelet');
  assert.equal(c.nodeName, 'node-a');
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.kubelet));
});

test('flags override the config file', () => {
  const p = configFile(
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: /etc/a\nreadOnlyPort: 10255\nfileCheckFrequency: 5s\n',
  );
  const c = run([`--config=${p}`, '--pod-manifest-path', '/etc/b', '--hostname-override=N1']);
  assert.equal(c.kubelet.staticPodPath, '/etc/b');
  assert.equal(c.kubelet.readOnlyPort, 10255);
  assert.equal(c.kubelet.fileCheckFrequencyMs, 5000);
  assert.equal(c.nodeName, 'n1', 'node names are lowercased');
});

test('every problem is reported at once, naming the field or flag', () => {
  const p = configFile(
    'apiVersion: v1\nkind: KubeletConfiguration\nreadOnlyPort: 99999\nbogusField: 1\nfileCheckFrequency: soon\n',
  );
  const errs = problems([`--config=${p}`, '--no-such-flag=1', '--healthz-port=abc']);
  const all = errs.join('\n');
  assert.match(all, /apiVersion must be kubelet\.config\.k8s\.io\/v1beta1/);
  assert.match(all, /config field readOnlyPort: must be a port number/);
  assert.match(all, /unknown field "bogusField"/);
  assert.match(all, /config field fileCheckFrequency: must be a duration/);
  assert.match(all, /unknown flag: --no-such-flag/);
  assert.match(all, /--healthz-port: must be an integer/);
});

test('a malformed command line is KTS_ERR_FLAG; a bad value alone is KTS_ERR_CONFIG', () => {
  const code = (argv: string[]) => {
    try {
      loadConfig(argv);
    } catch (err) {
      assert.ok(err instanceof ConfigError, String(err));
      return err.code;
    }
    assert.fail(`${argv.join(' ')} was accepted`);
  };
  assert.equal(code(['--hostname-override=x', '--no-such-flag=1']), 'KTS_ERR_FLAG');
  assert.equal(code(['--hostname-override=x', 'stray']), 'KTS_ERR_FLAG');
  assert.equal(code(['--hostname-override=x', '--healthz-port']), 'KTS_ERR_FLAG');
  assert.equal(code(['--hostname-override=x', '--healthz-port=abc', '--no-such-flag']), 'KTS_ERR_FLAG');
  assert.equal(code(['--hostname-override=x', '--healthz-port=abc']), 'KTS_ERR_CONFIG');
});

test('unreadable or malformed config file is a clear error', () => {
  assert.match(problems(['--config=/nonexistent/kubelet.yaml'])[0]!, /--config \/nonexistent\/kubelet\.yaml: .*ENOENT/);
  const p = configFile('a: [unclosed');
  assert.match(problems([`--config=${p}`])[0]!, /--config .*config\.yaml/);
});

test('-v, --logging-format, --help, --version', () => {
  assert.equal(run(['-v=4', '--hostname-override=x']).flags.verbosity, 4);
  assert.equal(run(['--v', '2', '--hostname-override=x']).flags.verbosity, 2);
  assert.equal(run(['--logging-format=text', '--hostname-override=x']).flags.loggingFormat, 'text');
  assert.match(problems(['--logging-format=xml'])[0]!, /--logging-format: must be json or text/);
  const help = loadConfig(['--help']);
  assert.equal(help.kind, 'help');
  assert.match((help as { text: string }).text, /--pod-manifest-path/);
  assert.equal(loadConfig(['--version']).kind, 'version');
});

test('endpoint and bool validation', () => {
  assert.match(problems(['--container-runtime-endpoint=tcp://x', '--hostname-override=x'])[0]!, /unix:\/\//);
  assert.equal(
    run(['--container-runtime-endpoint=unix:///run/x.sock', '--hostname-override=x']).kubelet.containerRuntimeEndpoint,
    'unix:///run/x.sock',
  );
  assert.equal(
    run(['--enable-debugging-handlers=false', '--hostname-override=x']).kubelet.enableDebuggingHandlers,
    false,
  );
});

test('parseDuration follows Go duration syntax', () => {
  assert.equal(parseDuration('20s'), 20_000);
  assert.equal(parseDuration('1m30s'), 90_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration('20'), undefined);
  assert.equal(parseDuration('x'), undefined);
});

test('systemReserved, kubeReserved, evictionHard: upstream defaults, file maps and flags', () => {
  const d = run(['--hostname-override=x']);
  assert.deepEqual(d.kubelet.systemReserved, {});
  assert.deepEqual(d.kubelet.kubeReserved, {});
  assert.deepEqual(d.kubelet.evictionHard, {
    'memory.available': '100Mi',
    'nodefs.available': '10%',
    'nodefs.inodesFree': '5%',
    'imagefs.available': '15%',
    'imagefs.inodesFree': '5%',
  });
  assert.deepEqual(d.flags.nodeLabels, {});
  assert.equal(d.kubelet.cgroupsPerQOS, true);
  assert.equal(d.kubelet.cgroupRoot, '');
  const cg = run([
    '--hostname-override=x',
    '--cgroups-per-qos=false',
    '--enforce-node-allocatable=',
    '--cgroup-root=/kts',
  ]);
  assert.equal(cg.kubelet.cgroupsPerQOS, false);
  assert.equal(cg.kubelet.cgroupRoot, '/kts');
  const p = configFile(
    [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      'systemReserved: {cpu: 200m, memory: 500Mi}',
      'kubeReserved:',
      '  cpu: "0.1"',
      '  memory: 256Mi',
      '  pid: 1000',
      'evictionHard:',
      '  memory.available: 200Mi',
      '',
    ].join('\n'),
  );
  const c = run([`--config=${p}`, '--hostname-override=x']);
  assert.deepEqual(c.kubelet.systemReserved, { cpu: '200m', memory: '500Mi' });
  assert.deepEqual(c.kubelet.kubeReserved, { cpu: '0.1', memory: '256Mi', pid: '1000' });
  assert.deepEqual(
    c.kubelet.evictionHard,
    { 'memory.available': '200Mi' },
    'a given map replaces the defaults, as upstream',
  );
  const f = run([
    `--config=${p}`,
    '--hostname-override=x',
    '--system-reserved=cpu=1,memory=1Gi',
    '--eviction-hard=memory.available<5%,nodefs.available<1Gi',
    '--node-labels=disk=ssd,example.com/zone=a',
  ]);
  assert.deepEqual(f.kubelet.systemReserved, { cpu: '1', memory: '1Gi' });
  assert.deepEqual(f.kubelet.evictionHard, { 'memory.available': '5%', 'nodefs.available': '1Gi' });
  assert.deepEqual(f.flags.nodeLabels, { disk: 'ssd', 'example.com/zone': 'a' });
  assert.ok(Object.isFrozen(f.kubelet.systemReserved));
});

test('reserved and eviction maps are validated entry by entry', () => {
  const p = configFile(
    [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      'systemReserved: {cpu: lots, gpu: 1}',
      'kubeReserved: [cpu]',
      'evictionHard: {memory.available: 150%, disk.free: 1Gi}',
      '',
    ].join('\n'),
  );
  const all = problems([
    `--config=${p}`,
    '--hostname-override=x',
    '--kube-reserved=cpu',
    '--node-labels=bad label',
  ]).join('\n');
  assert.match(all, /config field systemReserved: "lots" is not a non-negative quantity; unknown resource "gpu"/);
  assert.match(all, /config field kubeReserved: must be a map of resource to quantity/);
  assert.match(
    all,
    /config field evictionHard: threshold "150%" must be a quantity \(100Mi\) or a percentage \(10%\); unknown eviction signal "disk.free"/,
  );
  assert.match(all, /--kube-reserved: "cpu" must look like key=value/);
  assert.match(all, /--node-labels: "bad label" is not a valid key=value label/);
});

// The enforceNodeAllocatable rules of upstream ValidateKubeletConfiguration (validation_test.go cases).
test('enforceNodeAllocatable: options, none alone, the reserved cgroups named, cgroupsPerQOS', () => {
  const cases: [args: string[], problem: RegExp | undefined][] = [
    [['--enforce-node-allocatable=pods'], undefined],
    [['--enforce-node-allocatable='], undefined],
    [['--enforce-node-allocatable=none'], undefined],
    [['--enforce-node-allocatable=pods,none'], /may not contain other enforcements when "none"/],
    [
      ['--enforce-node-allocatable=invalid-enforce-node-allocatable'],
      /"invalid-enforce-node-allocatable" is not an option/,
    ],
    [
      ['--enforce-node-allocatable=pods,system-reserved'],
      /systemReservedCgroup \(--system-reserved-cgroup\) must be specified/,
    ],
    [
      ['--enforce-node-allocatable=kube-reserved-compressible'],
      /kubeReservedCgroup \(--kube-reserved-cgroup\) must be specified/,
    ],
    [
      [
        '--enforce-node-allocatable=system-reserved,kube-reserved',
        '--system-reserved-cgroup=/system.slice',
        '--kube-reserved-cgroup=/kube.slice',
      ],
      undefined,
    ],
    [
      ['--enforce-node-allocatable=system-reserved,system-reserved-compressible', '--system-reserved-cgroup=/s'],
      /"system-reserved" and "system-reserved-compressible" cannot be specified together/,
    ],
    [['--cgroups-per-qos=false'], /is not supported unless cgroupsPerQOS/],
    [['--cgroups-per-qos=false', '--enforce-node-allocatable=none'], undefined],
  ];
  for (const [args, problem] of cases) {
    const argv = ['--hostname-override=x', ...args];
    if (problem) assert.match(problems(argv).join('\n'), problem, args.join(' '));
    else assert.doesNotThrow(() => run(argv), args.join(' '));
  }
  const kc = run(['--hostname-override=x', '--pod-max-pids=100', '--kube-reserved-cgroup=/k']).kubelet;
  assert.equal(kc.podPidsLimit, 100);
  assert.deepEqual(kc.enforceNodeAllocatable, ['pods']);
  assert.equal(kc.kubeReservedCgroup, '/k');
});
