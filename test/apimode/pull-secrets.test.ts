/**
 * upstream kubelet.getPullSecretsForPod (pkg/kubelet/kubelet_pods.go; TestGetPullSecretsForPod-like
 * cases): each named imagePullSecret read through the secret manager, in order; a missing one (or
 * one never synced) is left out with one FailedToRetrieveImagePullSecret warning event naming
 * them all; empty names are skipped silently; a pod without pull secrets reads nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { createPullSecretsLookup } from '../../src/apimode/pull-secrets.js';
import type { PullSecret } from '../../src/images/index.js';

const secret = (name: string): PullSecret => ({ metadata: { name }, type: 'kubernetes.io/dockerconfigjson', data: {} });
const pod = (...names: string[]): Pod => ({
  metadata: { name: 'p', namespace: 'team', uid: 'u' },
  spec: { containers: [], imagePullSecrets: names.map((name) => ({ name })) },
});

test('getPullSecretsForPod: found ones in order; missing and unsynced ones named in one Warning event', async () => {
  const store: Record<string, PullSecret | null | undefined> = { a: secret('a'), b: null, c: secret('c') };
  const looked: string[] = [];
  const events: string[] = [];
  const lookup = createPullSecretsLookup(
    (ns, name) => (looked.push(`${ns}/${name}`), store[name]),
    { event: (_ref, type, reason, message) => events.push(`${type} ${reason} ${message}`) },
    30,
  );
  const got = await lookup(pod('a', '', 'b', 'never-synced', 'c'));
  assert.deepEqual(
    got.map((s) => s.metadata?.name),
    ['a', 'c'],
  );
  assert.ok(looked.every((k) => k.startsWith('team/')));
  assert.ok(!looked.includes('team/'), 'an empty name is not looked up');
  assert.deepEqual(events, [
    'Warning FailedToRetrieveImagePullSecret Unable to retrieve some image pull secrets (b, never-synced); attempting to pull the image may not succeed.',
  ]);
});

test('getPullSecretsForPod: waits for a secret whose first sync is under way', async () => {
  let synced = false;
  setTimeout(() => (synced = true), 20);
  const lookup = createPullSecretsLookup(() => (synced ? secret('late') : undefined), undefined, 1000);
  assert.deepEqual(
    (await lookup(pod('late'))).map((s) => s.metadata?.name),
    ['late'],
  );
});

test('getPullSecretsForPod: no imagePullSecrets, nothing read, no event', async () => {
  const events: string[] = [];
  const lookup = createPullSecretsLookup(() => assert.fail('no lookup expected'), {
    event: (_r, _t, reason) => events.push(reason),
  });
  assert.deepEqual(await lookup({ metadata: { name: 'p' }, spec: { containers: [] } }), []);
  assert.deepEqual(events, []);
});
