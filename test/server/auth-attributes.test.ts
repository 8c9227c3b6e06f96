import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forbiddenMessage, requestAttributes, subresourcesOf, verbOf } from '../../src/server/auth/attributes.js';

const USER = { name: 'u', groups: [] };

test('subresources per path, as upstream with KubeletFineGrainedAuthz: fine-grained first, then proxy', () => {
  const table: Array<[string, string[]]> = [
    ['/pods', ['pods', 'proxy']],
    ['/pods/', ['pods', 'proxy']],
    ['/podsx', ['proxy']],
    ['/runningpods/', ['pods', 'proxy']],
    ['/runningpods', ['pods', 'proxy']],
    ['/healthz', ['healthz', 'proxy']],
    ['/healthz/ping', ['healthz', 'proxy']],
    ['/configz', ['configz', 'proxy']],
    ['/stats', ['stats']],
    ['/stats/summary', ['stats']],
    ['/metrics', ['metrics']],
    ['/metrics/cadvisor', ['metrics']],
    ['/metrics/probes', ['metrics']],
    ['/metricsx', ['proxy']],
    ['/logs/', ['log']],
    ['/logs/syslog', ['log']],
    ['/spec/', ['spec']],
    ['/checkpoint/ns/p/c', ['checkpoint']],
    ['/containerLogs/a/b/c', ['proxy']],
    ['/exec/a/b/c', ['proxy']],
    ['/attach/a/b/c', ['proxy']],
    ['/portForward/a/b', ['proxy']],
    ['/run/a/b/c', ['proxy']],
    ['/debug/pprof/', ['proxy']],
    ['/', ['proxy']],
  ];
  for (const [path, want] of table) assert.deepEqual(subresourcesOf(path), want, path);
});

test('verb by method; an upgrade request is create whatever its method (beyond upstream)', () => {
  const table: Array<[string, boolean, string]> = [
    ['GET', false, 'get'],
    ['HEAD', false, 'get'],
    ['POST', false, 'create'],
    ['PUT', false, 'update'],
    ['PATCH', false, 'patch'],
    ['DELETE', false, 'delete'],
    ['OPTIONS', false, ''],
    ['GET', true, 'create'],
    ['POST', true, 'create'],
    ['HEAD', true, 'create'],
  ];
  for (const [method, upgrade, want] of table)
    assert.equal(verbOf(method, upgrade), want, `${method} upgrade=${upgrade}`);
});

test('attributes: nodes/<subresource> named after the node, one set per subresource to try', () => {
  const attrs = requestAttributes(USER, { method: 'GET', path: '/pods' }, 'n1');
  assert.deepEqual(
    attrs.map((a) => [a.verb, a.resource, a.subresource, a.name, a.apiVersion, a.namespace, a.apiGroup]),
    [
      ['get', 'nodes', 'pods', 'n1', 'v1', '', ''],
      ['get', 'nodes', 'proxy', 'n1', 'v1', '', ''],
    ],
  );
  const exec = requestAttributes(USER, { method: 'GET', path: '/exec/ns/p/c', upgrade: true }, 'n1');
  assert.deepEqual(
    exec.map((a) => `${a.verb} nodes/${a.subresource}`),
    ['create nodes/proxy'],
  );
  assert.equal(forbiddenMessage(attrs), 'Forbidden (user=u, verb=get, resource=nodes, subresource(s)=[pods proxy])');
  assert.equal(forbiddenMessage(exec), 'Forbidden (user=u, verb=create, resource=nodes, subresource(s)=[proxy])');
});

test('KubeletFineGrainedAuthz off (featureGates): only the coarse subresource, as upstream before 1.33', () => {
  const table: [path: string, on: string[], off: string[]][] = [
    ['/pods', ['pods', 'proxy'], ['proxy']],
    ['/healthz', ['healthz', 'proxy'], ['proxy']],
    ['/configz', ['configz', 'proxy'], ['proxy']],
    ['/runningpods/', ['pods', 'proxy'], ['proxy']],
    ['/stats/summary', ['stats'], ['stats']],
    ['/metrics', ['metrics'], ['metrics']],
  ];
  for (const [path, on, off] of table) {
    const sub = (fine: boolean) =>
      requestAttributes(USER, { method: 'GET', path }, 'n1', fine).map((a) => a.subresource);
    assert.deepEqual(sub(true), on, `${path} gate on`);
    assert.deepEqual(sub(false), off, `${path} gate off`);
  }
});
