// The monitoring kit without a running agent: `promtool check config` on the scrape config,
// `promtool check rules` and `promtool test rules` on the alert rules and their cases, and every
// metric the dashboard and the rules query is one the agent exports (on one of its four
// endpoints) or Prometheus itself makes (up).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { registry } from '../../src/metrics/index.js';
import { probeRegistry } from '../../src/metrics/probes.js';
import { createCgroupLayout } from '../../src/stats/cgroup-layout.js';
import { CgroupStatsProvider } from '../../src/stats/provider.js';
import { createTsCgroupReader } from '../../src/stats/cgroup-reader-ts.js';
import { resourceMetrics } from '../../src/stats/resource-metrics.js';
import { cadvisorMetrics } from '../../src/stats/cadvisor-metrics.js';
import { makeCgroupTree } from '../../bench/fixtures/cgroup-tree.js';
import {
  ALERT_RULES,
  ALERT_TESTS,
  CERTIFICATE_MANAGER_NAMES,
  alertExpressions,
  concreteScrapeConfig,
  dashboardQueries,
  selectedMetricNames,
} from './kit.js';
import { testTempDir } from '../support/temp-dir.js';

const promtool = spawnSync('promtool', ['--version']).status === 0;
const skip = !promtool && 'promtool not installed (scripts/install-deps.sh installs Debian prometheus)';

function run(args: string[], cwd?: string): { status: number | null; out: string } {
  const r = spawnSync('promtool', args, { encoding: 'utf8', cwd });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

let dir: string;
before(() => {
  dir = testTempDir('kts-kit-');
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every family name the agent can export, from its four endpoints' renderings. */
async function exportedNames(): Promise<Set<string>> {
  const names = new Set<string>();
  const add = (text: string) => {
    for (const m of text.matchAll(/^# TYPE (\S+) /gm)) names.add(m[1]!);
  };
  add(await registry.metrics());
  add(await probeRegistry.metrics());
  const root = mkdtempSync(join(dir, 'tree-'));
  const tree = makeCgroupTree(root, { mode: 'v2', pods: 1, containersPerPod: 1 });
  const p = new CgroupStatsProvider({
    nodeName: 'n',
    layout: createCgroupLayout(tree.mounts),
    reader: createTsCgroupReader(),
    listPods: async () => structuredClone(tree.pods),
    cgroupRoot: '/',
    rootDir: root,
    podLogsDir: join(root, 'logs'),
    memoryCapacity: 1n << 30n,
    housekeepingIntervalMs: 10_000,
  });
  try {
    const snap = await p.collect();
    add(resourceMetrics(snap));
    add(
      cadvisorMetrics(
        snap,
        [{ podUid: snap.pods[0]!.uid, namespace: 'n', pod: 'p', container: 'c', id: '/x', count: 1 }],
        1n << 30n,
      ),
    );
  } finally {
    p.stop();
  }
  return names;
}

/** A selected name's family: histogram series are name_bucket/_sum/_count. */
const family = (n: string) => n.replace(/_(bucket|sum|count)$/, '');

describe('monitoring kit (deploy/)', { skip }, () => {
  it('promtool check config accepts the scrape config (made concrete for one node)', () => {
    const files = ['ca.crt', 'client.crt', 'client.key'].map((f) => join(dir, f));
    for (const f of files) writeFileSync(f, '');
    const cfg = join(dir, 'prometheus.yml');
    writeFileSync(
      cfg,
      concreteScrapeConfig({
        target: '127.0.0.1:10250',
        caFile: files[0]!,
        certFile: files[1]!,
        keyFile: files[2]!,
        intervalS: 30,
      }),
    );
    const r = run(['check', 'config', cfg]);
    assert.equal(r.status, 0, r.out);
  });

  it('promtool check rules and promtool test rules pass', () => {
    const check = run(['check', 'rules', ALERT_RULES]);
    assert.equal(check.status, 0, check.out);
    assert.match(check.out, /SUCCESS: 8 rules found/);
    const t = run(['test', 'rules', ALERT_TESTS], dirname(ALERT_TESTS));
    assert.equal(t.status, 0, t.out);
  });

  it('the dashboard and the rules query only metrics the agent exports', async () => {
    const exported = await exportedNames();
    exported.add('up'); // Prometheus's own, per target
    for (const n of CERTIFICATE_MANAGER_NAMES) exported.add(n);
    const queries = [...dashboardQueries().map((q) => q.expr), ...alertExpressions()];
    assert.ok(queries.length > 30);
    for (const q of queries) {
      const names = selectedMetricNames(q);
      assert.ok(names.length > 0, `no metric selected in ${q}`);
      for (const n of names) assert.ok(exported.has(family(n)) || exported.has(n), `${n} (in ${q}) is not exported`);
    }
  });
});
