// CRI field 17 of ContainerConfig, `repeated CDIDevice CDI_devices = 17` with `message CDIDevice
// { string name = 1; }`, as upstream cri-api v1 api.proto has them: device plugins' CDI names
// reach the runtime through it (upstream stopped setting cdi.k8s.io/* annotations in 1.32).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MethodDefinition, ServiceDefinition } from '@grpc/proto-loader';
import { packageDefinition, RUNTIME_SERVICE } from '../../src/cri/proto.js';
import type { ContainerConfig } from '../../src/cri/types.js';

type Field = { name: string; number: number; rule?: string; type: string };
type Request = { podSandboxId: string; config: ContainerConfig };

function fieldsOf(message: string): Field[] {
  return (packageDefinition()[`runtime.v1.${message}`] as unknown as { type: { field: Field[] } }).type.field;
}

function createContainer(): MethodDefinition<Request, Request> {
  const service = packageDefinition()[RUNTIME_SERVICE] as ServiceDefinition;
  return service.CreateContainer as unknown as MethodDefinition<Request, Request>;
}

const config: ContainerConfig = {
  metadata: { name: 'c', attempt: 0 },
  image: { image: 'busybox' },
  command: [],
  args: [],
  workingDir: '',
  envs: [],
  mounts: [],
  labels: {},
  annotations: {},
  logPath: 'c/0.log',
  CDIDevices: [{ name: 'kubelet-ts.test/dev=d0' }, { name: 'vendor.com/gpu=gpu1' }],
};

test('CDIDevice and ContainerConfig.CDI_devices carry upstream field numbers', () => {
  assert.deepEqual(
    fieldsOf('CDIDevice').map((f) => [f.name, f.number, f.type]),
    [['name', 1, 'TYPE_STRING']],
  );
  const cdi = fieldsOf('ContainerConfig').find((f) => f.name === 'CDIDevices');
  assert.equal(cdi?.number, 17);
  assert.equal(cdi?.type, 'TYPE_MESSAGE');
  assert.equal(cdi?.rule ?? 'LABEL_REPEATED', 'LABEL_REPEATED');
});

test('a ContainerConfig with CDIDevices encodes as field 17 and decodes back', () => {
  const method = createContainer();
  const bytes = method.requestSerialize({ podSandboxId: 'sb', config });
  // Field 17, wire type 2 is the varint key 0x8a 0x01; then a CDIDevice of field 1 (0x0a) = the name.
  const name = Buffer.from('kubelet-ts.test/dev=d0');
  const entry = Buffer.concat([Buffer.from([0x8a, 0x01, name.length + 2, 0x0a, name.length]), name]);
  assert.ok(bytes.includes(entry), 'field 17 with the first CDI name on the wire');
  const back = method.requestDeserialize(bytes);
  assert.deepEqual(back.config.CDIDevices, config.CDIDevices);
});

test('a ContainerConfig without CDIDevices decodes to an empty list (older runtimes never see the field)', () => {
  const method = createContainer();
  const { CDIDevices: _none, ...plain } = config;
  const bytes = method.requestSerialize({ podSandboxId: 'sb', config: plain });
  assert.equal(bytes.includes(Buffer.from([0x8a, 0x01])), false);
  assert.deepEqual(method.requestDeserialize(bytes).config.CDIDevices, []);
});
