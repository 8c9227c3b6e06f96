/**
 * devicesToAllocate as a pure table. Upstream: manager_test.go TestPodContainerDeviceToAllocate
 * (the first four rows, with its texts) and the checks devicesToAllocate makes before choosing
 * (unregistered, no healthy device, previously allocated turned unhealthy, changed request).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  devicesToAllocate,
  type AllocationInput,
  type PreferredAllocation,
} from '../../src/devicemanager/allocator.js';
import { DeviceAllocationError } from '../../src/errors.js';

const R = 'domain1.com/resource1';
const base: AllocationInput = {
  podUid: 'pod1',
  containerName: 'con1',
  resource: R,
  required: 1,
  held: undefined,
  healthy: new Set(['dev1', 'dev2', 'dev3']),
  inUse: new Set(),
  reusable: new Set(),
  runningAtStart: false,
  sourcesReady: true,
};

interface Row {
  name: string;
  input: Partial<AllocationInput>;
  preferred?: string[];
  want?: string[] | undefined;
  error?: string;
}

const rows: Row[] = [
  {
    name: 'TestPodContainerDeviceToAllocate: more devices than available',
    input: { required: 3, inUse: new Set(['dev1', 'dev2']) },
    error: `requested number of devices unavailable for ${R}. Requested: 3, Available: 1`,
  },
  {
    name: 'TestPodContainerDeviceToAllocate: devices already allocated to the container',
    input: { required: 2, held: new Set(['dev1', 'dev2']), inUse: new Set(['dev1', 'dev2']) },
    want: undefined,
  },
  { name: 'TestPodContainerDeviceToAllocate: allocates', input: { required: 2 }, want: ['dev1', 'dev2'] },
  {
    name: 'TestPodContainerDeviceToAllocate: changed request',
    input: { required: 3, held: new Set(['dev1']) },
    error: `pod "pod1" container "con1" changed request for resource "${R}" from 1 to 3`,
  },
  { name: 'unregistered resource', input: { healthy: undefined }, error: `cannot allocate unregistered device ${R}` },
  {
    name: 'registered without healthy devices (plugin gone)',
    input: { healthy: new Set() },
    error: `no healthy devices present; cannot allocate unhealthy devices ${R}`,
  },
  {
    name: 'previously allocated devices turned unhealthy',
    input: { held: new Set(['dev9']) },
    error: `previously allocated devices are no longer healthy; cannot allocate unhealthy devices ${R}`,
  },
  {
    name: 'reusable devices first',
    input: { required: 2, reusable: new Set(['dev3']) },
    want: ['dev1', 'dev3'],
  },
  { name: 'the preferred choice, within what is available', input: {}, preferred: ['dev9', 'dev2'], want: ['dev2'] },
  {
    name: 'a short preferred answer is filled from the available',
    input: { required: 2 },
    preferred: ['dev3'],
    want: ['dev1', 'dev3'],
  },
  { name: 'IDs in natural order', input: { healthy: new Set(['d10', 'd2']) }, want: ['d2'] },
  {
    name: 'ours: running at start with checkpointed devices, sources ready, plugin gone: kept',
    input: { held: new Set(['dev1']), healthy: undefined, runningAtStart: true },
    want: undefined,
  },
  {
    name: 'upstream: running at start before sources are ready: nothing to do',
    input: { healthy: undefined, runningAtStart: true, sourcesReady: false },
    want: undefined,
  },
  {
    name: 'not running at start, sources not ready, plugin not back: refused',
    input: { held: new Set(['dev1']), healthy: new Set(), sourcesReady: false },
    error: `no healthy devices present; cannot allocate unhealthy devices ${R}`,
  },
];

describe('devicesToAllocate', () => {
  for (const row of rows)
    it(row.name, async () => {
      const calls: Array<Parameters<PreferredAllocation>> = [];
      const preferred: PreferredAllocation | undefined = row.preferred
        ? async (...args) => (calls.push(args), row.preferred!)
        : undefined;
      const run = devicesToAllocate({ ...base, ...row.input }, preferred);
      if (row.error) {
        await assert.rejects(run, (err: Error) => err instanceof DeviceAllocationError && err.message === row.error);
        return;
      }
      const got = await run;
      assert.deepEqual(got === undefined ? undefined : [...got].sort(), row.want);
    });

  it('GetPreferredAllocation gets available ∪ chosen, the chosen as must-include, and the full size', async () => {
    const calls: Array<Parameters<PreferredAllocation>> = [];
    const input = { ...base, required: 2, reusable: new Set(['dev3']), inUse: new Set(['dev1']) };
    await devicesToAllocate(input, async (...args) => (calls.push(args), []));
    assert.deepEqual(calls, [[['dev2', 'dev3'], ['dev3'], 2]]);
  });
});
