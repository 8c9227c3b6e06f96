/** resourceFieldRef values (upstream ExtractContainerResourceValue, limits defaulted to allocatable), in env and alone. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container } from '../../src/api/types.js';
import { containerResourceValue, EnvError, resourceFieldRefValue } from '../../src/fieldpath/index.js';
import { downwardContext } from '../../src/kuberuntime/container-config.js';
import { makeEnvironmentVariables } from '../../src/kuberuntime/env.js';
import { container, makePod } from '../kuberuntime/helpers.js';

const MiB = 2 ** 20;
const alloc = { cpu: 4000, memory: 8 * 2 ** 30 };
const limited = (limits: Record<string, string>, requests?: Record<string, string>): Container =>
  container('main', { resources: { limits, ...(requests ? { requests } : {}) } });

describe('resourceFieldRef (upstream ExtractContainerResourceValue, limits defaulted to allocatable)', () => {
  const c = limited({ cpu: '250m', memory: '100Mi' });
  const cases: Array<[string, string | undefined, Container, string]> = [
    ['limits.cpu', undefined, c, '1'],
    ['limits.cpu', '1m', c, '250'],
    ['limits.cpu', '100m', c, '3'],
    ['limits.memory', undefined, c, String(100 * MiB)],
    ['limits.memory', '1Mi', c, '100'],
    ['limits.memory', '1Gi', c, '1'],
    ['requests.cpu', '1m', c, '250'],
    ['requests.memory', '1Mi', limited({ memory: '100Mi' }, { memory: '10Mi' }), '10'],
    ['limits.cpu', undefined, container('none'), '4'],
    ['limits.memory', '1Gi', container('none'), '8'],
    ['requests.cpu', '1m', container('none'), '0'],
  ];
  for (const [resource, divisor, ctr, want] of cases) {
    it(`${ctr.name} ${resource} / ${divisor ?? '1'} = ${want}`, () => {
      assert.equal(containerResourceValue({ resource, ...(divisor ? { divisor } : {}) }, ctr, alloc), want);
    });
  }
  it('unknown resources and containers are EnvErrors', () => {
    assert.throws(() => containerResourceValue({ resource: 'limits.gpu' }, c, alloc), EnvError);
    assert.throws(
      () => resourceFieldRefValue(makePod(), undefined, { resource: 'limits.cpu', containerName: 'nope' }, alloc),
      /not found/,
    );
  });
  it('env valueFrom.resourceFieldRef, own container or a named one', () => {
    const pod = makePod({ containers: [limited({ cpu: '2', memory: '1Gi' }), container('side')] });
    const side = pod.spec!.containers[1]!;
    side.env = [
      { name: 'OWN', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
      { name: 'MAIN', valueFrom: { resourceFieldRef: { containerName: 'main', resource: 'limits.cpu' } } },
    ];
    const ctx = downwardContext(pod, { nodeName: 'n', hostIP: '', podIP: '', podIPs: [] }, alloc);
    assert.deepEqual(makeEnvironmentVariables(pod, side, ctx), [
      { key: 'OWN', value: '8192' },
      { key: 'MAIN', value: '2' },
    ]);
  });
});
