import { test } from 'node:test';
import { randomPort } from '../support/kubelet-process.js';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startServers } from '../../src/server/index.js';

function get(port: number, path: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const port = () => randomPort();

test('healthz, read-only /pods and /metrics, errors', async () => {
  let errors: string[] = [];
  const servers = await startServers({
    healthz: { address: '127.0.0.1', port: port() },
    readOnly: { address: '127.0.0.1', port: port() },
    provider: {
      podsWithStatus: () => [{ metadata: { name: 'p' }, status: { phase: 'Running' } }],
      healthErrors: () => errors,
      metrics: async () => ({ contentType: 'text/plain', body: 'kubelet_running_pods 1\n' }),
    },
  });
  try {
    assert.deepEqual(await get(servers.healthzPort!, '/healthz'), { status: 200, body: 'ok' });
    errors = ['PLEG is not healthy: stuck'];
    const bad = await get(servers.healthzPort!, '/healthz');
    assert.equal(bad.status, 500);
    assert.match(bad.body, /\[-\]PLEG is not healthy: stuck/);
    const pods = await get(servers.readOnlyPort!, '/pods');
    assert.equal(pods.status, 200);
    const list = JSON.parse(pods.body);
    assert.equal(list.kind, 'PodList');
    assert.equal(list.items[0].status.phase, 'Running');
    assert.match((await get(servers.readOnlyPort!, '/metrics')).body, /kubelet_running_pods/);
    assert.equal((await get(servers.readOnlyPort!, '/nope')).status, 404);
    assert.equal((await get(servers.readOnlyPort!, '/pods', 'POST')).status, 405);
    assert.equal((await get(servers.healthzPort!, '/pods')).status, 404, 'healthz port serves only /healthz');
  } finally {
    await servers.close();
  }
});

test('the read-only port is off when its port is 0', async () => {
  const servers = await startServers({
    readOnly: { address: '127.0.0.1', port: 0 },
    provider: {
      podsWithStatus: () => [],
      healthErrors: () => [],
      metrics: async () => ({ contentType: '', body: '' }),
    },
  });
  assert.equal(servers.readOnlyPort, undefined);
  await servers.close();
});
