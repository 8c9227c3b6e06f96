export type { EventRecorder, EventSink, EventType, KubeEvent, ObjectReference } from './types.js';
export { Recorder, createRecorder } from './recorder.js';
export { containerReference, podReference } from './references.js';
export { ApiserverEventSink, createApiserverSink, type ApiserverSinkOptions } from './apiserver-sink.js';
