// Our metric names against upstream's (test/metrics/upstream-metric-names.txt), every declared
// metric updated somewhere in src/, the CRI operation names of upstream's instrumented services,
// and `promtool check metrics` over /metrics, /metrics/probes, /metrics/cadvisor and
// /metrics/resource as the agent renders them.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { metrics, registry } from '../../src/metrics/index.js';
import { probeRegistry } from '../../src/metrics/probes.js';
import { observePodRunning, recordImagePull } from '../../src/metrics/pod-startup-latency.js';
import { instrumented, operationType } from '../../src/cri/instrumentation.js';
import { createCgroupLayout } from '../../src/stats/cgroup-layout.js';
import { CgroupStatsProvider } from '../../src/stats/provider.js';
import { createTsCgroupReader } from '../../src/stats/cgroup-reader-ts.js';
import { resourceMetrics } from '../../src/stats/resource-metrics.js';
import { cadvisorMetrics } from '../../src/stats/cadvisor-metrics.js';
import { makeCgroupTree } from '../../bench/fixtures/cgroup-tree.js';
import { testTempDir } from '../support/temp-dir.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Our own kubelet_* metrics, not upstream's: each says what it measures in its help text. */
const OUR_EXTRAS = new Set([
  'kubelet_ts_pleg_exit_to_event_seconds', // container exit → ContainerDied event latency
  'kubelet_ts_oom_kill_to_event_seconds', // kernel OOM-kill record → OOM event latency
  'kubelet_ts_native_enabled', // which hot paths run in the C++ addon
  'kubelet_ts_housekeeping_duration_seconds', // one HandlePodCleanups pass (issue 30's 250-pod bench)
  'kubelet_ts_stats_pass_duration_seconds', // one stats pass over every cgroup (issue 30's 250-pod bench)
]);

/** The names dashboards and alerts query most; they must be exported. */
const IMPORTANT = [
  'kubelet_node_name',
  'kubelet_running_pods',
  'kubelet_running_containers',
  'kubelet_pod_worker_duration_seconds',
  'kubelet_pod_start_duration_seconds',
  'kubelet_pod_start_sli_duration_seconds',
  'kubelet_pleg_relist_duration_seconds',
  'kubelet_pleg_relist_interval_seconds',
  'kubelet_pleg_last_seen_seconds',
  'kubelet_pleg_discard_events',
  'kubelet_runtime_operations_total',
  'kubelet_runtime_operations_duration_seconds',
  'kubelet_runtime_operations_errors_total',
  'kubelet_started_pods_total',
  'kubelet_started_pods_errors_total',
  'kubelet_started_containers_total',
  'kubelet_started_containers_errors_total',
  'kubelet_cgroup_manager_duration_seconds',
  'kubelet_evictions',
  'kubelet_desired_pods',
  'kubelet_active_pods',
  'kubelet_orphaned_runtime_pods_total',
  'kubelet_http_requests_total',
];

