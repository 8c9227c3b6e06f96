/**
 * Service environment variables: upstream's TestFromServices (pkg/kubelet/envvars/envvars_test.go)
 * and the Service cases of TestMakeEnvironmentVariables (pkg/kubelet/kubelet_pods_test.go), as
 * our tables with the same cases and names.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, Pod } from '../../src/api/types.js';
import { ConfigSourceAnnotationKey } from '../../src/api/types.js';
import { makeEnvironmentVariables, type EnvContext } from '../../src/kuberuntime/env.js';
import { fromServices, type Service, type ServiceLister } from '../../src/kuberuntime/service-env.js';
import type { PodObjectSource } from '../../src/volume/types.js';

type Port = { name?: string; port: number; protocol?: string };
const svc = (name: string, clusterIP: string, ports: Port[], namespace?: string): Service => ({
  metadata: { name, ...(namespace ? { namespace } : {}) },
  spec: { clusterIP, ports },
});

describe('fromServices (upstream TestFromServices)', () => {
  it('host, first port, named ports and the docker-link vars; IPv6 bracketed; no cluster IP skipped', () => {
    const sl = [
      svc('foo-bar', '1.2.3.4', [{ port: 8080, protocol: 'TCP' }]),
      svc('abc-123', '5.6.7.8', [
        { name: 'u-d-p', port: 8081, protocol: 'UDP' },
        { name: 't-c-p', port: 8081, protocol: 'TCP' },
      ]),
      svc('q-u-u-x', '9.8.7.6', [
        { port: 8082, protocol: 'TCP' },
        { name: '8083', port: 8083, protocol: 'TCP' },
      ]),
      svc('svrc-clusterip-none', 'None', [{ port: 8082, protocol: 'TCP' }]),
      svc('svrc-clusterip-empty', '', [{ port: 8082, protocol: 'TCP' }]),
      svc('super-ipv6', '2001:DB8::', [
        { name: 'u-d-p', port: 8084, protocol: 'UDP' },
        { name: 't-c-p', port: 8084, protocol: 'TCP' },
      ]),
      svc('sctp-1', '1.2.3.4', [{ port: 777, protocol: 'SCTP' }]),
    ];
    const expected: [string, string][] = [
      ['FOO_BAR_SERVICE_HOST', '1.2.3.4'],
      ['FOO_BAR_SERVICE_PORT', '8080'],
      ['FOO_BAR_PORT', 'tcp://1.2.3.4:8080'],
      ['FOO_BAR_PORT_8080_TCP', 'tcp://1.2.3.4:8080'],
      ['FOO_BAR_PORT_8080_TCP_PROTO', 'tcp'],
      ['FOO_BAR_PORT_8080_TCP_PORT', '8080'],
      ['FOO_BAR_PORT_8080_TCP_ADDR', '1.2.3.4'],
      ['ABC_123_SERVICE_HOST', '5.6.7.8'],
      ['ABC_123_SERVICE_PORT', '8081'],
      ['ABC_123_SERVICE_PORT_U_D_P', '8081'],
      ['ABC_123_SERVICE_PORT_T_C_P', '8081'],
      ['ABC_123_PORT', 'udp://5.6.7.8:8081'],
      ['ABC_123_PORT_8081_UDP', 'udp://5.6.7.8:8081'],
      ['ABC_123_PORT_8081_UDP_PROTO', 'udp'],
      ['ABC_123_PORT_8081_UDP_PORT', '8081'],
      ['ABC_123_PORT_8081_UDP_ADDR', '5.6.7.8'],
      ['ABC_123_PORT_8081_TCP', 'tcp://5.6.7.8:8081'],
      ['ABC_123_PORT_8081_TCP_PROTO', 'tcp'],
      ['ABC_123_PORT_8081_TCP_PORT', '8081'],
      ['ABC_123_PORT_8081_TCP_ADDR', '5.6.7.8'],
      ['Q_U_U_X_SERVICE_HOST', '9.8.7.6'],
      ['Q_U_U_X_SERVICE_PORT', '8082'],
      ['Q_U_U_X_SERVICE_PORT_8083', '8083'],
      ['Q_U_U_X_PORT', 'tcp://9.8.7.6:8082'],
      ['Q_U_U_X_PORT_8082_TCP', 'tcp://9.8.7.6:8082'],
      ['Q_U_U_X_PORT_8082_TCP_PROTO', 'tcp'],
      ['Q_U_U_X_PORT_8082_TCP_PORT', '8082'],
      ['Q_U_U_X_PORT_8082_TCP_ADDR', '9.8.7.6'],
      ['Q_U_U_X_PORT_8083_TCP', 'tcp://9.8.7.6:8083'],
      ['Q_U_U_X_PORT_8083_TCP_PROTO', 'tcp'],
      ['Q_U_U_X_PORT_8083_TCP_PORT', '8083'],
      ['Q_U_U_X_PORT_8083_TCP_ADDR', '9.8.7.6'],
      ['SUPER_IPV6_SERVICE_HOST', '2001:DB8::'],
      ['SUPER_IPV6_SERVICE_PORT', '8084'],
      ['SUPER_IPV6_SERVICE_PORT_U_D_P', '8084'],
      ['SUPER_IPV6_SERVICE_PORT_T_C_P', '8084'],
      ['SUPER_IPV6_PORT', 'udp://[2001:DB8::]:8084'],
      ['SUPER_IPV6_PORT_8084_UDP', 'udp://[2001:DB8::]:8084'],
      ['SUPER_IPV6_PORT_8084_UDP_PROTO', 'udp'],
      ['SUPER_IPV6_PORT_8084_UDP_PORT', '8084'],
      ['SUPER_IPV6_PORT_8084_UDP_ADDR', '2001:DB8::'],
      ['SUPER_IPV6_PORT_8084_TCP', 'tcp://[2001:DB8::]:8084'],
      ['SUPER_IPV6_PORT_8084_TCP_PROTO', 'tcp'],
      ['SUPER_IPV6_PORT_8084_TCP_PORT', '8084'],
      ['SUPER_IPV6_PORT_8084_TCP_ADDR', '2001:DB8::'],
      ['SCTP_1_SERVICE_HOST', '1.2.3.4'],
      ['SCTP_1_SERVICE_PORT', '777'],
      ['SCTP_1_PORT', 'sctp://1.2.3.4:777'],
      ['SCTP_1_PORT_777_SCTP', 'sctp://1.2.3.4:777'],
      ['SCTP_1_PORT_777_SCTP_PROTO', 'sctp'],
      ['SCTP_1_PORT_777_SCTP_PORT', '777'],
      ['SCTP_1_PORT_777_SCTP_ADDR', '1.2.3.4'],
    ];
    assert.deepEqual(
      fromServices(sl).map((e) => [e.name, e.value]),
      expected,
    );
  });

  it('(ours) a protocol left out is TCP; a cluster IP without ports gives only the host', () => {
    assert.deepEqual(
      fromServices([svc('x', '10.0.0.1', [{ port: 53 }]), svc('y', '10.0.0.2', [])]).map((e) => e.name),
      [
        'X_SERVICE_HOST',
        'X_SERVICE_PORT',
        'X_PORT',
        'X_PORT_53_TCP',
        'X_PORT_53_TCP_PROTO',
        'X_PORT_53_TCP_PORT',
        'X_PORT_53_TCP_ADDR',
        'Y_SERVICE_HOST',
      ],
    );
  });
});

// --- TestMakeEnvironmentVariables, the Service cases -------------------------------------------

/** upstream buildService: one port, no name. */
const buildService = (name: string, ns: string, clusterIP: string, port: number) =>
  svc(name, clusterIP, [{ port, protocol: 'TCP' }], ns);

