/**
 * What an OOM kill means for the node's pods (upstream's OOM watcher and cAdvisor's
 * container_oom_events_total): an OOMKilling event on the pod (SystemOOM on the Node when the
 * victim is outside every pod), a log line, and a count per container for /metrics/cadvisor.
 */
import type { Pod } from '../api/types.js';
import { podName, podNamespace, klogRef } from '../api/pod.js';
import type { EventRecorder } from '../events/types.js';
import { containerEventRef, podEventRef } from '../events/refs.js';
import { metrics } from '../metrics/index.js';
import type { OomCount } from '../stats/cadvisor-metrics.js';
import { log } from '../util/log.js';
import type { OomEvent } from './types.js';

export interface OomPodView {
  getPodByUID(uid: string): Pod | undefined;
  /** The name of a pod's container by its runtime id, when known. */
  containerName(podUid: string, containerId: string | undefined): string | undefined;
}

export interface OomPodEvents {
  onEvent(e: OomEvent): void;
  /** Kills counted so far, one entry per pod container. */
  counts(): OomCount[];
}

export function createOomPodEvents(deps: {
  pods: OomPodView;
  recorder: EventRecorder;
  nodeName: string;
}): OomPodEvents {
  const counts = new Map<string, OomCount>();
  const onEvent = (e: OomEvent): void => {
    if (e.kernelTsUs !== undefined)
      metrics.oomKillToEvent.observe(Math.max(0, Number(process.hrtime.bigint() / 1000n) - e.kernelTsUs) / 1e6);
    if (!e.podUid) return systemOom(e, deps);
    const pod = deps.pods.getPodByUID(e.podUid);
    const name = deps.pods.containerName(e.podUid, e.containerId) ?? '';
    log('oom').warn(
      {
        pod: pod ? klogRef(pod.metadata) : e.podUid,
        container: name,
        pid: e.pid,
        comm: e.comm,
        source: e.source,
      },
      'Container OOM kill',
    );
    if (!pod) return;
    const key = `${e.podUid}/${name}`;
    counts.set(key, {
      podUid: e.podUid,
      namespace: podNamespace(pod),
      pod: podName(pod),
      container: name,
      id: e.memcg,
      count: (counts.get(key)?.count ?? 0) + 1,
    });
    deps.recorder.event(
      name ? containerEventRef(pod, name) : podEventRef(pod),
      'Warning',
      'OOMKilling',
      `Memory cgroup out of memory: Killed process ${e.pid ?? '?'} (${e.comm ?? 'unknown'}) in container ${name || e.containerId || '?'}`,
    );
  };
  return { onEvent, counts: () => [...counts.values()] };
}

function systemOom(e: OomEvent, deps: { recorder: EventRecorder; nodeName: string }): void {
  deps.recorder.event(
    { kind: 'Node', name: deps.nodeName, uid: deps.nodeName },
    'Warning',
    'SystemOOM',
    `System OOM encountered, victim process: ${e.comm ?? 'unknown'}, pid: ${e.pid ?? 0}`,
  );
  log('oom').warn({ memcg: e.memcg, pid: e.pid, comm: e.comm, source: e.source }, 'System OOM');
}
