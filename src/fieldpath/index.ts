/**
 * Field paths (upstream pkg/fieldpath and third_party/forked/golang/expansion): `$(VAR)`
 * expansion, downward API fieldRef and resourceFieldRef values. Below both the runtime manager
 * (container env, command, args) and the volume manager (downwardAPI files, subPathExpr).
 */
export { expand, mappingFor } from './expansion.js';
export { EnvError, fieldRefValue, isSubscriptedFieldPath, type FieldPathContext } from './fieldpath.js';
export {
  containerResourceValue,
  resourceFieldRefValue,
  type NodeAllocatable,
  type ResourceFieldSelector,
} from './resource.js';