const SERVICES = [
  buildService('kubernetes', 'default', '1.2.3.1', 8081),
  buildService('test', 'test1', '1.2.3.3', 8083),
  buildService('kubernetes', 'test2', '1.2.3.4', 8084),
  buildService('test', 'test2', '1.2.3.5', 8085),
  buildService('test', 'test2', 'None', 8085),
  buildService('test', 'test2', '', 8085),
  buildService('not-special', 'default', '1.2.3.8', 8088),
  buildService('not-special', 'default', 'None', 8088),
  buildService('not-special', 'default', '', 8088),
];

/** The seven variables of a one-port TCP service. */
function svcVars(prefix: string, ip: string, port: number): [string, string][] {
  const p = `${prefix}_PORT_${port}_TCP`;
  return [
    [`${prefix}_SERVICE_HOST`, ip],
    [`${prefix}_SERVICE_PORT`, String(port)],
    [`${prefix}_PORT`, `tcp://${ip}:${port}`],
    [p, `tcp://${ip}:${port}`],
    [`${p}_PROTO`, 'tcp'],
    [`${p}_PORT`, String(port)],
    [`${p}_ADDR`, ip],
  ];
}
const MASTER = svcVars('KUBERNETES', '1.2.3.1', 8081);
const TEST1 = svcVars('TEST', '1.2.3.3', 8083);

