/**
 * featureGates / --feature-gates: upstream's flag syntax and checks, then our own refusal of
 * values whose behaviour kubelet-ts does not have. Cases follow component-base:
 * cli/flag/map_string_bool_test.go TestSetMapStringBool (the flag syntax) and
 * featuregate/feature_gate_test.go TestFeatureGateFlag, TestFeatureGateSetFromMap and
 * TestFeatureGateOverride (unknown and locked gates, merging). Test gates are replaced by real
 * 1.35 gates of the same kind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FEATURE_GATES,
  convertFeatureGates,
  featureGateGaps,
  featureGateProblems,
  featureGateWarnings,
  featureGates,
} from '../../src/config/feature-gates.js';
import { problems, run } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';
import { REPO_ROOT } from '../support/kubelet-process.js';

test('flag syntax (upstream TestSetMapStringBool): pairs, trimming, ParseBool spellings, last wins', () => {
  const table: [raw: string, want: Record<string, boolean> | RegExp][] = [
    ['', {}],
    ['KubeletSeparateDiskGC=true', { KubeletSeparateDiskGC: true }],
    ['KubeletSeparateDiskGC=true,NodeSwap=false', { KubeletSeparateDiskGC: true, NodeSwap: false }],
    [' KubeletSeparateDiskGC = true , NodeSwap = false ', { KubeletSeparateDiskGC: true, NodeSwap: false }],
    ['KubeletSeparateDiskGC=1,NodeSwap=F', { KubeletSeparateDiskGC: true, NodeSwap: false }],
    ['KubeletSeparateDiskGC=true,KubeletSeparateDiskGC=false', { KubeletSeparateDiskGC: false }],
    ['KubeletSeparateDiskGC=true,,NodeSwap=true', { KubeletSeparateDiskGC: true, NodeSwap: true }],
    ['KubeletSeparateDiskGC', /malformed pair, expect string=bool/],
    ['KubeletSeparateDiskGC=maybe', /invalid value of KubeletSeparateDiskGC: maybe/],
  ];
  for (const [raw, want] of table) {
    const r = convertFeatureGates(raw, '--feature-gates');
    if (want instanceof RegExp) assert.match(r.problem ?? '', want, raw);
    else assert.deepEqual(r.value, want, raw);
  }
  assert.match(convertFeatureGates({ A: 'yes' }, 'featureGates').problem ?? '', /map of gate name to true\/false/);
  assert.match(convertFeatureGates(['A'], 'featureGates').problem ?? '', /map of gate name/);
});

test('upstream checks (TestFeatureGateSetFromMap, locked gates): unknown and locked-to-default', () => {
  const table: [set: Record<string, boolean>, want: string | undefined][] = [
    [{ KubeletSeparateDiskGC: true, NodeLogQuery: false }, undefined],
    [{ TestInvaild: true }, 'featureGates: unrecognized feature gate: TestInvaild'],
    [{ kubelettracing: true }, 'featureGates: unrecognized feature gate: kubelettracing'],
    [{ SidecarContainers: true }, undefined],
    // GA but not locked in 1.35: either value is accepted.
    [{ TopologyManagerPolicyOptions: false }, undefined],
    // Removed upstream before 1.35 (GA in 1.32, no longer in the 1.35 table).
    [{ SizeMemoryBackedVolumes: true }, 'featureGates: unrecognized feature gate: SizeMemoryBackedVolumes'],
    [
      { SidecarContainers: false },
      'featureGates: cannot set feature gate SidecarContainers to false, feature is locked to true',
    ],
    [
      { RecursiveReadOnlyMounts: false },
      'featureGates: cannot set feature gate RecursiveReadOnlyMounts to false, feature is locked to true',
    ],
    [
      { ExecProbeTimeout: false },
      'featureGates: cannot set feature gate ExecProbeTimeout to false, feature is locked to true',
    ],
    [
      { InPlacePodVerticalScaling: false },
      'featureGates: cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true',
    ],
  ];
  for (const [set, want] of table)
    assert.deepEqual(featureGateProblems(set, 'featureGates'), want ? [want] : [], JSON.stringify(set));
});

test('ours: a value whose behaviour kubelet-ts lacks is refused, naming the gate and why; defaults never are', () => {
  const refused = (set: Record<string, boolean>) => featureGateProblems(set, 'featureGates');
  assert.match(
    refused({ NodeLogQuery: true })[0]!,
    /feature gate NodeLogQuery=true is not supported by kubelet-ts: node log query/,
  );
  assert.match(refused({ AllAlpha: true })[0]!, /AllAlpha=true is not supported/);
  assert.match(refused({ PodLevelResources: false })[0]!, /PodLevelResources=false .*always honoured/);
  assert.match(refused({ GracefulNodeShutdown: false })[0]!, /GracefulNodeShutdown=false/);
  // Every gate at its default is accepted, the gaps (default on, behaviour missing) included.
  const defaults = Object.fromEntries(Object.entries(FEATURE_GATES).map(([n, s]) => [n, s.default]));
  assert.deepEqual(refused(defaults), []);
  // A gap's false is what the agent does: accepted.
  assert.deepEqual(refused({ ImageVolume: false }), []);
  // User namespaces are implemented (kubelet/userns): turning them off is refused.
  assert.match(refused({ UserNamespacesSupport: false })[0]!, /UserNamespacesSupport=false .*always supported/);
  // A gate that changes nothing here takes either value.
  assert.deepEqual(refused({ KubeletSeparateDiskGC: false, ContextualLogging: false }), []);
});

test("the whole shared table, as upstream's kubelet registers it: other components' gates take any value", () => {
  const refused = (set: Record<string, boolean>) => featureGateProblems(set, 'featureGates');
  // Operators set these in kubelet configs; upstream's kubelet accepts them.
  assert.deepEqual(refused({ RotateKubeletServerCertificate: true }), []);
  assert.match(refused({ RotateKubeletServerCertificate: false })[0]!, /serverTLSBootstrap alone/);
  // API server / scheduler / client-go gates: not the kubelet's, either value accepted.
  for (const name of ['APIResponseCompression', 'SchedulerAsyncAPICalls', 'InOrderInformers', 'ClientsPreferCBOR'])
    assert.deepEqual(refused({ [name]: true }).concat(refused({ [name]: false })), [], name);
  // Locked ones keep upstream's lock.
  assert.match(
    refused({ JobManagedBy: false })[0]!,
    /cannot set feature gate JobManagedBy to false, feature is locked/,
  );
  // A kubelet gate we lack at its non-default value is still refused, naming it.
  assert.match(refused({ QOSReserved: true })[0]!, /feature gate QOSReserved=true is not supported by kubelet-ts/);
  // A name in no table stays unknown.
  assert.deepEqual(refused({ NoSuchGate: true }), ['featureGates: unrecognized feature gate: NoSuchGate']);
  // 1.35's whole table (pkg/features with the gates it links, component-base logs, client-go): a change is noticed.
  assert.equal(Object.keys(FEATURE_GATES).length, 219);
});

test('the gaps are the default-on gates whose behaviour is missing (docs/differences.md lists them)', () => {
  assert.deepEqual(featureGateGaps(), [
    'ContainerCheckpoint',
    'ContainerRestartRules',
    'EnvFiles',
    'GracefulNodeShutdownBasedOnPodPriority',
    'HostnameOverride',
    'ImageVolume',
    'KubeletCrashLoopBackOffMax',
    'KubeletPSI',
    'KubeletPodResourcesDynamicResources',
    'RecursiveReadOnlyMounts',
    'ReloadKubeletServerCertificateFile',
    'SystemdWatchdog',
  ]);
});

test('FeatureGates.enabled: the default unless set; a name outside the table is a programming error', () => {
  const gates = featureGates({ KubeletFineGrainedAuthz: false });
  assert.equal(gates.enabled('KubeletFineGrainedAuthz'), false);
  assert.equal(featureGates({}).enabled('KubeletFineGrainedAuthz'), true);
  assert.equal(featureGates({}).enabled('MemoryQoS'), false);
  assert.throws(() => gates.enabled('NoSuchGate'), /not in the table/);
});

test("upstream's warnings for GA and deprecated gates that are set", () => {
  assert.deepEqual(featureGateWarnings({ NodeSwap: true, AllowDNSOnlyNodeCSR: false, KubeletSeparateDiskGC: false }), [
    'Setting GA feature gate NodeSwap=true. It will be removed in a future release.',
    'Setting deprecated feature gate AllowDNSOnlyNodeCSR=false. It will be removed in a future release.',
  ]);
});

function configFile(body: string): string {
  const p = join(testTempDir('kts-gates-'), 'config.yaml');
  writeFileSync(p, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${body}`);
  return p;
}

test('loadConfig: the file and --feature-gates merge, the flag winning per gate (kubeletConfigFlagPrecedence)', () => {
  const p = configFile('featureGates:\n  KubeletSeparateDiskGC: false\n  KubeletFineGrainedAuthz: false\n');
  const c = run([`--config=${p}`, '--feature-gates=KubeletSeparateDiskGC=true,NodeSwap=true', '--hostname-override=n']);
  assert.deepEqual(c.kubelet.featureGates, {
    KubeletSeparateDiskGC: true,
    KubeletFineGrainedAuthz: false,
    NodeSwap: true,
  });
  assert.ok(Object.isFrozen(c.kubelet.featureGates));
  assert.ok(!c.acceptedNotActedOn.includes('featureGates'), 'featureGates is ours now');
});

test('loadConfig: every gate problem is reported at once, from the file or the flag', () => {
  const p = configFile('featureGates: {NoSuchGate: true, NodeLogQuery: true}\n');
  const ps = problems([`--config=${p}`, '--feature-gates=SidecarContainers=false', '--hostname-override=n']);
  assert.ok(ps.includes('featureGates: unrecognized feature gate: NoSuchGate'), ps.join(' | '));
  assert.ok(ps.some((x) => x.startsWith('featureGates: feature gate NodeLogQuery=true is not supported')));
  assert.ok(ps.includes('featureGates: cannot set feature gate SidecarContainers to false, feature is locked to true'));
  assert.match(problems(['--feature-gates=Foo', '--hostname-override=n']).join(), /--feature-gates: malformed pair/);
  assert.match(
    problems([
      `--config=${configFile('featureGates: {KubeletSeparateDiskGC: "on"}\n')}`,
      '--hostname-override=n',
    ]).join(),
    /config field featureGates: must be a map of gate name to true\/false/,
  );
});

test('docs/differences.md names every default-on gate whose behaviour is missing', () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'differences.md'), 'utf8');
  for (const name of featureGateGaps()) assert.ok(doc.includes(`\`${name}\``), `${name} is not in docs/differences.md`);
});
