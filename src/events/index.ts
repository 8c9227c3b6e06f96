export type { EventRecorder, EventSink, EventType, KubeEvent, ObjectReference } from './types.js';
export { Recorder, createRecorder } from './recorder.js';
export { containerEventRef, podEventRef } from './refs.js';
export { ApiserverEventSink, createApiserverSink, type ApiserverSinkOptions } from './apiserver-sink.js';