interface Case {
  name: string;
  ns: string;
  enableServiceLinks: boolean | undefined;
  container: Partial<Container>;
  /** upstream nilLister: no informer (standalone). */
  nilLister?: boolean;
  staticPod?: boolean;
  unsyncedServices?: boolean;
  configMap?: Record<string, string>;
  secret?: Record<string, string>;
  expectedEnvs?: [string, string][];
  expectedError?: RegExp;
}

const ENV_EXPANSION = [
  { name: 'TEST_LITERAL', value: 'test-test-test' },
  { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
  { name: 'OUT_OF_ORDER_TEST', value: '$(OUT_OF_ORDER_TARGET)' },
  { name: 'OUT_OF_ORDER_TARGET', value: 'FOO' },
  { name: 'EMPTY_VAR' },
  { name: 'EMPTY_TEST', value: 'foo-$(EMPTY_VAR)' },
  { name: 'POD_NAME_TEST2', value: 'test2-$(POD_NAME)' },
  { name: 'POD_NAME_TEST3', value: '$(POD_NAME_TEST2)-3' },
  { name: 'LITERAL_TEST', value: 'literal-$(TEST_LITERAL)' },
];
const ENV_EXPANDED: [string, string][] = [
  ['TEST_LITERAL', 'test-test-test'],
  ['POD_NAME', 'dapi-test-pod-name'],
  ['POD_NAME_TEST2', 'test2-dapi-test-pod-name'],
  ['POD_NAME_TEST3', 'test2-dapi-test-pod-name-3'],
  ['LITERAL_TEST', 'literal-test-test-test'],
  ['OUT_OF_ORDER_TEST', '$(OUT_OF_ORDER_TARGET)'],
  ['OUT_OF_ORDER_TARGET', 'FOO'],
  ['TEST_UNDEFINED', '$(UNDEFINED_VAR)'],
  ['EMPTY_VAR', ''],
  ['EMPTY_TEST', 'foo-'],
];
const FROM_OBJECT = (ref: 'configMapRef' | 'secretRef', name: string): Partial<Container> => ({
  envFrom: [{ [ref]: { name } }, { prefix: 'p_', [ref]: { name } }],
  env: [
    { name: 'TEST_LITERAL', value: 'test-test-test' },
    { name: 'EXPANSION_TEST', value: '$(REPLACE_ME)' },
    { name: 'DUPE_TEST', value: 'ENV_VAR' },
  ],
});
const fromObject = (value: string, dupe: string): [string, string][] => [
  ['TEST_LITERAL', 'test-test-test'],
  ['REPLACE_ME', value],
  ['EXPANSION_TEST', value],
  ['DUPE_TEST', 'ENV_VAR'],
  ['p_REPLACE_ME', value],
  ['p_DUPE_TEST', dupe],
];
const TEST1_OWN: Partial<Container> = { env: TEST1.map(([name, value]) => ({ name, value })) };

const CASES: Case[] = [
  {
    name: "if services aren't synced, non-static pods should fail",
    ns: 'test1',
    enableServiceLinks: false,
    container: { env: [] },
    unsyncedServices: true,
    expectedError: /services have not yet been read at least once, cannot construct envvars$/,
  },
  {
    name: "if services aren't synced, static pods should succeed",
    ns: 'test1',
    enableServiceLinks: false,
    container: { env: [] },
    staticPod: true,
    unsyncedServices: true,
    expectedEnvs: [],
  },
  {
    name: 'api server = Y, kubelet = Y',
    ns: 'test1',
    enableServiceLinks: false,
    container: { env: [{ name: 'FOO', value: 'BAR' }, ...TEST1_OWN.env!] },
    expectedEnvs: [['FOO', 'BAR'], ...TEST1, ...MASTER],
  },
  {
    name: 'api server = Y, kubelet = N',
    ns: 'test1',
    enableServiceLinks: false,
    container: { env: [{ name: 'FOO', value: 'BAR' }, ...TEST1_OWN.env!] },
    nilLister: true,
    expectedEnvs: [['FOO', 'BAR'], ...TEST1],
  },
  {
    name: 'api server = N; kubelet = Y',
    ns: 'test1',
    enableServiceLinks: false,
    container: { env: [{ name: 'FOO', value: 'BAZ' }] },
    expectedEnvs: [['FOO', 'BAZ'], ...MASTER],
  },
  {
    name: 'api server = N; kubelet = Y; service env vars',
    ns: 'test1',
    enableServiceLinks: true,
    container: { env: [{ name: 'FOO', value: 'BAZ' }] },
    expectedEnvs: [['FOO', 'BAZ'], ...TEST1, ...MASTER],
  },
  {
    name: 'master service in pod ns',
    ns: 'test2',
    enableServiceLinks: false,
    container: { env: [{ name: 'FOO', value: 'ZAP' }] },
    expectedEnvs: [['FOO', 'ZAP'], ...MASTER],
  },
  {
    name: 'master service in pod ns, service env vars',
    ns: 'test2',
    enableServiceLinks: true,
    container: { env: [{ name: 'FOO', value: 'ZAP' }] },
    expectedEnvs: [['FOO', 'ZAP'], ...svcVars('TEST', '1.2.3.5', 8085), ...svcVars('KUBERNETES', '1.2.3.4', 8084)],
  },
  { name: 'pod in master service ns', ns: 'default', enableServiceLinks: false, container: {}, expectedEnvs: MASTER },
  {
    name: 'pod in master service ns, service env vars',
    ns: 'default',
    enableServiceLinks: true,
    container: {},
    expectedEnvs: [...svcVars('NOT_SPECIAL', '1.2.3.8', 8088), ...MASTER],
  },
  {
    name: 'env expansion',
    ns: 'test1',
    enableServiceLinks: false,
    container: { env: [...ENV_EXPANSION, { name: 'TEST_UNDEFINED', value: '$(UNDEFINED_VAR)' }] },
    expectedEnvs: [...ENV_EXPANDED, ...MASTER],
  },
  {
    name: 'env expansion, service env vars',
    ns: 'test1',
    enableServiceLinks: true,
    container: {
      env: [
        ...ENV_EXPANSION,
        { name: 'SERVICE_VAR_TEST', value: '$(TEST_SERVICE_HOST):$(TEST_SERVICE_PORT)' },
        { name: 'TEST_UNDEFINED', value: '$(UNDEFINED_VAR)' },
      ],
    },
    expectedEnvs: [...ENV_EXPANDED, ['SERVICE_VAR_TEST', '1.2.3.3:8083'], ...TEST1, ...MASTER],
  },
  {
    name: 'configmapkeyref_missing_optional',
    ns: 'test',
    enableServiceLinks: false,
    container: {
      env: [
        {
          name: 'POD_NAME',
          valueFrom: { configMapKeyRef: { name: 'missing-config-map', key: 'key', optional: true } },
        },
      ],
    },
    expectedEnvs: MASTER,
  },
  {
    name: 'secretkeyref_missing_optional',
    ns: 'test',
    enableServiceLinks: false,
    container: {
      env: [{ name: 'POD_NAME', valueFrom: { secretKeyRef: { name: 'missing-secret', key: 'key', optional: true } } }],
    },
    expectedEnvs: MASTER,
  },
  {
    name: 'configmap',
    ns: 'test1',
    enableServiceLinks: false,
    container: FROM_OBJECT('configMapRef', 'test-config-map'),
    configMap: { REPLACE_ME: 'FROM_CONFIG_MAP', DUPE_TEST: 'CONFIG_MAP' },
    expectedEnvs: [...fromObject('FROM_CONFIG_MAP', 'CONFIG_MAP'), ...MASTER],
  },
  {
    name: 'configmap, service env vars',
    ns: 'test1',
    enableServiceLinks: true,
    container: FROM_OBJECT('configMapRef', 'test-config-map'),
    configMap: { REPLACE_ME: 'FROM_CONFIG_MAP', DUPE_TEST: 'CONFIG_MAP' },
    expectedEnvs: [...fromObject('FROM_CONFIG_MAP', 'CONFIG_MAP'), ...TEST1, ...MASTER],
  },
  {
    name: 'configmap_missing_optional',
    ns: 'test',
    enableServiceLinks: false,
    container: { envFrom: [{ configMapRef: { name: 'missing-config-map', optional: true } }] },
    expectedEnvs: MASTER,
  },
  {
    name: 'secret',
    ns: 'test1',
    enableServiceLinks: false,
    container: FROM_OBJECT('secretRef', 'test-secret'),
    secret: { REPLACE_ME: 'FROM_SECRET', DUPE_TEST: 'SECRET' },
    expectedEnvs: [...fromObject('FROM_SECRET', 'SECRET'), ...MASTER],
  },
  {
    name: 'secret, service env vars',
    ns: 'test1',
    enableServiceLinks: true,
    container: FROM_OBJECT('secretRef', 'test-secret'),
    secret: { REPLACE_ME: 'FROM_SECRET', DUPE_TEST: 'SECRET' },
    expectedEnvs: [...fromObject('FROM_SECRET', 'SECRET'), ...TEST1, ...MASTER],
  },
  {
    name: 'secret_missing_optional',
    ns: 'test',
    enableServiceLinks: false,
    container: { envFrom: [{ secretRef: { name: 'missing-secret', optional: true } }] },
    expectedEnvs: MASTER,
  },
  {
    // upstream refuses a nil enableServiceLinks (its defaulting makes nil impossible); ours reads
    // nil as the default, true, so a pod that skipped defaulting is not refused.
    name: 'nil_enableServiceLinks',
    ns: 'test1',
    enableServiceLinks: undefined,
    container: {},
    expectedEnvs: [...TEST1, ...MASTER],
  },
];

/** upstream's fake client answers every configMap / secret get with the case's object, or NotFound. */
function objectsOf(tc: Case): PodObjectSource {
  const b64 = (d: Record<string, string>) =>
    Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  return {
    configMap: () => (tc.configMap ? { data: tc.configMap } : null),
    secret: () => (tc.secret ? { data: b64(tc.secret) } : null),
    serviceAccountToken: () => undefined,
  };
}

function podOf(tc: Case): Pod {
  return {
    metadata: {
      name: 'dapi-test-pod-name',
      namespace: tc.ns,
      uid: 'uid-1',
      annotations: tc.staticPod ? { [ConfigSourceAnnotationKey]: 'file' } : { [ConfigSourceAnnotationKey]: 'api' },
    },
    spec: {
      serviceAccountName: 'special',
      nodeName: 'node-name',
      containers: [],
      ...(tc.enableServiceLinks === undefined ? {} : { enableServiceLinks: tc.enableServiceLinks }),
    },
  };
}

function listerOf(tc: Case): ServiceLister | undefined {
  if (tc.nilLister) return undefined;
  if (tc.unsyncedServices) return { hasSynced: () => false, list: () => [] };
  return { hasSynced: () => true, list: () => SERVICES };
}

const byName = (a: [string, string], b: [string, string]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

describe('makeEnvironmentVariables with Services (upstream TestMakeEnvironmentVariables)', () => {
  for (const tc of CASES) {
    it(tc.name, () => {
      const ctx: EnvContext = {
        nodeName: 'node-name',
        hostIP: '',
        podIP: '',
        podIPs: [],
        objects: objectsOf(tc),
        ...(listerOf(tc) ? { services: listerOf(tc)! } : {}),
      };
      const run = () => makeEnvironmentVariables(podOf(tc), { name: 'c', ...tc.container }, ctx);
      if (tc.expectedError) return void assert.throws(run, tc.expectedError);
      const got = run().map((e): [string, string] => [e.key, e.value]);
      assert.equal(new Set(got.map(([k]) => k)).size, got.length, 'no duplicate names');
      assert.deepEqual(got.sort(byName), [...tc.expectedEnvs!].sort(byName));
    });
  }

  it('(ours) the container env and envFrom override the Service variables; service vars come last', () => {
    const pod = podOf({ name: '', ns: 'test1', enableServiceLinks: true, container: {} });
    const ctx: EnvContext = { nodeName: 'n', hostIP: '', podIP: '', podIPs: [], services: listerOf({} as Case)! };
    const c = { name: 'c', env: [{ name: 'KUBERNETES_SERVICE_HOST', value: 'mine' }] };
    const env = makeEnvironmentVariables(pod, c, ctx);
    assert.deepEqual(env[0], { key: 'KUBERNETES_SERVICE_HOST', value: 'mine' });
    assert.equal(env.filter((e) => e.key === 'KUBERNETES_SERVICE_HOST').length, 1);
    assert.equal(env.length, 1 + TEST1.length + MASTER.length - 1);
  });
});
