import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { criErrorFrom, errorCodeForGrpc, grpcCodeName, replyError } from '../../src/cri/errors.js';
import { CriError } from '../../src/errors.js';

test('gRPC status codes map to kubelet-ts error codes', () => {
  assert.equal(errorCodeForGrpc(status.UNAVAILABLE), 'KTS_ERR_CRI_UNAVAILABLE');
  assert.equal(errorCodeForGrpc(status.DEADLINE_EXCEEDED), 'KTS_ERR_CRI_TIMEOUT');
  assert.equal(errorCodeForGrpc(status.NOT_FOUND), 'KTS_ERR_CRI_NOT_FOUND');
  assert.equal(errorCodeForGrpc(status.UNIMPLEMENTED), 'KTS_ERR_CRI_UNIMPLEMENTED');
  for (const c of [
    status.UNKNOWN,
    status.INTERNAL,
    status.INVALID_ARGUMENT,
    status.ALREADY_EXISTS,
    status.RESOURCE_EXHAUSTED,
    status.CANCELLED,
  ]) {
    assert.equal(errorCodeForGrpc(c), 'KTS_ERR_CRI', `code ${c}`);
  }
  assert.equal(errorCodeForGrpc(undefined), 'KTS_ERR_CRI');
});

test('grpcCodeName gives the upper-case status name', () => {
  assert.equal(grpcCodeName(status.NOT_FOUND), 'NOT_FOUND');
  assert.equal(grpcCodeName(status.DEADLINE_EXCEEDED), 'DEADLINE_EXCEEDED');
  assert.equal(grpcCodeName(99), 'CODE_99');
});

test('criErrorFrom keeps method, grpc code, runtime details and cause', () => {
  const cause = Object.assign(new Error('5 NOT_FOUND: container "x" not found'), {
    code: status.NOT_FOUND,
    details: 'container "x" not found',
  });
  const e = criErrorFrom('ContainerStatus', cause);
  assert.ok(e instanceof CriError);
  assert.equal(e.code, 'KTS_ERR_CRI_NOT_FOUND');
  assert.equal(e.method, 'ContainerStatus');
  assert.equal(e.grpcCode, status.NOT_FOUND);
  assert.equal(e.message, 'CRI ContainerStatus: NOT_FOUND: container "x" not found');
  assert.equal(e.cause, cause);
});

test('criErrorFrom wraps non-gRPC errors as KTS_ERR_CRI and passes CriError through', () => {
  const e = criErrorFrom('RunPodSandbox', new TypeError('bad enum'));
  assert.equal(e.code, 'KTS_ERR_CRI');
  assert.equal(e.grpcCode, undefined);
  assert.match(e.message, /^CRI RunPodSandbox: bad enum$/);
  assert.equal(criErrorFrom('X', e), e);
});

test('replyError is KTS_ERR_CRI_REPLY', () => {
  const e = replyError('RunPodSandbox', 'podSandboxId is not set');
  assert.equal(e.code, 'KTS_ERR_CRI_REPLY');
  assert.equal(e.message, 'CRI RunPodSandbox: podSandboxId is not set');
});
