/**
 * The pods every cluster runs on a fresh node, as the cluster-day e2e creates them through the
 * test apiserver (what their DaemonSet, Deployment and the apiserver's admission would have
 * made): a CNI installer DaemonSet pod (hostNetwork, the CNI conf dir as a hostPath, its conflist
 * from a ConfigMap, as flannel's install-cni), a CoreDNS-like pod (Corefile from a ConfigMap,
 * dnsPolicy Default, an HTTP readiness probe on :8181/ready), an in-cluster client (Service env
 * vars and the kube-api-access projected volume the ServiceAccount admission plugin adds), and a
 * pod whose image is in a private registry (imagePullSecrets). Only busybox-static applets run.
 */
import type { Pod } from '../../src/api/types.js';
import { TEST_IMAGES } from './containerd.js';

type PodSpec = NonNullable<Pod['spec']>;
type Volume = NonNullable<PodSpec['volumes']>[number];

/** Where every in-cluster client finds its token, CA and namespace. */
export const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The file the CNI installer writes into the node's conf dir. */
export const CNI_CONFLIST = '10-kubelet-ts.conflist';

const SLEEP_FOREVER = "trap 'exit 0' TERM; sleep 3600 & wait";

function pod(name: string, namespace: string, nodeName: string, spec: Partial<PodSpec>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: name } },
    spec: { nodeName, terminationGracePeriodSeconds: 5, containers: [], ...spec },
  } as Pod;
}

/** A ConfigMap of the API, as POSTed. */
export function configMap(name: string, data: Record<string, string>): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data };
}

/**
 * The CNI installer: hostNetwork (it must run before the node has a network), tolerating every
 * taint, the node's CNI conf dir mounted from the host. It copies the conflist of ConfigMap
 * `configMapName` there atomically (a temp file, then rename: the runtime watches the dir) and
 * stays running; Ready once the file is in place.
 */
export function cniInstallerPod(o: {
  nodeName: string;
  namespace: string;
  confDir: string;
  configMapName: string;
}): Pod {
  const dest = `/host/etc/cni/net.d/${CNI_CONFLIST}`;
  const install = `set -e; cp /cni-cfg/${CNI_CONFLIST} ${dest}.tmp; mv ${dest}.tmp ${dest}; echo installed ${dest}; ${SLEEP_FOREVER}`;
  const p = pod('kube-cni-ds-installer', o.namespace, o.nodeName, {
    hostNetwork: true,
    tolerations: [{ operator: 'Exists' }],
    volumes: [
      { name: 'cni-conf', hostPath: { path: o.confDir, type: 'DirectoryOrCreate' } },
      { name: 'cni-cfg', configMap: { name: o.configMapName } },
    ],
    containers: [
      {
        name: 'install-cni',
        image: TEST_IMAGES.busybox,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', install],
        volumeMounts: [
          { name: 'cni-conf', mountPath: '/host/etc/cni/net.d' },
          { name: 'cni-cfg', mountPath: '/cni-cfg' },
        ],
        readinessProbe: { exec: { command: ['test', '-s', dest] }, periodSeconds: 1 },
      },
    ],
  });
  // What a DaemonSet controller stamps on its pods.
  p.metadata!.ownerReferences = [
    { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'kube-cni-ds', uid: 'cluster-day-ds', controller: true },
  ];
  return p;
}

/** A Corefile-ish file: forwards to the resolv.conf the pod got from the node (dnsPolicy Default). */
export const COREFILE = [
  '.:53 {',
  '    errors',
  '    health { lameduck 5s }',
  '    ready',
  '    forward . /etc/resolv.conf',
  '    cache 30',
  '    loop',
  '}',
  '',
].join('\n');

/**
 * CoreDNS-like: reads its Corefile from the ConfigMap volume, refuses (as CoreDNS's loop plugin
 * would) to forward to a loopback resolver, then serves /ready on :8181 with busybox httpd, which
 * the readiness probe asks. dnsPolicy Default: its /etc/resolv.conf is the node's resolvConf.
 */
