import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from '../../src/server/router.js';
import { confinedRelativePath } from '../../src/server/node-logs.js';

test('router: path parameters, rest parameter, methods, refused parameters', () => {
  const noop = () => undefined;
  const r = new Router()
    .add('GET', '/containerLogs/{namespace}/{pod}/{container}', noop, { debug: true, longRunning: true })
    .add(['GET', 'POST'], '/exec/{namespace}/{pod}/{container}', noop)
    .add('GET', '/logs/{path...}', noop)
    .add('GET', '/stats/summary', noop);
  const m = r.match('GET', '/containerLogs/ns/p%20q/c');
  assert.equal(m.kind, 'found');
  assert.deepEqual(m.kind === 'found' && m.params, { namespace: 'ns', pod: 'p q', container: 'c' });
  assert.equal(m.kind === 'found' && m.route.longRunning, true);
  assert.equal(r.match('HEAD', '/stats/summary').kind, 'found', 'GET routes answer HEAD');
  assert.deepEqual(r.match('DELETE', '/exec/a/b/c'), { kind: 'bad-method', allowed: ['GET', 'POST', 'HEAD'] });
  assert.equal(r.match('GET', '/exec/a/b%2Fc/d').kind, 'bad-param');
  assert.equal(r.match('GET', '/exec/a/b/c/d').kind, 'none');
  assert.equal(r.match('GET', '/stats/summaryX').kind, 'none');
  const logs = r.match('GET', '/logs/a/b%2f..');
  assert.deepEqual(
    logs.kind === 'found' && logs.params,
    { path: 'a/b%2f..' },
    'the rest parameter stays raw for the handler to judge',
  );
});

test('/logs/ path confinement before the file system', () => {
  assert.deepEqual(confinedRelativePath('pods/x.log'), { rel: 'pods/x.log' });
  for (const bad of ['..', 'a/../../b', '%2e%2e/x', 'a%2fb', 'a%5cb', 'a\\b', 'x%00', './x', '%zz']) {
    assert.ok('error' in confinedRelativePath(bad), bad);
  }
});
