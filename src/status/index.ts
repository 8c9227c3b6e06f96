export type { StatusManager, PodStatusProvider } from './types.js';
export { createStatusManager } from './manager.js';
export { generateAPIPodStatus, getPhase, type GenerateInput } from './generate.js';
export { podQOSClass } from './qos.js';
