// Metrics updated where the work happens, on stand-ins: the cgroup manager's operations
// (kubelet_cgroup_manager_duration_seconds{operation_type}, upstream cgroup_manager_linux.go's
// create/update/destroy), failures included.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Cgroupfs } from '../../src/cm/index.js';
import { registry } from '../../src/metrics/index.js';
import { testTempDir } from '../support/temp-dir.js';

async function histogramCount(name: string, labels: Record<string, string>): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  const v = m.values.find(
    (s) =>
      (s as { metricName?: string }).metricName === `${name}_count` &&
      Object.entries(labels).every(([k, want]) => s.labels[k] === want),
  );
  return v?.value ?? 0;
}

let dir: string;
before(() => {
  dir = testTempDir('kts-wired-');
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('kubelet_cgroup_manager_duration_seconds', () => {
  it('times create, update and destroy, a failed one too', async () => {
    const fs = new Cgroupfs({ v1: new Map(), unified: dir }, { rmdir: (p) => rm(p, { recursive: true }) });
    const name = 'kubelet_cgroup_manager_duration_seconds';
    const before = await Promise.all(
      ['create', 'update', 'destroy'].map((op) => histogramCount(name, { operation_type: op })),
    );
    await fs.create('/kubepods/podx');
    await fs.set('/kubepods/podx', { memory: 64 * 2 ** 20 });
    await fs.destroy('/kubepods/podx');
    writeFileSync(join(dir, 'blocker'), ''); // a file where a parent cgroup should be
    await assert.rejects(fs.create('/blocker/pody'));
    const after = await Promise.all(
      ['create', 'update', 'destroy'].map((op) => histogramCount(name, { operation_type: op })),
    );
    assert.deepEqual(
      after.map((n, i) => n - before[i]!),
      [2, 1, 1],
    );
  });
});
