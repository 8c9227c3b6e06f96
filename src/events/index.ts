export type { EventRecorder, EventSink, EventType, KubeEvent, ObjectReference } from './types.js';
export { Recorder, createRecorder } from './recorder.js';
