// The field walk (issue 26): every field of the v1.35 PodSpec and its containers is honoured,
// another component's, or refused at admission naming the field. The inventory is the client's
// own model (V1PodSpec.getAttributeTypeMap() and the models below it) plus the 1.35 fields the
// client lacks (POD_FIELDS_1_35), so a field a new client or API version adds fails here until
// src/kubelet/pod-fields.ts classifies it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { Pod } from '../../src/api/types.js';
import { admitPodFields, canAdmitPod, ephemeralContainerRefusalMessage } from '../../src/kubelet/admission.js';
import {
  classify,
  ephemeralContainerRefusal,
  podFieldRefusal,
  POD_FIELD_RULES,
  POD_FIELDS_1_35,
  type FieldRule,
} from '../../src/kubelet/pod-fields.js';
import { computeNodeInfo } from '../../src/node/node-info.js';
import { decodeSinglePod } from '../../src/podconfig/manifest.js';

type Attr = { name: string; type: string };
type Model = { getAttributeTypeMap(): Attr[] };

const model = (type: string): Model | undefined => {
  const m = (k8s as unknown as Record<string, unknown>)[type] as Model | undefined;
  return typeof m?.getAttributeTypeMap === 'function' ? m : undefined;
};

/** path → type of every field below `type`, lists of structs walked as `path[]`. */
function inventory(type: string, prefix: string, out: Map<string, string>, depth = 0): Map<string, string> {
  for (const a of model(type)?.getAttributeTypeMap() ?? []) {
    const path = `${prefix}.${a.name}`;
    out.set(path, a.type);
    const elem = /^Array<(.+)>$/.exec(a.type)?.[1];
    if (depth > 12) continue;
    if (elem && model(elem)) inventory(elem, `${path}[]`, out, depth + 1);
    else if (model(a.type)) inventory(a.type, path, out, depth + 1);
  }
  return out;
}

const FIELDS = inventory('V1PodSpec', 'spec', new Map());
for (const [p, t] of Object.entries(POD_FIELDS_1_35)) FIELDS.set(p, t);

function basePod(): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  } as Pod;
}

/** `pod` with `value` at the rule path, each `[]` being the list's first element. */
function withField(path: string, value: unknown): { pod: Pod; concrete: string } {
  const pod = basePod();
  const segs = path.split('.');
  let obj = pod as unknown as Record<string, unknown>;
  for (const [i, seg] of segs.entries()) {
    const list = seg.endsWith('[]');
    const name = list ? seg.slice(0, -2) : seg;
    if (i === segs.length - 1 && !list) {
      obj[name] = value;
      break;
    }
    if (list) {
      if (!Array.isArray(obj[name]) || (obj[name] as unknown[]).length === 0) obj[name] = [{}];
      obj = (obj[name] as Record<string, unknown>[])[0]!;
    } else {
      if (typeof obj[name] !== 'object' || obj[name] === null) obj[name] = {};
      obj = obj[name] as Record<string, unknown>;
    }
  }
  return { pod, concrete: path.replace(/\[\]/g, '[0]') };
}

/** Some value of the field's type, for fields that any value of leaves admitted. */
function sample(type: string): unknown {
  if (type === 'string') return 'x';
  if (type === 'number' || type === 'IntOrString') return 1;
  if (type === 'boolean') return true;
  if (type.startsWith('{ [key: string]')) return { 'example.com/k': '1' };
  if (type === 'Array<string>') return ['x'];
  if (type === 'Array<number>') return [1];
  return {};
}

const node = computeNodeInfo({ nodeName: 'n', maxPods: 110, capacity: { milliCPU: 4000, memory: 8 * 2 ** 30 } });

test('the inventory holds the whole 1.35 PodSpec (a sanity check of the walk)', () => {
  for (const p of [
    'spec.containers[].securityContext.capabilities.add',
    'spec.initContainers[].restartPolicy',
    'spec.ephemeralContainers[].targetContainerName',
    'spec.volumes[].projected.sources[].podCertificate.signerName',
    'spec.containers[].env[].valueFrom.fileKeyRef.volumeName',
    'spec.workloadRef.podGroup',
  ])
    assert.ok(FIELDS.has(p), p);
  assert.ok(FIELDS.size > 900, `${FIELDS.size} fields`);
});

test('every field of the 1.35 PodSpec and its containers is classified', () => {
  const unclassified = [...FIELDS.keys()].filter((p) => classify(p) === undefined);
  assert.deepEqual(unclassified, [], 'classify these in src/kubelet/pod-fields.ts');
});

