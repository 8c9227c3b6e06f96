export { PodManager } from './pod-manager.js';
