/**
 * Upstream's defaulting rules for the fields kubelet-ts acts on: zero means default for non-pointer
 * fields, explicit zero kept for pointer fields, and the rules that depend on other fields.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeletConfiguration } from '../../src/config/index.js';
import { run } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

function load(body: string, flags: string[] = []): KubeletConfiguration {
  const dir = testTempDir('kts-defaults-');
  const p = join(dir, 'config.yaml');
  writeFileSync(p, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${body}`);
  return run([`--config=${p}`, '--hostname-override=n', ...flags]).kubelet;
}

// upstream pkg/kubelet/apis/config/v1beta1/defaults_test.go TestSetDefaultsKubeletConfiguration
// ("empty config", "all negative"/"all zero" style cases), restricted to the fields we act on.
const CASES: { name: string; file: string; flags?: string[]; want: Partial<KubeletConfiguration> }[] = [
  {
    name: 'zero non-pointer fields take their defaults',
    file:
      'syncFrequency: 0s\nfileCheckFrequency: 0s\nhttpCheckFrequency: 0s\nport: 0\naddress: ""\nhealthzBindAddress: ""\nmaxPods: 0\n' +
      'runtimeRequestTimeout: 0s\nimageMinimumGCAge: 0s\nstreamingConnectionIdleTimeout: 0s\nevictionPressureTransitionPeriod: 0s\n' +
      'kubeAPIBurst: 0\neventBurst: 0\nnodeLeaseDurationSeconds: 0\ncontainerLogMaxSize: ""\npodLogsDir: ""\ncontainerRuntimeEndpoint: ""\n',
    want: {
      syncFrequencyMs: 60_000,
      fileCheckFrequencyMs: 20_000,
      httpCheckFrequencyMs: 20_000,
      port: 10250,
      address: '0.0.0.0',
      healthzBindAddress: '127.0.0.1',
      maxPods: 110,
      runtimeRequestTimeoutMs: 120_000,
      imageMinimumGCAgeMs: 120_000,
      streamingConnectionIdleTimeoutMs: 14_400_000,
      evictionPressureTransitionPeriodMs: 300_000,
      kubeAPIBurst: 100,
      eventBurst: 100,
      nodeLeaseDurationSeconds: 40,
      containerLogMaxSize: '10Mi',
      podLogsDir: '/var/log/pods',
      containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
    },
  },
  {
    name: 'zero pointer fields keep their zero (healthzPort 0 disables, eventRecordQPS/kubeAPIQPS 0 = unlimited)',
    file: 'healthzPort: 0\neventRecordQPS: 0\nkubeAPIQPS: 0\nreadOnlyPort: 0\n',
    want: { healthzPort: 0, eventRecordQPS: 0, kubeAPIQPS: 0, readOnlyPort: 0 },
  },
  {
    name: 'nodeStatusReportFrequency follows an explicitly set nodeStatusUpdateFrequency',
    file: 'nodeStatusUpdateFrequency: 20s\n',
    want: { nodeStatusUpdateFrequencyMs: 20_000, nodeStatusReportFrequencyMs: 20_000 },
  },
  {
    name: 'nodeStatusReportFrequency 0s also follows it',
    file: 'nodeStatusUpdateFrequency: 20s\nnodeStatusReportFrequency: 0s\n',
    want: { nodeStatusReportFrequencyMs: 20_000 },
  },
  {
    name: 'an explicit nodeStatusReportFrequency wins',
    file: 'nodeStatusUpdateFrequency: 20s\nnodeStatusReportFrequency: 1m\n',
    want: { nodeStatusReportFrequencyMs: 60_000 },
  },
  {
    name: 'nodeStatusUpdateFrequency unset: report 5m',
    file: '',
    want: { nodeStatusUpdateFrequencyMs: 10_000, nodeStatusReportFrequencyMs: 300_000 },
  },
  {
    name: 'the flag --node-status-update-frequency does not move the report frequency (defaulting is of the file)',
    file: '',
    flags: ['--node-status-update-frequency=20s'],
    want: { nodeStatusUpdateFrequencyMs: 20_000, nodeStatusReportFrequencyMs: 300_000 },
  },
  {
    name: 'maxParallelImagePulls >= 2 implies serializeImagePulls false',
    file: 'maxParallelImagePulls: 3\n',
    want: { maxParallelImagePulls: 3, serializeImagePulls: false },
  },
  {
    name: 'maxParallelImagePulls 1 keeps serializeImagePulls true',
    file: 'maxParallelImagePulls: 1\n',
    want: { serializeImagePulls: true },
  },
  {
    name: 'an explicit serializeImagePulls wins over maxParallelImagePulls',
    file: 'maxParallelImagePulls: 1\nserializeImagePulls: false\n',
    want: { serializeImagePulls: false, maxParallelImagePulls: 1 },
  },
  {
    name: 'containerLogMonitorInterval 0s takes its default',
    file: 'containerLogMonitorInterval: 0s\n',
    want: { containerLogMonitorIntervalMs: 10_000 },
  },
  {
    name: 'imageMaximumGCAge is taken as given (0 = off, no default)',
    file: 'imageMaximumGCAge: 168h\n',
    want: { imageMaximumGCAgeMs: 168 * 3_600_000 },
  },
];

for (const c of CASES) {
  test(`defaulting: ${c.name}`, () => {
    const kc = load(c.file, c.flags);
    for (const [k, v] of Object.entries(c.want)) assert.deepEqual(kc[k as keyof KubeletConfiguration], v, k);
  });
}

test('defaulting: zero cache TTLs of authentication/authorization take the defaults', () => {
  const kc = load(
    'authentication: {webhook: {cacheTTL: 0s}}\nauthorization: {webhook: {cacheAuthorizedTTL: 0s, cacheUnauthorizedTTL: "0"}}\n',
  );
  assert.equal(kc.authentication.webhook.cacheTTLMs, 120_000);
  assert.equal(kc.authorization.webhook.cacheAuthorizedTTLMs, 300_000);
  assert.equal(kc.authorization.webhook.cacheUnauthorizedTTLMs, 30_000);
});

test('defaulting: flags are not re-defaulted (an explicit --max-pods=0 is still an error)', () => {
  assert.throws(() => load('', ['--max-pods=0']), /--max-pods: must be at least 1/);
});

test('defaulting: an explicit serializeImagePulls true is kept, so maxParallelImagePulls 3 with it is an error (as upstream validation)', () => {
  assert.throws(
    () => load('maxParallelImagePulls: 3\nserializeImagePulls: true\n'),
    /maxParallelImagePulls must be 0 or 1 when serializeImagePulls is true/,
  );
  assert.throws(
    () => load('maxParallelImagePulls: 3\n', ['--serialize-image-pulls=true']),
    /maxParallelImagePulls must be 0 or 1/,
  );
});

// upstream validation.go: "containerLogMonitorInterval must be a positive time duration greater
// than or equal to 3s" (TestValidateKubeletConfiguration), after zero took the default.
test('validation: containerLogMonitorInterval below 3s is refused, 3s is accepted', () => {
  assert.throws(
    () => load('containerLogMonitorInterval: 2s\n'),
    /config field containerLogMonitorInterval: must be at least 3s \(got "2s"\)/,
  );
  assert.throws(() => load('containerLogMonitorInterval: 500ms\n'), /must be at least 3s/);
  assert.equal(load('containerLogMonitorInterval: 3s\n').containerLogMonitorIntervalMs, 3_000);
});