test('every rule names a field of the 1.35 PodSpec, once', () => {
  const stale = POD_FIELD_RULES.filter((r) => !FIELDS.has(r.path)).map((r) => r.path);
  assert.deepEqual(stale, []);
  const paths = POD_FIELD_RULES.map((r) => r.path);
  assert.deepEqual(
    paths.filter((p, i) => paths.indexOf(p) !== i),
    [],
  );
});

test('honoured rules classify their own field only; refused rules carry an example', () => {
  for (const r of POD_FIELD_RULES) {
    if (r.class === 'honoured') assert.equal(r.subtree, undefined, r.path);
    if (r.class === 'refused') assert.notEqual(r.example, undefined, r.path);
    if (r.class !== 'refused') assert.equal(r.needsAction, undefined, r.path);
  }
});

const refusedRules = POD_FIELD_RULES.filter((r) => r.class === 'refused');

/** An ephemeral container's field: refused when the container is to start, not at admission. */
function assertEphemeralRefused(r: FieldRule, value: unknown): void {
  const { pod, concrete } = withField(r.path, value);
  assert.deepEqual(ephemeralContainerRefusal(pod, 0)?.path, concrete, `${r.path}: ${JSON.stringify(value)}`);
  assert.deepEqual(admitPodFields(pod), { admit: true }, r.path);
  const message = ephemeralContainerRefusalMessage(pod, 0);
  assert.ok(message?.startsWith(`${concrete} is not supported by this node (kubelet-ts): `), message);
}

function assertRefused(r: FieldRule, value: unknown): void {
  if (r.path.startsWith('spec.ephemeralContainers[]')) return assertEphemeralRefused(r, value);
  const { pod, concrete } = withField(r.path, value);
  assert.deepEqual(podFieldRefusal(pod)?.path, concrete, `${r.path}: ${JSON.stringify(value)}`);
  const result = canAdmitPod(pod, [], node);
  assert.equal(result.admit, false, r.path);
  assert.equal(result.reason, 'PodFeatureUnsupported', r.path);
  assert.ok(result.message?.startsWith(`${concrete} is not supported by this node (kubelet-ts): `), result.message);
}

for (const r of refusedRules) {
  test(`refused: ${r.path}${r.when ? ` when ${r.when}` : ''}`, () => {
    assertRefused(r, r.example);
    if (r.allowed !== undefined) {
      const { pod } = withField(r.path, r.allowed);
      assert.deepEqual(admitPodFields(pod), { admit: true }, `${r.path}: ${JSON.stringify(r.allowed)}`);
      assert.equal(ephemeralContainerRefusal(pod, 0), undefined, `${r.path}: ${JSON.stringify(r.allowed)}`);
    }
  });
}

test('every honoured or other component field set to a value is admitted', () => {
  for (const [path, type] of FIELDS) {
    const r = classify(path);
    if (!r || r.class === 'refused') continue;
    // Below a subtree rule of another component: its struct is set as a whole (the root).
    if (r.path !== path) continue;
    const { pod } = withField(path, sample(type));
    assert.deepEqual(admitPodFields(pod), { admit: true }, `${path}: ${JSON.stringify(sample(type))}`);
  }
});

test('unset refused fields and empty refused lists are admitted (only a value asking for action is refused)', () => {
  for (const r of refusedRules) {
    const { pod } = withField(r.path, null);
    assert.equal(podFieldRefusal(pod), undefined, r.path);
    if (!Array.isArray(r.example)) continue;
    const empty = withField(r.path, []);
    assert.equal(podFieldRefusal(empty.pod), undefined, r.path);
  }
});

test('the refusal names the container it is in (indexes as the pod has them)', () => {
  const pod = basePod();
  pod.spec!.initContainers = [{ name: 'i', image: 'busybox' }];
  pod.spec!.containers.push({ name: 'd', image: 'busybox', securityContext: { procMount: 'Unmasked' } });
  const r = canAdmitPod(pod, [], node);
  assert.equal(r.reason, 'PodFeatureUnsupported');
  assert.match(r.message ?? '', /^spec\.containers\[1\]\.securityContext\.procMount is not supported/);
});

test('a sidecar (init container restartPolicy: Always) is admitted; a regular container restartPolicy is not', () => {
  const pod = basePod();
  pod.spec!.initContainers = [{ name: 'i', image: 'busybox', restartPolicy: 'Always' }];
  assert.deepEqual(admitPodFields(pod), { admit: true });
  pod.spec!.containers[0]!.restartPolicy = 'Always';
  assert.equal(podFieldRefusal(pod)?.path, 'spec.containers[0].restartPolicy');
});

