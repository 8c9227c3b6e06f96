/**
 * GET /metrics/cadvisor: cAdvisor's container_* families and label set (container, id, image,
 * name, namespace, pod) for the root cgroup, every pod cgroup and every container, from the same
 * pass as the Summary API. container_oom_events_total comes from the OOM watcher.
 */
import { Exposition, nsToSeconds, type Labels } from './exposition.js';
import type { CgroupSample, StatsSnapshot } from './types.js';

/** OOM kills per container (pod UID + container name), as the OOM watcher counted them. */
export interface OomCount {
  podUid: string;
  namespace: string;
  pod: string;
  container: string;
  id: string;
  count: number;
}

const FAMILIES: Array<[name: string, type: 'counter' | 'gauge', help: string]> = [
  ['container_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed in seconds.'],
  ['container_cpu_user_seconds_total', 'counter', 'Cumulative user cpu time consumed in seconds.'],
  ['container_cpu_system_seconds_total', 'counter', 'Cumulative system cpu time consumed in seconds.'],
  ['container_cpu_cfs_periods_total', 'counter', 'Number of elapsed enforcement period intervals.'],
  ['container_cpu_cfs_throttled_periods_total', 'counter', 'Number of throttled period intervals.'],
  ['container_cpu_cfs_throttled_seconds_total', 'counter', 'Total time duration the container has been throttled.'],
  [
    'container_memory_usage_bytes',
    'gauge',
    'Current memory usage in bytes, including all memory regardless of when it was accessed',
  ],
  ['container_memory_working_set_bytes', 'gauge', 'Current working set in bytes.'],
  ['container_memory_rss', 'gauge', 'Size of RSS in bytes.'],
  ['container_memory_cache', 'gauge', 'Number of bytes of page cache memory.'],
  // cAdvisor types this one a counter without _total; promtool's lint refuses that, so gauge here.
  ['container_memory_failcnt', 'gauge', 'Number of memory usage hits limits'],
  ['container_spec_memory_limit_bytes', 'gauge', 'Memory limit for the container.'],
  ['container_oom_events_total', 'counter', 'Count of out of memory events observed for the container'],
  ['container_fs_reads_bytes_total', 'counter', 'Cumulative count of bytes read'],
  ['container_fs_writes_bytes_total', 'counter', 'Cumulative count of bytes written'],
  ['container_network_receive_bytes_total', 'counter', 'Cumulative count of bytes received'],
  ['container_network_receive_errors_total', 'counter', 'Cumulative count of errors encountered while receiving'],
  ['container_network_transmit_bytes_total', 'counter', 'Cumulative count of bytes transmitted'],
  ['container_network_transmit_errors_total', 'counter', 'Cumulative count of errors encountered while transmitting'],
  ['container_start_time_seconds', 'gauge', 'Start time of the container since unix epoch in seconds.'],
  ['container_last_seen', 'gauge', 'Last time a container was seen by the exporter'],
  ['machine_memory_bytes', 'gauge', 'Amount of memory installed on the machine.'],
];

function cgroupSamples(e: Exposition, l: Labels, s: CgroupSample, ts: number): void {
  const put = (name: string, v: bigint | undefined, extra: Labels = {}) => {
    if (v !== undefined) e.sample(name, { ...l, ...extra }, v, ts);
  };
  const sec = (name: string, v: bigint | undefined, extra: Labels = {}) => {
    if (v !== undefined) e.sample(name, { ...l, ...extra }, nsToSeconds(v), ts);
  };
  sec('container_cpu_usage_seconds_total', s.cpu.usageCoreNanoSeconds, { cpu: 'total' });
  sec('container_cpu_user_seconds_total', s.cpuUserNs);
  sec('container_cpu_system_seconds_total', s.cpuSystemNs);
  put('container_memory_usage_bytes', s.memory.usageBytes);
  put('container_memory_working_set_bytes', s.memory.workingSetBytes);
  put('container_memory_rss', s.memory.rssBytes);
  put('container_memory_cache', s.memoryCache);
  put('container_memory_failcnt', s.memoryFailcnt);
  e.sample('container_spec_memory_limit_bytes', l, s.memoryLimit ?? 0n, ts);
  put('container_fs_reads_bytes_total', s.ioReadBytes, { device: '' });
  put('container_fs_writes_bytes_total', s.ioWriteBytes, { device: '' });
}

export function cadvisorMetrics(s: StatsSnapshot, oom: readonly OomCount[], memoryCapacity: bigint): string {
  const e = new Exposition();
  for (const [name, type, help] of FAMILIES) e.family(name, type, help);
  const ts = s.time.getTime();
  const lastSeen = Math.floor(ts / 1000);
  const row = (l: Labels, sample: CgroupSample, start?: Date) => {
    cgroupSamples(e, l, sample, ts);
    if (start) e.sample('container_start_time_seconds', l, start.getTime() / 1000, ts);
    e.sample('container_last_seen', l, lastSeen, ts);
  };
  row({ container: '', id: '/', image: '', name: '', namespace: '', pod: '' }, s.node, s.node.startTime);
  const live = new Map<string, Labels>();
  for (const p of s.pods) {
    const pl = { container: '', id: p.cgroup, image: '', name: '', namespace: p.namespace, pod: p.name };
    row(pl, p, p.startTime);
    for (const i of p.network?.interfaces ?? []) {
      const il = { ...pl, interface: i.name };
      if (i.rxBytes !== undefined) e.sample('container_network_receive_bytes_total', il, i.rxBytes, ts);
      if (i.rxErrors !== undefined) e.sample('container_network_receive_errors_total', il, i.rxErrors, ts);
      if (i.txBytes !== undefined) e.sample('container_network_transmit_bytes_total', il, i.txBytes, ts);
      if (i.txErrors !== undefined) e.sample('container_network_transmit_errors_total', il, i.txErrors, ts);
    }
    for (const c of p.containers) {
      const cl = { container: c.name, id: c.cgroup, image: c.image, name: c.id, namespace: p.namespace, pod: p.name };
      live.set(`${p.uid}/${c.name}`, cl);
      row(cl, c, c.startTime);
    }
  }
  // Every container (live or not) the OOM watcher counted a kill for; live ones get a 0 otherwise.
  const counted = new Set<string>();
  for (const o of oom) {
    const key = `${o.podUid}/${o.container}`;
    counted.add(key);
    const l = live.get(key) ?? {
      container: o.container,
      id: o.id,
      image: '',
      name: o.id.slice(o.id.lastIndexOf('/') + 1),
      namespace: o.namespace,
      pod: o.pod,
    };
    e.sample('container_oom_events_total', l, o.count, ts);
  }
  for (const [key, l] of live) if (!counted.has(key)) e.sample('container_oom_events_total', l, 0, ts);
  e.sample('machine_memory_bytes', {}, memoryCapacity);
  return e.text();
}
