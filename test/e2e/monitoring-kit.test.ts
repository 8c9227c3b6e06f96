/**
 * The monitoring kit against a real Prometheus (Debian's /usr/bin/prometheus) and a real agent
 * on containerd: the scrape config in deploy/prometheus/ (made concrete: this agent's port, its
 * serving certificate as CA, a client certificate from a test CA, a 1 s interval) scrapes the
 * four endpoints over the authenticated main port; every target must be up, the alert rules
 * must load, and every query of the Grafana dashboard must return series. An e2e test (it needs
 * containerd and runs one at a time); the kit's offline checks are test/deploy/monitoring-rules.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint, TEST_IMAGES } from '../support/containerd.js';
import {
  getPods,
  makeKubeletDirs,
  randomPort,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { issue, makeCA } from '../support/pki.js';
import {
  CERTIFICATE_MANAGER_NAMES,
  concreteScrapeConfig,
  dashboardQueries,
  selectedMetricNames,
} from '../deploy/kit.js';
import { testTempDir } from '../support/temp-dir.js';

const PROMETHEUS = '/usr/bin/prometheus';
const NS = `prom-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const POD = 'probed-e2e-node';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Prometheus API replies, read field by field
type Json = any;

const available = existsSync(PROMETHEUS);
const endpoint = available ? await runtimeEndpoint() : '';
const { runtime } = connectRuntime(endpoint || '/nonexistent.sock');
const { dir, manifests } = makeKubeletDirs();
const promDir = testTempDir('kts-prom-');
const ca = makeCA('prom-ca');
const scraper = issue(ca, 'prometheus', { cn: 'prometheus' });
const PORT = randomPort();
/** Prometheus's own port, 10000-32767 as the brief of this kit asks. */
const PROM_PORT = 10_000 + Math.floor(Math.random() * 22_768);
let kubelet: KubeletProcess | undefined;
let prometheus: ChildProcess | undefined;

before(async () => {
  if (!available) return;
  writeFileSync(
    join(manifests, 'probed.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'probed', namespace: NS },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: TEST_IMAGES.busybox,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
            // A probe, so /metrics/probes has samples for the dashboard's probe panel.
            readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
          },
        ],
      },
    }),
  );
  kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    port: PORT,
    extraArgs: [`--client-ca-file=${ca.cert}`, '--authorization-mode=AlwaysAllow', '--housekeeping-interval=1s'],
  });
  await waitFor(
    'the probed pod ready',
    90_000,
    async () => {
      const pod = (await getPods(kubelet!)).find((p) => p.metadata?.name === POD);
      return pod?.status?.containerStatuses?.[0]?.ready ? true : undefined;
    },
    250,
  );
  const config = join(promDir, 'prometheus.yml');
  writeFileSync(
    config,
    concreteScrapeConfig({
      target: `127.0.0.1:${PORT}`,
      caFile: join(dir, 'root', 'pki', 'kubelet.crt'),
      certFile: scraper.cert,
      keyFile: scraper.key,
      intervalS: 1,
    }),
  );
  const log = createWriteStream(join(promDir, 'prometheus.log'));
  prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(promDir, 'data')}`,
      `--web.listen-address=127.0.0.1:${PROM_PORT}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prometheus.stdout!.pipe(log);
  prometheus.stderr!.pipe(log);
});

after(async () => {
  if (prometheus?.pid && prometheus.exitCode === null) {
    const exited = new Promise((r) => prometheus!.once('exit', r));
    process.kill(prometheus.pid, 'SIGTERM');
    await exited;
  }
  if (kubelet) await stopKubelet(kubelet);
  if (available) await removeTestPods(runtime, { namespace: NS });
  runtime.close();
  rmSync(promDir, { recursive: true, force: true });
});

function api(path: string): Promise<Json> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: PROM_PORT, path, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => {
        try {
          resolve(JSON.parse(body));
        } catch {
          reject(new Error(`${path}: ${res.statusCode} ${body.slice(0, 200)}`));
        }
      });
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${path}: timeout`)));
    req.end();
  });
}

const skip = !available && `${PROMETHEUS} not installed (scripts/install-deps.sh installs Debian prometheus)`;

test('every target of the scrape config is up over the authenticated port', { skip }, async () => {
  const targets = await waitFor(
    '4 targets up',
    60_000,
    async () => {
      const r = await api('/api/v1/targets').catch(() => undefined);
      const active: Json[] = r?.data?.activeTargets ?? [];
      return active.length === 4 && active.every((t) => t.health === 'up') ? active : undefined;
    },
    500,
  ).catch(async (err) => {
    const r = await api('/api/v1/targets').catch(() => undefined);
    throw new Error(
      `${err.message}: ${JSON.stringify(r?.data?.activeTargets?.map((t: Json) => [t.scrapeUrl, t.health, t.lastError]))}`,
    );
  });
  assert.deepEqual(targets.map((t: Json) => t.labels.metrics_path).sort(), [
    '/metrics',
    '/metrics/cadvisor',
    '/metrics/probes',
    '/metrics/resource',
  ]);
  assert.ok(targets.every((t: Json) => t.labels.job === 'kubelet' && t.scrapeUrl.startsWith('https://')));
});

test('the alert rules load and none of them is firing on a healthy agent', { skip }, async () => {
  const groups: Json[] = (await api('/api/v1/rules')).data.groups;
  const rules = groups.flatMap((g) => g.rules);
  assert.equal(rules.length, 8);
  for (const r of rules) assert.equal(r.health, 'ok', `${r.name}: ${r.lastError ?? ''}`);
  assert.deepEqual(
    rules.filter((r) => r.state === 'firing').map((r) => r.name),
    [],
  );
});

test('every query of the Grafana dashboard returns series', { skip }, async () => {
  const queries = dashboardQueries('30s').filter(
    (q) => !selectedMetricNames(q.expr).some((n) => CERTIFICATE_MANAGER_NAMES.includes(n)),
  );
  const pending = new Map(queries.map((q) => [q.expr, q.panel]));
  // Rates need two samples in the window and some counters move only as the agent works: poll.
  await waitFor(
    'every dashboard query answered with series',
    90_000,
    async () => {
      for (const expr of [...pending.keys()]) {
        const r = await api(`/api/v1/query?query=${encodeURIComponent(expr)}`);
        assert.equal(r.status, 'success', `${expr}: ${r.error ?? ''}`);
        if (r.data.result.length > 0) pending.delete(expr);
      }
      return pending.size === 0 ? true : undefined;
    },
    1000,
  ).catch((err) => {
    throw new Error(`${err.message}; still empty: ${[...pending].map(([e, p]) => `${p}: ${e}`).join(' | ')}`);
  });
});
