import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManifestError } from '../../src/errors.js';
import { decodePodOrPodList, decodeSinglePod, defaultImagePullPolicy } from '../../src/podconfig/index.js';

const GOOD_YAML = `# a static pod
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  initContainers:
  - name: init
    image: busybox:1.36
    command: [sh, -c, "true"]
  containers:
  - name: nginx
    image: nginx:1.25
    ports:
    - name: http
      containerPort: 80
    env:
    - name: MODE
      value: "prod"
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    resources:
      requests: {cpu: 100m, memory: 32Mi}
      limits: {cpu: "0.5", memory: 64Mi}
    livenessProbe:
      httpGet: {port: http}
    readinessProbe:
      tcpSocket: {port: 80}
      periodSeconds: 5
    volumeMounts:
    - {name: data, mountPath: /data}
  volumes:
  - name: data
  - name: cfg
    configMap: {name: cfg}
`;

const GOOD_JSON = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'api.example', namespace: 'kube-system' },
  spec: {
    restartPolicy: 'OnFailure',
    containers: [{ name: 'api', image: 'registry.local:5000/api@sha256:' + 'a'.repeat(64) }],
  },
});

describe('decodeSinglePod', () => {
  it('decodes good YAML and applies the API defaults', () => {
    const pod = decodeSinglePod(GOOD_YAML, '/m/web.yaml');
    assert.equal(pod.metadata!.name, 'web');
    assert.equal(pod.metadata!.namespace, 'default');
    const spec = pod.spec!;
    assert.equal(spec.restartPolicy, 'Always');
    assert.equal(spec.dnsPolicy, 'ClusterFirst');
    assert.equal(spec.terminationGracePeriodSeconds, 30);
    assert.equal(spec.schedulerName, 'default-scheduler');
    assert.equal(spec.enableServiceLinks, true);
    assert.deepEqual(spec.securityContext, {});
    const c = spec.containers[0]!;
    assert.equal(c.imagePullPolicy, 'IfNotPresent');
    assert.equal(c.terminationMessagePath, '/dev/termination-log');
    assert.equal(c.terminationMessagePolicy, 'File');
    assert.equal(c.ports![0]!.protocol, 'TCP');
    assert.deepEqual(
      {
        t: c.livenessProbe!.timeoutSeconds,
        p: c.livenessProbe!.periodSeconds,
        s: c.livenessProbe!.successThreshold,
        f: c.livenessProbe!.failureThreshold,
      },
      { t: 1, p: 10, s: 1, f: 3 },
    );
    assert.equal(c.livenessProbe!.httpGet!.path, '/');
    assert.equal(c.livenessProbe!.httpGet!.scheme, 'HTTP');
    assert.equal(c.readinessProbe!.periodSeconds, 5, 'explicit values are kept');
    assert.equal(c.env![1]!.valueFrom!.fieldRef!.apiVersion, 'v1');
    assert.equal(spec.initContainers![0]!.terminationMessagePolicy, 'File', 'init containers are defaulted too');
    assert.deepEqual(spec.volumes![0], { name: 'data', emptyDir: {} });
    assert.equal(spec.volumes![1]!.configMap!.defaultMode, 0o644);
  });

  it('decodes good JSON', () => {
    const pod = decodeSinglePod(GOOD_JSON, '/m/api.json');
    assert.equal(pod.metadata!.namespace, 'kube-system');
    assert.equal(pod.spec!.restartPolicy, 'OnFailure');
    assert.equal(pod.spec!.containers[0]!.imagePullPolicy, 'IfNotPresent', 'a digest is not "latest"');
  });

  it('requests default to limits', () => {
    const pod = decodeSinglePod(GOOD_YAML.replace('requests: {cpu: 100m, memory: 32Mi}', 'requests: {cpu: 100m}'), 'f');
    assert.deepEqual(pod.spec!.containers[0]!.resources!.requests, { cpu: '100m', memory: '64Mi' });
  });

  it('hostNetwork pods get hostPort = containerPort', () => {
    const pod = decodeSinglePod(GOOD_YAML.replace('spec:\n', 'spec:\n  hostNetwork: true\n'), 'f');
    assert.equal(pod.spec!.containers[0]!.ports![0]!.hostPort, 80);
  });

  it('converts metadata timestamps to Dates', () => {
    const pod = decodeSinglePod(
      GOOD_YAML.replace('  name: web\n', '  name: web\n  deletionTimestamp: "2024-05-01T10:00:00Z"\n'),
      'f',
    );
    assert.ok(pod.metadata!.deletionTimestamp instanceof Date);
    assert.equal(pod.metadata!.deletionTimestamp.toISOString(), '2024-05-01T10:00:00.000Z');
  });

  describe('imagePullPolicy defaults', () => {
    const table: Array<[string, string]> = [
      ['nginx', 'Always'],
      ['nginx:latest', 'Always'],
      ['nginx:1.25', 'IfNotPresent'],
      ['docker.io/library/nginx', 'Always'],
      ['registry.local:5000/nginx', 'Always'],
      ['registry.local:5000/nginx:1.2', 'IfNotPresent'],
      ['nginx@sha256:' + 'b'.repeat(64), 'IfNotPresent'],
      ['nginx:latest@sha256:' + 'b'.repeat(64), 'Always'],
    ];
    for (const [image, want] of table) {
      it(`${image} → ${want}`, () => {
        assert.equal(defaultImagePullPolicy(image), want);
        const pod = decodeSinglePod(GOOD_JSON.replace(/"image":"[^"]*"/, `"image":${JSON.stringify(image)}`), 'f');
        assert.equal(pod.spec!.containers[0]!.imagePullPolicy, want);
      });
    }
    it('an explicit policy is kept', () => {
      const pod = decodeSinglePod(
        GOOD_YAML.replace('image: nginx:1.25', 'image: nginx\n    imagePullPolicy: Never'),
        'f',
      );
      assert.equal(pod.spec!.containers[0]!.imagePullPolicy, 'Never');
    });
  });

  describe('rejects bad manifests, naming the field', () => {
    const edit = (from: string, to: string) => {
      assert.ok(GOOD_YAML.includes(from), `fixture contains ${from}`);
      return GOOD_YAML.replace(from, to);
    };
    const table: Array<{ name: string; text: string; field: string | undefined; message: RegExp }> = [
      { name: 'not YAML', text: 'apiVersion: v1\nkind: [Pod\n', field: undefined, message: /not valid YAML/ },
      { name: 'not JSON', text: '{"apiVersion": "v1",', field: undefined, message: /not valid JSON/ },
      { name: 'empty', text: '# nothing\n', field: undefined, message: /empty/ },
      { name: 'two documents', text: `${GOOD_YAML}---\n${GOOD_YAML}`, field: undefined, message: /2 YAML documents/ },
      { name: 'a list', text: '[1, 2]', field: undefined, message: /must be an object/ },
      {
        name: 'wrong apiVersion',
        text: edit('apiVersion: v1', 'apiVersion: apps/v1'),
        field: 'apiVersion',
        message: /"apps\/v1" is not supported/,
      },
      { name: 'missing kind', text: edit('kind: Pod\n', ''), field: 'kind', message: /Required/ },
      {
        name: 'unknown kind',
        text: edit('kind: Pod', 'kind: Deployment'),
        field: 'kind',
        message: /"Deployment" is not supported/,
      },
      {
        name: 'PodList in a single-pod file',
        text: edit('kind: Pod', 'kind: PodList'),
        field: 'kind',
        message: /"PodList" is not supported/,
      },
      { name: 'missing name', text: edit('  name: web\n', ''), field: 'metadata.name', message: /Required value/ },
      {
        name: 'bad name',
        text: edit('name: web', 'name: Web_1'),
        field: 'metadata.name',
        message: /"Web_1" is not a valid DNS-1123 subdomain/,
      },
      {
        name: 'bad namespace',
        text: edit('  name: web\n', '  name: web\n  namespace: kube.system\n'),
        field: 'metadata.namespace',
        message: /DNS-1123 label/,
      },
      {
        name: 'bad label value',
        text: edit('{app: web}', '{app: "a b"}'),
        field: 'metadata.labels["app"]',
        message: /label value/,
      },
      { name: 'no spec', text: 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n', field: 'spec', message: /Required/ },
      {
        name: 'no containers',
        text: 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: []}\n',
        field: 'spec.containers',
        message: /at least one container/,
      },
      {
        name: 'bad container name',
        text: edit('- name: nginx', '- name: Web'),
        field: 'spec.containers[0].name',
        message: /"Web" is not a valid DNS-1123 label/,
      },
      {
        name: 'duplicate container name',
        text: edit('- name: nginx', '- name: init'),
        field: 'spec.containers[0].name',
        message: /Duplicate value: "init" is also the name of spec.initContainers\[0\]/,
      },
      {
        name: 'missing image',
        text: edit('    image: nginx:1.25\n', ''),
        field: 'spec.containers[0].image',
        message: /Required value/,
      },
      {
        name: 'port out of range',
        text: edit('containerPort: 80', 'containerPort: 70000'),
        field: 'spec.containers[0].ports[0].containerPort',
        message: /less than or equal to 65535/,
      },
      {
        name: 'port zero',
        text: edit('containerPort: 80', 'containerPort: 0'),
        field: 'spec.containers[0].ports[0].containerPort',
        message: /greater than or equal to 1/,
      },
      {
        name: 'port as text',
        text: edit('containerPort: 80', 'containerPort: "80"'),
        field: 'spec.containers[0].ports[0].containerPort',
        message: /must be an integer/,
      },
      {
        name: 'bad protocol',
        text: edit('containerPort: 80', 'containerPort: 80\n      protocol: ICMP'),
        field: 'spec.containers[0].ports[0].protocol',
        message: /"ICMP" is not supported/,
      },
      {
        name: 'bad restartPolicy',
        text: edit('spec:\n', 'spec:\n  restartPolicy: Sometimes\n'),
        field: 'spec.restartPolicy',
        message: /"Sometimes" is not supported/,
      },
      {
        name: 'bad quantity',
        text: edit('memory: 64Mi', 'memory: 64MB'),
        field: 'spec.containers[0].resources.limits.memory',
        message: /"64MB" is not a valid quantity/,
      },
      {
        name: 'request above limit',
        text: edit('cpu: 100m', 'cpu: "2"'),
        field: 'spec.containers[0].resources.requests.cpu',
        message: /must be less than or equal to the cpu limit/,
      },
      {
        name: 'negative quantity',
        text: edit('cpu: 100m', 'cpu: -1'),
        field: 'spec.containers[0].resources.requests.cpu',
        message: /greater than or equal to 0/,
      },
      {
        name: 'bad env name',
        text: edit('- name: MODE', '- name: 1MODE'),
        field: 'spec.containers[0].env[0].name',
        message: /not a valid environment variable name/,
      },
      {
        name: 'env value and valueFrom',
        text: edit('value: "prod"', 'value: "prod"\n      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}'),
        field: 'spec.containers[0].env[0].valueFrom',
        message: /may not be specified/,
      },
      {
        name: 'negative grace period',
        text: edit('spec:\n', 'spec:\n  terminationGracePeriodSeconds: -5\n'),
        field: 'spec.terminationGracePeriodSeconds',
        message: /greater than or equal to 0/,
      },
      {
        name: 'probe without handler',
        text: edit('httpGet: {port: http}', 'periodSeconds: 3'),
        field: 'spec.containers[0].livenessProbe',
        message: /must specify a handler/,
      },
      {
        name: 'liveness successThreshold',
        text: edit('httpGet: {port: http}', 'httpGet: {port: http}\n      successThreshold: 2'),
        field: 'spec.containers[0].livenessProbe.successThreshold',
        message: /must be 1/,
      },
      {
        name: 'probe port out of range',
        text: edit('tcpSocket: {port: 80}', 'tcpSocket: {port: 0}'),
        field: 'spec.containers[0].readinessProbe.tcpSocket.port',
        message: /greater than or equal to 1/,
      },
      {
        name: 'mount of an unknown volume',
        text: edit('{name: data, mountPath: /data}', '{name: nope, mountPath: /data}'),
        field: 'spec.containers[0].volumeMounts[0].name',
        message: /"nope" is not a volume/,
      },
      {
        name: 'duplicate volume',
        text: edit('  - name: cfg\n', '  - name: data\n'),
        field: 'spec.volumes[1].name',
        message: /Duplicate value/,
      },
      {
        name: 'init container probe',
        text: edit('command: [sh, -c, "true"]', 'livenessProbe: {exec: {command: ["true"]}}'),
        field: 'spec.initContainers[0].livenessProbe',
        message: /Forbidden/,
      },
      {
        // upstream ValidatePodCreate: only the ephemeralcontainers subresource adds them.
        name: 'ephemeral containers in a manifest',
        text: edit('  volumes:\n', '  ephemeralContainers: [{name: dbg, image: busybox}]\n  volumes:\n'),
        field: 'spec.ephemeralContainers',
        message: /Forbidden: cannot be set on create/,
      },
      {
        // upstream validateHostUsers: no host namespace beside a user namespace.
        name: 'hostUsers false with hostNetwork',
        text: edit('  volumes:\n', '  hostUsers: false\n  hostNetwork: true\n  volumes:\n'),
        field: 'spec.hostNetwork',
        message: /Forbidden: when `pod.Spec.HostUsers` is false/,
      },
      {
        name: 'hostUsers false with hostPID',
        text: edit('  volumes:\n', '  hostUsers: false\n  hostPID: true\n  volumes:\n'),
        field: 'spec.HostPID',
        message: /Forbidden: when `pod.Spec.HostUsers` is false/,
      },
      {
        name: 'hostUsers false with hostIPC',
        text: edit('  volumes:\n', '  hostUsers: false\n  hostIPC: true\n  volumes:\n'),
        field: 'spec.HostIPC',
        message: /Forbidden: when `pod.Spec.HostUsers` is false/,
      },
      {
        name: 'hostUsers false with a raw block device',
        text: edit(
          '  volumes:\n',
          '    volumeDevices: [{name: data, devicePath: /dev/xvda}]\n  hostUsers: false\n  volumes:\n',
        ),
        field: 'spec.containers[0].volumeDevices',
        message: /Forbidden: when `pod.Spec.HostUsers` is false/,
      },
      {
        name: 'hostUsers not a bool',
        text: edit('  volumes:\n', '  hostUsers: "no"\n  volumes:\n'),
        field: 'spec.hostUsers',
        message: /must be true or false/,
      },
      {
        name: 'bad timestamp',
        text: edit('  name: web\n', '  name: web\n  deletionTimestamp: yesterday\n'),
        field: 'metadata.deletionTimestamp',
        message: /RFC 3339/,
      },
      {
        name: 'defaultMode above 0777',
        text: edit('configMap: {name: cfg}', 'configMap: {name: cfg, defaultMode: 0o1000}'),
        field: 'spec.volumes[1].configMap.defaultMode',
        message: /Invalid value: 01000 \(512\): must be a number between 0 and 0777 \(octal\), both inclusive/,
      },
      {
        name: 'negative item mode',
        text: edit('configMap: {name: cfg}', 'secret: {secretName: s, items: [{key: k, path: k, mode: -1}]}'),
        field: 'spec.volumes[1].secret.items[0].mode',
        message: /Invalid value: -1: must be a number between 0 and 0777/,
      },
      {
        name: 'projected source item mode',
        text: edit(
          'configMap: {name: cfg}',
          'projected: {sources: [{secret: {name: s, items: [{key: k, path: k, mode: 4096}]}}]}',
        ),
        field: 'spec.volumes[1].projected.sources[0].secret.items[0].mode',
        message: /010000 \(4096\)/,
      },
      {
        name: 'mode as text',
        text: edit('configMap: {name: cfg}', 'downwardAPI: {defaultMode: "0644"}'),
        field: 'spec.volumes[1].downwardAPI.defaultMode',
        message: /Invalid value: "0644"/,
      },
      {
        name: 'negative fsGroup',
        text: edit('spec:\n', 'spec:\n  securityContext: {fsGroup: -1}\n'),
        field: 'spec.securityContext.fsGroup',
        message: /Invalid value: -1: must be between 0 and 2147483647, inclusive/,
      },
      {
        name: 'supplementalGroups entry',
        text: edit('spec:\n', 'spec:\n  securityContext: {supplementalGroups: [5, x]}\n'),
        field: 'spec.securityContext.supplementalGroups[1]',
        message: /Invalid value: "x"/,
      },
      {
        name: 'container runAsUser too large',
        text: edit('    image: nginx:1.25\n', '    image: nginx:1.25\n    securityContext: {runAsUser: 4294967296}\n'),
        field: 'spec.containers[0].securityContext.runAsUser',
        message: /must be between 0 and 2147483647/,
      },
      {
        // upstream ValidateSecurityContext: no_new_privs would be silently dropped.
        name: 'allowPrivilegeEscalation false on a privileged container',
        text: edit(
          '    image: nginx:1.25\n',
          '    image: nginx:1.25\n    securityContext: {privileged: true, allowPrivilegeEscalation: false}\n',
        ),
        field: 'spec.containers[0].securityContext',
        message: /cannot set `allowPrivilegeEscalation` to false and `privileged` to true/,
      },
      {
        name: 'allowPrivilegeEscalation false with CAP_SYS_ADMIN added',
        text: edit(
          '    image: nginx:1.25\n',
          '    image: nginx:1.25\n    securityContext: {allowPrivilegeEscalation: false, capabilities: {add: [CAP_SYS_ADMIN]}}\n',
        ),
        field: 'spec.containers[0].securityContext',
        message: /cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN/,
      },
    ];
    for (const tc of table) {
      it(tc.name, () => {
        assert.throws(
          () => decodeSinglePod(tc.text, '/etc/kubernetes/manifests/web.yaml'),
          (err: unknown) => {
            assert.ok(err instanceof ManifestError, `ManifestError, got ${String(err)}`);
            assert.equal(err.code, 'KTS_ERR_MANIFEST');
            assert.equal(err.file, '/etc/kubernetes/manifests/web.yaml');
            assert.equal(err.field, tc.field);
            assert.match(err.message, tc.message);
            assert.ok(
              err.message.startsWith(`/etc/kubernetes/manifests/web.yaml: ${tc.field ? `${tc.field}: ` : ''}`),
              err.message,
            );
            return true;
          },
        );
      });
    }

    it('reports every problem, the first one as the field', () => {
      const text = edit('- name: nginx', '- name: Web').replace('containerPort: 80', 'containerPort: 70000');
      assert.throws(
        () => decodeSinglePod(text, 'f.yaml'),
        (err: unknown) =>
          err instanceof ManifestError &&
          err.field === 'spec.containers[0].name' &&
          /and 1 more: spec.containers\[0\].ports\[0\].containerPort/.test(err.message),
      );
    });

    it('the brief example reads as promised', () => {
      const text = edit('  containers:\n', '  containers:\n  - name: ok\n    image: x\n');
      assert.throws(() => decodeSinglePod(text.replace('- name: nginx', '- name: Web'), 'f.yaml'), {
        message: /^f\.yaml: spec\.containers\[1\]\.name: "Web" is not a valid DNS-1123 label/,
      });
    });
  });
});

describe('decodePodOrPodList', () => {
  it('accepts a single Pod', () => {
    assert.equal(decodePodOrPodList(GOOD_YAML, 'http://x/pods').length, 1);
  });

  it('accepts a PodList', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'PodList',
      items: [
        JSON.parse(GOOD_JSON),
        { metadata: { name: 'b' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      ],
    };
    const pods = decodePodOrPodList(JSON.stringify(list), 'http://x/pods');
    assert.deepEqual(
      pods.map((p) => p.metadata!.name),
      ['api.example', 'b'],
    );
    assert.equal(pods[1]!.spec!.containers[0]!.imagePullPolicy, 'Always');
  });

  it('names the item in errors', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'PodList',
      items: [JSON.parse(GOOD_JSON), { metadata: { name: 'b' }, spec: { containers: [{ name: 'c' }] } }],
    };
    assert.throws(
      () => decodePodOrPodList(JSON.stringify(list), 'http://x/pods'),
      (err: unknown) => err instanceof ManifestError && err.field === 'items[1].spec.containers[0].image',
    );
  });

  it('rejects other kinds', () => {
    assert.throws(
      () => decodePodOrPodList('apiVersion: v1\nkind: Service\n', 'u'),
      (err: unknown) => err instanceof ManifestError && err.field === 'kind',
    );
  });
});
