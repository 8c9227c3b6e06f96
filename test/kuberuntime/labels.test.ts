import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, hashContainer } from '../../src/kuberuntime/hash.js';
import {
  ContainerHashAnnotation,
  ContainerPortsAnnotation,
  ContainerRestartCountAnnotation,
  PodTerminationGracePeriodAnnotation,
  getContainerInfoFromAnnotations,
  getContainerInfoFromLabels,
  getPodSandboxInfoFromLabels,
  newContainerAnnotations,
  newContainerLabels,
  newPodAnnotations,
  newPodLabels,
} from '../../src/kuberuntime/labels.js';
import { container, makePod } from './helpers.js';

describe('labels', () => {
  const pod = makePod();
  pod.spec!.terminationGracePeriodSeconds = 17;
  const c = container('a', {
    ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }],
    terminationMessagePath: '/dev/termination-log',
  });
  pod.spec!.containers[0] = c;

  it('sandbox labels: pod labels plus identity; annotations are the pod annotations', () => {
    const labels = newPodLabels(pod);
    assert.deepEqual(labels, {
      app: 'web',
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'default',
      'io.kubernetes.pod.uid': 'uid-1234',
    });
    assert.deepEqual(newPodAnnotations(pod), { note: 'x' });
    assert.deepEqual(getPodSandboxInfoFromLabels(labels), {
      podName: 'web',
      podNamespace: 'default',
      podUid: 'uid-1234',
      labels: { app: 'web' },
    });
  });

  it('a pod label cannot spoof the identity labels', () => {
    const p = makePod();
    p.metadata!.labels = { 'io.kubernetes.pod.uid': 'evil' };
    assert.equal(newPodLabels(p)['io.kubernetes.pod.uid'], 'uid-1234');
  });

  it('container labels and annotations round-trip', () => {
    const labels = newContainerLabels(c, pod);
    assert.deepEqual(getContainerInfoFromLabels(labels), {
      podName: 'web',
      podNamespace: 'default',
      podUid: 'uid-1234',
      containerName: 'a',
    });
    const ann = newContainerAnnotations(c, pod, 3);
    assert.equal(ann[ContainerHashAnnotation], hashContainer(c));
    assert.equal(ann[ContainerRestartCountAnnotation], '3');
    assert.equal(ann[PodTerminationGracePeriodAnnotation], '17');
    assert.equal(ann['io.kubernetes.container.type'], 'container');
    const { info, errors } = getContainerInfoFromAnnotations(ann);
    assert.deepEqual(errors, []);
    assert.equal(info.hash, hashContainer(c));
    assert.equal(info.restartCount, 3);
    assert.equal(info.podTerminationGracePeriod, 17);
    assert.equal(info.terminationMessagePath, '/dev/termination-log');
    assert.deepEqual(info.containerPorts, [{ containerPort: 80, name: 'http', protocol: 'TCP' }]);
  });

  it('foreign sandboxes and containers (no labels of ours) are not recognised', () => {
    assert.equal(getPodSandboxInfoFromLabels({ app: 'x' }), undefined);
    assert.equal(getPodSandboxInfoFromLabels(undefined), undefined);
    assert.equal(getContainerInfoFromLabels({ 'io.kubernetes.pod.uid': 'u' }), undefined);
    assert.equal(getContainerInfoFromLabels({}), undefined);
  });

  it('malformed annotations give defaults and name the bad value, never throw', () => {
    const { info, errors } = getContainerInfoFromAnnotations({
      [ContainerHashAnnotation]: 'XYZ!',
      [ContainerRestartCountAnnotation]: 'two',
      [PodTerminationGracePeriodAnnotation]: '-5',
      [ContainerPortsAnnotation]: '{not json',
    });
    assert.equal(info.hash, '');
    assert.equal(info.restartCount, 0);
    assert.equal(info.podTerminationGracePeriod, undefined);
    assert.equal(info.containerPorts, undefined);
    assert.equal(errors.length, 4);
    assert.match(errors[0]!, /io\.kubernetes\.container\.hash="XYZ!": not a lowercase hexadecimal hash/);
    assert.match(errors[1]!, /restartCount="two": not a non-negative integer/);
    assert.match(errors[3]!, /ports=.*not JSON/);
  });

  it('ports JSON of the wrong shape is rejected', () => {
    const { info, errors } = getContainerInfoFromAnnotations({ [ContainerPortsAnnotation]: '[{"port":1}]' });
    assert.equal(info.containerPorts, undefined);
    assert.match(errors[0]!, /wrong shape/);
  });

  it('missing annotations are defaults without errors (old or foreign containers)', () => {
    assert.deepEqual(getContainerInfoFromAnnotations(undefined).errors, []);
    assert.equal(getContainerInfoFromAnnotations({}).info.restartCount, 0);
  });
});

describe('hashContainer', () => {
  it('is stable: key order and empty values do not matter', () => {
    const x = { name: 'a', image: 'busybox', command: ['sh'], env: [] };
    const y = { command: ['sh'], image: 'busybox', name: 'a', args: undefined };
    assert.equal(hashContainer(x), hashContainer(y));
    assert.match(hashContainer(x), /^[0-9a-f]{16}$/);
  });

  it('changes with the name and image only (upstream 1.35), so a resize keeps the container', () => {
    const base = container('a');
    assert.notEqual(hashContainer(base), hashContainer({ ...base, image: 'busybox:1.37' }));
    assert.equal(hashContainer(base), hashContainer({ ...base, resources: { limits: { cpu: '1' } } }));
  });

  it('a known value, so a change of algorithm is a conscious decision (it restarts every container)', () => {
    assert.equal(canonicalJson({ b: 1, a: [1, null, {}], c: {} }), '{"a":[1,null,null],"b":1}');
    assert.equal(hashContainer({ name: 'a', image: 'busybox' }), hashContainer({ image: 'busybox', name: 'a' }));
  });
});
