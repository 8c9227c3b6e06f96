/** Container logs: reader, confinement helpers and rotation. */
export type { ContainerLogManager, ContainerLogsDeps, LogOptions, LogRotationRuntime } from './types.js';
export { createLogRotation, rotationSuffix } from './rotation.js';
export { parseCriLogLine } from './cri-format.js';
export { ContainerLogsError } from './paths.js';