test('an ephemeral container is checked on its own: admission passes, its start is refused', () => {
  const pod = basePod();
  pod.spec!.ephemeralContainers = [
    { name: 'ok', image: 'busybox', targetContainerName: 'c' },
    { name: 'bad', image: 'busybox', securityContext: { procMount: 'Unmasked' } },
  ];
  assert.deepEqual(admitPodFields(pod), { admit: true });
  assert.equal(ephemeralContainerRefusal(pod, 0), undefined);
  assert.equal(ephemeralContainerRefusal(pod, 1)?.path, 'spec.ephemeralContainers[1].securityContext.procMount');
});

test('a Memory emptyDir may have a sizeLimit; a disk one may not', () => {
  const pod = basePod();
  pod.spec!.volumes = [{ name: 'm', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } }];
  assert.deepEqual(admitPodFields(pod), { admit: true });
  pod.spec!.volumes.push({ name: 'd', emptyDir: { sizeLimit: '1Gi' } });
  assert.equal(podFieldRefusal(pod)?.path, 'spec.volumes[1].emptyDir.sizeLimit');
});

test('the OS checks come first, then the fields, then the resource fit (upstream order)', () => {
  const { pod } = withField('spec.hostnameOverride', 'name.example');
  pod.spec!.os = { name: 'windows' };
  assert.equal(canAdmitPod(pod, [], node).reason, 'PodOSNotSupported');
  delete pod.spec!.os;
  pod.spec!.containers[0]!.resources = { requests: { cpu: '100' } };
  assert.equal(canAdmitPod(pod, [], node).reason, 'PodFeatureUnsupported');
});

test('the example static pods are admitted', () => {
  const dir = join(process.cwd(), 'examples', 'static-pods');
  for (const f of readdirSync(dir)) {
    const pod = decodeSinglePod(readFileSync(join(dir, f), 'utf8'), f);
    assert.deepEqual(admitPodFields(pod), { admit: true }, f);
  }
});

test("runAsNonRoot is admitted with or without a runAsUser: the image's user is checked at creation", () => {
  const pod = basePod();
  pod.spec!.securityContext = { runAsNonRoot: true };
  pod.spec!.containers[0]!.securityContext = { runAsNonRoot: true };
  pod.spec!.initContainers = [{ name: 'i', image: 'busybox' }];
  pod.spec!.ephemeralContainers = [{ name: 'debug', image: 'busybox', securityContext: { runAsNonRoot: true } }];
  assert.deepEqual(admitPodFields(pod), { admit: true });
  assert.equal(ephemeralContainerRefusal(pod, 0), undefined);
});

test('procMount Unmasked: refused with upstream validation reason unless hostUsers is false (then hostUsers decides)', () => {
  const pod = basePod();
  pod.spec!.containers[0]!.securityContext = { procMount: 'Unmasked' };
  const refusal = podFieldRefusal(pod);
  assert.equal(refusal?.path, 'spec.containers[0].securityContext.procMount');
  assert.match(refusal!.rule.why, /`hostUsers` must be false to use `Unmasked`/);
  pod.spec!.hostUsers = false;
  assert.notEqual(podFieldRefusal(pod)?.path, 'spec.containers[0].securityContext.procMount');
  pod.spec!.containers[0]!.securityContext = { procMount: 'Default' };
  pod.spec!.hostUsers = true;
  assert.equal(podFieldRefusal(pod), undefined);
});

// Volumes served through CSI need the claim, PV and CSIDriver from the API server: admitted in
// API server mode (docs/storage.md), refused in standalone mode naming the field.
test('persistentVolumeClaim, ephemeral and csi volumes: refused standalone, admitted with an API server', () => {
  const sources = [
    { persistentVolumeClaim: { claimName: 'data', readOnly: true } },
    { ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast' } } } },
    {
      csi: {
        driver: 'secrets-store.csi.k8s.io',
        readOnly: true,
        fsType: 'ext4',
        volumeAttributes: { a: 'b' },
        nodePublishSecretRef: { name: 's' },
      },
    },
  ];
  for (const source of sources) {
    const pod = basePod();
    pod.spec!.volumes = [{ name: 'v', ...source }];
    const kind = Object.keys(source)[0]!;
    const standalone = canAdmitPod(pod, [], node);
    assert.equal(standalone.reason, 'PodFeatureUnsupported', kind);
    assert.match(
      standalone.message ?? '',
      new RegExp(`^spec\\.volumes\\[0\\]\\.${kind} is not supported .*needs the API server`),
    );
    assert.deepEqual(canAdmitPod(pod, [], node, { apiServer: true }), { admit: true }, kind);
  }
});

test('with an API server, what is still not served stays refused (volumeDevices: raw block)', () => {
  const pod = basePod();
  pod.spec!.volumes = [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }];
  pod.spec!.containers[0]!.volumeDevices = [{ name: 'v', devicePath: '/dev/xvda' }];
  assert.equal(podFieldRefusal(pod, { apiServer: true })?.path, 'spec.containers[0].volumeDevices');
});
