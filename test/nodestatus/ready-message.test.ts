// The node Ready condition's message while not ready: upstream's ReadyCondition setter reports
// utilerrors.NewAggregate(runtimeErrors, networkErrors, …).Error(), whose format (one message as
// is, duplicates dropped, several in brackets) is upstream TestAggregate*'s in
// apimachinery/pkg/util/errors/errors_test.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateMessage } from '../../src/nodestatus/node-object.js';

const NET =
  'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized';

const ROWS: Array<[name: string, errors: string[], message: string]> = [
  ['network not ready alone: its message as is (the node of a fresh kubeadm join)', [NET], NET],
  ['two errors: bracketed, comma separated', ['PLEG is not healthy: x', NET], `[PLEG is not healthy: x, ${NET}]`],
  ['duplicates dropped', ['a', 'a'], 'a'],
  ['duplicates dropped among several', ['a', 'b', 'a'], '[a, b]'],
];

for (const [name, errors, message] of ROWS) test(name, () => assert.equal(aggregateMessage(errors), message));
