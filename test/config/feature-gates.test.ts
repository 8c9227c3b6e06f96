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
    ['KubeletTracing=true', { KubeletTracing: true }],
    ['KubeletTracing=true,NodeSwap=false', { KubeletTracing: true, NodeSwap: false }],
    [' KubeletTracing = true , NodeSwap = false ', { KubeletTracing: true, NodeSwap: false }],
    ['KubeletTracing=1,NodeSwap=F', { KubeletTracing: true, NodeSwap: false }],
    ['KubeletTracing=true,KubeletTracing=false', { KubeletTracing: false }],
    ['KubeletTracing=true,,NodeSwap=true', { KubeletTracing: true, NodeSwap: true }],
    ['KubeletTracing', /malformed pair, expect string=bool/],
    ['KubeletTracing=maybe', /invalid value of KubeletTracing: maybe/],
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
    [{ KubeletTracing: true, NodeLogQuery: false }, undefined],
    [{ TestInvaild: true }, 'featureGates: unrecognized feature gate: TestInvaild'],
    [{ kubelettracing: true }, 'featureGates: unrecognized feature gate: kubelettracing'],
    [{ SidecarContainers: true }, undefined],
    [
      { SidecarContainers: false },
      'featureGates: cannot set feature gate SidecarContainers to false, feature is locked to true',
    ],
    [
      { RecursiveReadOnlyMounts: false },
      'featureGates: cannot set feature gate RecursiveReadOnlyMounts to false, feature is locked to true',
    ],
  ];
  for (const [set, want] of table)
    assert.deepEqual(featureGateProblems(set, 'featureGates'), want ? [want] : [], JSON.stringify(set));
});

test('ours: a value whose behaviour kubelet-ts lacks is refused, naming the gate and why; defaults never are', () => {
  const refused = (set: Record<string, boolean>) => featureGateProblems(set, 'featureGates');
  assert.match(
    refused({ ImageVolume: true })[0]!,
    /feature gate ImageVolume=true is not supported by kubelet-ts: image volumes/,
  );
  assert.match(refused({ AllAlpha: true })[0]!, /AllAlpha=true is not supported/);
  assert.match(refused({ ExecProbeTimeout: false })[0]!, /ExecProbeTimeout=false .*timeoutSeconds/);
  assert.match(refused({ GracefulNodeShutdown: false })[0]!, /GracefulNodeShutdown=false/);
  // Every gate at its default is accepted, the gaps (default on, behaviour missing) included.
  const defaults = Object.fromEntries(Object.entries(FEATURE_GATES).map(([n, s]) => [n, s.default]));
  assert.deepEqual(refused(defaults), []);
  // A gap's false is what the agent does: accepted.
  assert.deepEqual(refused({ InPlacePodVerticalScaling: false, UserNamespacesSupport: false }), []);
  // A gate that changes nothing here takes either value.
  assert.deepEqual(refused({ KubeletTracing: false, ContextualLogging: false }), []);
});

test('the gaps are the default-on gates whose behaviour is missing (docs/differences.md lists them)', () => {
  assert.deepEqual(featureGateGaps(), [
    'ContainerCheckpoint',
    'GracefulNodeShutdownBasedOnPodPriority',
    'InPlacePodVerticalScaling',
    'KubeletPSI',
    'PodObservedGenerationTracking',
    'ProcMountType',
    'RecursiveReadOnlyMounts',
    'SupplementalGroupsPolicy',
    'SystemdWatchdog',
    'UserNamespacesSupport',
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
  assert.deepEqual(featureGateWarnings({ NodeSwap: true, AllowDNSOnlyNodeCSR: false, KubeletTracing: true }), [
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
  const p = configFile('featureGates:\n  KubeletTracing: false\n  KubeletFineGrainedAuthz: false\n');
  const c = run([`--config=${p}`, '--feature-gates=KubeletTracing=true,NodeSwap=true', '--hostname-override=n']);
  assert.deepEqual(c.kubelet.featureGates, { KubeletTracing: true, KubeletFineGrainedAuthz: false, NodeSwap: true });
  assert.ok(Object.isFrozen(c.kubelet.featureGates));
  assert.ok(!c.acceptedNotActedOn.includes('featureGates'), 'featureGates is ours now');
});

test('loadConfig: every gate problem is reported at once, from the file or the flag', () => {
  const p = configFile('featureGates: {NoSuchGate: true, ImageVolume: true}\n');
  const ps = problems([`--config=${p}`, '--feature-gates=SidecarContainers=false', '--hostname-override=n']);
  assert.ok(ps.includes('featureGates: unrecognized feature gate: NoSuchGate'), ps.join(' | '));
  assert.ok(ps.some((x) => x.startsWith('featureGates: feature gate ImageVolume=true is not supported')));
  assert.ok(ps.includes('featureGates: cannot set feature gate SidecarContainers to false, feature is locked to true'));
  assert.match(problems(['--feature-gates=Foo', '--hostname-override=n']).join(), /--feature-gates: malformed pair/);
  assert.match(
    problems([`--config=${configFile('featureGates: {KubeletTracing: "on"}\n')}`, '--hostname-override=n']).join(),
    /config field featureGates: must be a map of gate name to true\/false/,
  );
});

test('docs/differences.md names every default-on gate whose behaviour is missing', () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'differences.md'), 'utf8');
  for (const name of featureGateGaps()) assert.ok(doc.includes(`\`${name}\``), `${name} is not in docs/differences.md`);
});