function upstreamNames(): Set<string> {
  const text = readFileSync(join(ROOT, 'test', 'metrics', 'upstream-metric-names.txt'), 'utf8');
  return new Set(
    text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#')),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const promtool = spawnSync('promtool', ['--version']).status === 0;
/**
 * Lint findings upstream's kubelet has too (same names, kept for dashboards' sake): counters
 * without _total, and counters ending in _count.
 */
const UPSTREAM_LINT = [
  'kubelet_evented_pleg_connection_error_count counter metrics should have "_total" suffix',
  'kubelet_evented_pleg_connection_error_count non-histogram and non-summary metrics should not have "_count" suffix',
  'kubelet_evented_pleg_connection_success_count counter metrics should have "_total" suffix',
  'kubelet_evented_pleg_connection_success_count non-histogram and non-summary metrics should not have "_count" suffix',
  'kubelet_pleg_discard_events counter metrics should have "_total" suffix',
  'kubelet_evictions counter metrics should have "_total" suffix',
  'kubelet_certificate_manager_client_expiration_renew_errors counter metrics should have "_total" suffix',
  'kubelet_server_expiration_renew_errors counter metrics should have "_total" suffix',
];
function promtoolCheck(what: string, text: string): void {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  const findings = `${r.stdout}${r.stderr}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !UPSTREAM_LINT.includes(l));
  assert.deepEqual(findings, [], `promtool check metrics ${what}`);
  assert.ok(r.status === 0 || r.status === 3, `promtool exit ${r.status}: ${r.stderr}`); // 3: lint findings only
}

describe('metric names', () => {
  it("every kubelet_* name we export is upstream's, or one of our few extras; the important ones are there", async () => {
    const upstream = upstreamNames();
    const ours = (await registry.getMetricsAsJSON()).map((m) => m.name);
    for (const name of ours.filter((n) => n.startsWith('kubelet_'))) {
      assert.ok(upstream.has(name) || OUR_EXTRAS.has(name), `${name} is neither upstream's nor an allowed extra`);
    }
    for (const name of IMPORTANT) assert.ok(ours.includes(name), `${name} is not exported`);
  });

  it('labels as upstream: operation_type, container_type/code, static, node, runtime_handler', async () => {
    const labels = (name: string) => (registry.getSingleMetric(name) as unknown as { labelNames: string[] }).labelNames;
    assert.deepEqual(labels('kubelet_pod_worker_duration_seconds'), ['operation_type']);
    assert.deepEqual(labels('kubelet_runtime_operations_total'), ['operation_type']);
    assert.deepEqual(labels('kubelet_runtime_operations_duration_seconds'), ['operation_type']);
    assert.deepEqual(labels('kubelet_runtime_operations_errors_total'), ['operation_type']);
    assert.deepEqual(labels('kubelet_cgroup_manager_duration_seconds'), ['operation_type']);
    assert.deepEqual(labels('kubelet_started_containers_total'), ['container_type']);
    assert.deepEqual(labels('kubelet_started_containers_errors_total'), ['container_type', 'code']);
    assert.deepEqual(labels('kubelet_desired_pods'), ['static']);
    assert.deepEqual(labels('kubelet_node_name'), ['node']);
    assert.deepEqual(labels('kubelet_run_podsandbox_duration_seconds'), ['runtime_handler']);
    assert.deepEqual(labels('kubelet_pod_start_sli_duration_seconds'), ['first_with_network']);
  });

  it('every declared metric is updated somewhere in src/ (none declared and left at zero forever)', () => {
    const src = sourceFiles(join(ROOT, 'src'))
      .filter((p) => !p.endsWith(join('metrics', 'index.ts')))
      .map((p) => readFileSync(p, 'utf8'))
      .join('\n');
    for (const key of Object.keys(metrics)) {
      const used = new RegExp(`metrics\\.${key}\\.(inc|set|observe|dec|startTimer)\\(`);
      assert.ok(used.test(src), `metrics.${key} is declared but never updated`);
    }
  });
});

