import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigHashAnnotationKey, ConfigSeenAnnotationKey, ConfigSourceAnnotationKey } from '../../src/api/types.js';
import { decodeStaticPodManifest, decodeUrlManifest, generatePodName } from '../../src/podconfig/index.js';
import { PodStorage } from '../../src/podconfig/pod-config.js';
import { captureLogger, manualNowClock } from './helpers.js';

const MANIFEST = `apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
spec:
  containers:
  - name: etcd
    image: registry.local/etcd:3.5
`;
const FILE = '/etc/kubernetes/manifests/etcd.yaml';
const decode = (text = MANIFEST, file = FILE, nodeName = 'Node-1') => decodeStaticPodManifest(text, { file, nodeName });

describe('static pod identity', () => {
  it('names, places and annotates the pod as upstream applyDefaults', () => {
    const pod = decode();
    assert.equal(pod.metadata!.name, 'etcd-node-1');
    assert.equal(generatePodName('etcd', 'Node-1'), 'etcd-node-1');
    assert.equal(pod.metadata!.namespace, 'kube-system');
    assert.equal(pod.spec!.nodeName, 'Node-1');
    assert.match(pod.metadata!.uid!, /^[0-9a-f]{32}$/);
    assert.equal(pod.metadata!.annotations![ConfigHashAnnotationKey], pod.metadata!.uid);
    assert.equal(pod.metadata!.annotations![ConfigSourceAnnotationKey], 'file');
    assert.equal(
      pod.metadata!.annotations![ConfigSeenAnnotationKey],
      undefined,
      "config.seen is PodConfig's, set when first seen",
    );
    assert.deepEqual(pod.spec!.tolerations, [{ operator: 'Exists', effect: 'NoExecute' }]);
    assert.equal(pod.status!.phase, 'Pending');
  });

  it('defaults the namespace', () => {
    assert.equal(decode(MANIFEST.replace('  namespace: kube-system\n', '')).metadata!.namespace, 'default');
  });

  it('does not add the NoExecute toleration twice', () => {
    const text = MANIFEST.replace('spec:\n', 'spec:\n  tolerations: [{operator: Exists, effect: NoExecute}]\n');
    assert.equal(decode(text).spec!.tolerations!.length, 1);
  });

  it('the UID is deterministic and follows node, path and content', () => {
    const uid = decode().metadata!.uid;
    assert.equal(decode().metadata!.uid, uid, 'same input, same UID');
    assert.equal(decode(`# comment\n${MANIFEST}\n\n`).metadata!.uid, uid, 'formatting is not content');
    const reordered = MANIFEST.replace(
      '  - name: etcd\n    image: registry.local/etcd:3.5\n',
      '  - image: registry.local/etcd:3.5\n    name: etcd\n',
    );
    assert.notEqual(reordered, MANIFEST);
    assert.equal(decode(reordered).metadata!.uid, uid, 'key order is not content');
    assert.notEqual(decode(MANIFEST.replace('etcd:3.5', 'etcd:3.6')).metadata!.uid, uid, 'an edit gives a new UID');
    assert.notEqual(decode(MANIFEST, '/other/etcd.yaml').metadata!.uid, uid, 'another file');
    assert.notEqual(decode(MANIFEST, FILE, 'node-2').metadata!.uid, uid, 'another node');
  });

  it('keeps a UID the manifest sets (as upstream), when it is a valid pod UID', () => {
    const fixed = '0b5e2a8c-7f1d-4c3e-9a6b-2d4f8e1c3a5b';
    const pod = decode(MANIFEST.replace('  namespace: kube-system\n', `  namespace: kube-system\n  uid: ${fixed}\n`));
    assert.equal(pod.metadata!.uid, fixed);
    assert.equal(pod.metadata!.annotations![ConfigHashAnnotationKey], fixed);
    assert.throws(
      () => decode(MANIFEST.replace('  namespace: kube-system\n', '  namespace: kube-system\n  uid: fixed-uid\n')),
      /metadata\.uid: "fixed-uid" is not a valid pod UID/,
    );
  });

  it('config.seen is set when first seen and neither changes the UID nor makes an update', () => {
    const clock = manualNowClock(Date.parse('2024-05-01T10:00:00Z'));
    const storage = new PodStorage({ clock, logger: captureLogger().logger });
    const first = storage.merge('file', { op: 'SET', pods: [decode()] });
    const seen = first[0]!.pods[0]!.metadata!.annotations![ConfigSeenAnnotationKey];
    assert.equal(seen, '2024-05-01T10:00:00.000Z');
    assert.equal(first[0]!.pods[0]!.metadata!.uid, decode().metadata!.uid);
    clock.set(Date.parse('2024-05-01T12:00:00Z'));
    assert.deepEqual(storage.merge('file', { op: 'SET', pods: [decode()] }), [], 'a re-read later is not a change');
    assert.equal(storage.podsOf('file')[0]!.metadata!.annotations![ConfigSeenAnnotationKey], seen);
    const edited = storage.merge('file', { op: 'SET', pods: [decode(MANIFEST.replace('etcd:3.5', 'etcd:3.6'))] });
    assert.deepEqual(
      edited.map((u) => u.op),
      ['REMOVE', 'ADD'],
      'an edit replaces the pod (new UID)',
    );
    assert.equal(edited[1]!.pods[0]!.metadata!.annotations![ConfigSeenAnnotationKey], '2024-05-01T12:00:00.000Z');
  });

  it('rejects a name that is too long once the node name is appended', () => {
    const long = 'a'.repeat(250);
    assert.throws(
      () => decode(MANIFEST.replace('name: etcd\n  namespace', `name: ${long}\n  namespace`)),
      /node name appended/,
    );
  });

  it('URL pods hash the URL and get no toleration', () => {
    const [pod] = decodeUrlManifest(MANIFEST, { url: 'http://10.0.0.1/pods', nodeName: 'n1' });
    assert.equal(pod!.metadata!.name, 'etcd-n1');
    assert.equal(pod!.metadata!.annotations![ConfigSourceAnnotationKey], 'http');
    assert.equal(pod!.spec!.tolerations, undefined);
    assert.notEqual(
      pod!.metadata!.uid,
      decodeUrlManifest(MANIFEST, { url: 'http://10.0.0.2/pods', nodeName: 'n1' })[0]!.metadata!.uid,
    );
  });
});