export function corednsPod(o: { nodeName: string; namespace: string; configMapName: string }): Pod {
  const script = [
    'set -e',
    'grep -q "forward . /etc/resolv.conf" /etc/coredns/Corefile',
    'if grep -q "^nameserver 127\\." /etc/resolv.conf; then echo "Loop detected: /etc/resolv.conf names a loopback nameserver" >&2; exit 1; fi',
    'mkdir -p /tmp/www && echo OK > /tmp/www/ready',
    'httpd -p 8181 -h /tmp/www',
    SLEEP_FOREVER,
  ].join('; ');
  const p = pod('coredns', o.namespace, o.nodeName, {
    dnsPolicy: 'Default',
    tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }],
    volumes: [
      { name: 'config-volume', configMap: { name: o.configMapName, items: [{ key: 'Corefile', path: 'Corefile' }] } },
      { name: 'tmp', emptyDir: {} },
    ],
    containers: [
      {
        name: 'coredns',
        image: TEST_IMAGES.busybox,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', script],
        ports: [
          { name: 'dns', containerPort: 53, protocol: 'UDP' },
          { name: 'metrics', containerPort: 9153, protocol: 'TCP' },
        ],
        resources: { requests: { cpu: '100m', memory: '70Mi' }, limits: { memory: '170Mi' } },
        volumeMounts: [
          { name: 'config-volume', mountPath: '/etc/coredns', readOnly: true },
          { name: 'tmp', mountPath: '/tmp' },
        ],
        readinessProbe: { httpGet: { path: '/ready', port: 8181, scheme: 'HTTP' }, periodSeconds: 1 },
      },
    ],
  });
  p.metadata!.labels = { 'k8s-app': 'kube-dns' };
  return p;
}

/**
 * The projected volume the ServiceAccount admission plugin adds to every pod (kube-api-access-*):
 * a bound token, the cluster CA from the kube-root-ca.crt ConfigMap, the namespace.
 */
export function kubeApiAccessVolume(name: string): Volume {
  return {
    name,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
    },
  } as Volume;
}

/**
 * An in-cluster client: does what client-go's InClusterConfig does (KUBERNETES_SERVICE_HOST and
 * _PORT set, the token and CA readable) and writes the result to /tmp/in-cluster; Ready once it
 * has (the readiness probe reads the file).
 */
export function inClusterAppPod(o: { nodeName: string; namespace: string }): Pod {
  const script = [
    'set -e',
    'test -n "$KUBERNETES_SERVICE_HOST" || { echo "KUBERNETES_SERVICE_HOST is not set" >&2; exit 1; }',
    'test -n "$KUBERNETES_SERVICE_PORT" || { echo "KUBERNETES_SERVICE_PORT is not set" >&2; exit 1; }',
    `test -s ${SA_DIR}/token && test -s ${SA_DIR}/ca.crt`,
    `printf "https://%s:%s %s %s\\n" "$KUBERNETES_SERVICE_HOST" "$KUBERNETES_SERVICE_PORT" "$(cat ${SA_DIR}/namespace)" "$(cat ${SA_DIR}/token)" > /tmp/in-cluster`,
    'cat /tmp/in-cluster',
    SLEEP_FOREVER,
  ].join('; ');
  const access = 'kube-api-access-kts01';
  return pod('in-cluster-app', o.namespace, o.nodeName, {
    serviceAccountName: 'default',
    volumes: [kubeApiAccessVolume(access)],
    containers: [
      {
        name: 'app',
        image: TEST_IMAGES.busybox,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', script],
        volumeMounts: [{ name: access, mountPath: SA_DIR, readOnly: true }],
        readinessProbe: { exec: { command: ['cat', '/tmp/in-cluster'] }, periodSeconds: 1 },
      },
    ],
  });
}

/** A pod whose image only a registry with auth has, pulled with the pod's imagePullSecrets. */
export function privateImagePod(o: { nodeName: string; namespace: string; image: string; secretName: string }): Pod {
  return pod('private-image', o.namespace, o.nodeName, {
    imagePullSecrets: [{ name: o.secretName }],
    containers: [
      {
        name: 'main',
        image: o.image,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', `touch /tmp/up; ${SLEEP_FOREVER}`],
        readinessProbe: { exec: { command: ['test', '-f', '/tmp/up'] }, periodSeconds: 1 },
      },
    ],
  });
}

/** A kubernetes.io/dockerconfigjson Secret with the credentials for `host`. */
export function dockerConfigSecret(name: string, host: string, creds: { username: string; password: string }) {
  const auth = Buffer.from(`${creds.username}:${creds.password}`).toString('base64');
  const config = { auths: { [host]: { username: creds.username, password: creds.password, auth } } };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') },
  };
}