describe('CRI operations (upstream pkg/kubelet/kuberuntime/instrumented_services.go)', () => {
  it('operation_type names', () => {
    const cases: Array<[string, string]> = [
      ['Version', 'version'],
      ['Status', 'status'],
      ['RunPodSandbox', 'run_podsandbox'],
      ['StopPodSandbox', 'stop_podsandbox'],
      ['RemovePodSandbox', 'remove_podsandbox'],
      ['PodSandboxStatus', 'podsandbox_status'],
      ['ListPodSandbox', 'list_podsandbox'],
      ['CreateContainer', 'create_container'],
      ['StartContainer', 'start_container'],
      ['StopContainer', 'stop_container'],
      ['RemoveContainer', 'remove_container'],
      ['ListContainers', 'list_containers'],
      ['ContainerStatus', 'container_status'],
      ['UpdateContainerResources', 'update_container'],
      ['ReopenContainerLog', 'reopen_container_log'],
      ['ExecSync', 'exec_sync'],
      ['Exec', 'exec'],
      ['Attach', 'attach'],
      ['PortForward', 'port_forward'],
      ['ContainerStats', 'container_stats'],
      ['ListContainerStats', 'list_container_stats'],
      ['PodSandboxStats', 'podsandbox_stats'],
      ['ListPodSandboxStats', 'list_podsandbox_stats'],
      ['UpdateRuntimeConfig', 'update_runtime_config'],
      ['ListImages', 'list_images'],
      ['ImageStatus', 'image_status'],
      ['PullImage', 'pull_image'],
      ['RemoveImage', 'remove_image'],
      ['ImageFsInfo', 'image_fs_info'],
    ];
    for (const [method, op] of cases) assert.equal(operationType(method), op, method);
  });

  it('a call is counted and timed; a failed one is also an error', async () => {
    const count = async (name: string, op: string) =>
      (await registry.getSingleMetric(name)!.get()).values.find(
        (v) =>
          v.labels.operation_type === op &&
          !('le' in v.labels) &&
          (v as { metricName?: string }).metricName !== `${name}_sum`,
      )?.value ?? 0;
    const before = await count('kubelet_runtime_operations_total', 'list_images');
    const errorsBefore = await count('kubelet_runtime_operations_errors_total', 'list_images');
    assert.equal(await instrumented('ListImages', async () => 7), 7);
    await assert.rejects(
      instrumented('ListImages', async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(await count('kubelet_runtime_operations_total', 'list_images'), before + 2);
    assert.equal(await count('kubelet_runtime_operations_errors_total', 'list_images'), errorsBefore + 1);
    assert.match(
      await registry.metrics(),
      /kubelet_runtime_operations_duration_seconds_count\{operation_type="list_images"\} \d+/,
    );
  });
});

describe('pod start SLI (upstream pkg/kubelet/util/pod_startup_latency_tracker.go)', () => {
  it('excludes the image pull window; the total does not', () => {
    const t0 = Date.now();
    recordImagePull('u1', t0 + 1_000, t0 + 4_000);
    recordImagePull('u1', t0 + 2_000, t0 + 6_000); // overlapping pulls: one window 1 s .. 6 s
    assert.deepEqual(observePodRunning('u1', t0, t0 + 10_000, false), { total: 10, sli: 5 });
    assert.deepEqual(observePodRunning('u2', t0, t0 + 3_000, true), { total: 3, sli: 3 }, 'no pulls: SLI = total');
  });

  it('a pod created before the agent started is not observed (its start was not watched)', () => {
    assert.equal(observePodRunning('old', performance.timeOrigin - 60_000, Date.now(), false), undefined);
  });
});

describe(
  'promtool check metrics',
  { skip: !promtool && 'promtool not installed (scripts/install-deps.sh installs Debian prometheus)' },
  () => {
    let dir: string;
    before(() => {
      dir = testTempDir('kts-metrics-');
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('/metrics and /metrics/probes', async () => {
      metrics.nodeName.set({ node: 'node-a' }, 1);
      promtoolCheck('/metrics', await registry.metrics());
      promtoolCheck('/metrics/probes', await probeRegistry.metrics());
    });

    it('/metrics/cadvisor and /metrics/resource over a recorded cgroup tree', async () => {
      for (const mode of ['v2', 'v1'] as const) {
        const root = mkdtempSync(join(dir, mode));
        const tree = makeCgroupTree(root, { mode, pods: 2, containersPerPod: 2 });
        const p = new CgroupStatsProvider({
          nodeName: 'node-a',
          layout: createCgroupLayout(tree.mounts),
          reader: createTsCgroupReader(),
          listPods: async () => structuredClone(tree.pods),
          cgroupRoot: '/',
          rootDir: root,
          podLogsDir: join(root, 'logs'),
          memoryCapacity: 8n << 30n,
          housekeepingIntervalMs: 10_000,
          bootTime: new Date(0),
        });
        try {
          const snap = await p.collect();
          const oom = [
            { podUid: snap.pods[0]!.uid, namespace: 'ns', pod: 'pod-0', container: 'c1', id: '/x', count: 1 },
          ];
          promtoolCheck(`/metrics/cadvisor (${mode})`, cadvisorMetrics(snap, oom, 8n << 30n));
          promtoolCheck(`/metrics/resource (${mode})`, resourceMetrics(snap));
        } finally {
          p.stop();
        }
      }
    });
  },
);
