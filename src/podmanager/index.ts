export { PodManager, podFullName } from './pod-manager.js';
