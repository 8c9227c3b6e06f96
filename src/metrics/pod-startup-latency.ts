/**
 * Upstream pkg/kubelet/util/pod_startup_latency_tracker.go, reduced to what we observe: the image
 * pulls of a pod (first start, last finish) and the moment its status first turns Running. The
 * SLI excludes the pull window, because pull time depends on the registry, not on the kubelet.
 */
import { metrics } from './index.js';

interface PullWindow {
  firstStartedMs: number;
  lastFinishedMs: number;
}

const pulls = new Map<string, PullWindow>();
/** upstream: the first pod with its own network started by this kubelet is labelled apart (CNI start-up). */
let sawNetworkPod = false;

/** The image manager (src/images) calls this around every real pull (not for images already present). */
export function recordImagePull(podUid: string, startedMs: number, finishedMs: number): void {
  const w = pulls.get(podUid);
  if (!w) pulls.set(podUid, { firstStartedMs: startedMs, lastFinishedMs: finishedMs });
  else {
    w.firstStartedMs = Math.min(w.firstStartedMs, startedMs);
    w.lastFinishedMs = Math.max(w.lastFinishedMs, finishedMs);
  }
}

/**
 * The pod is Running for the first time: observe kubelet_pod_start_sli_duration_seconds and
 * kubelet_pod_start_total_duration_seconds from its creation time. Returns the two values (s).
 */
export function observePodRunning(
  podUid: string,
  createdMs: number,
  nowMs: number,
  hostNetwork: boolean,
): { total: number; sli: number } | undefined {
  const w = pulls.get(podUid);
  pulls.delete(podUid);
  // A pod created before this agent started (found running, or adopted, after a restart) did not
  // start under our watch: its creation → Running time would measure the outage, not a start.
  if (createdMs < performance.timeOrigin) return undefined;
  const total = Math.max(0, nowMs - createdMs) / 1000;
  const pulling = w ? Math.max(0, w.lastFinishedMs - w.firstStartedMs) / 1000 : 0;
  const sli = Math.max(0, total - pulling);
  const first = !hostNetwork && !sawNetworkPod;
  if (!hostNetwork) sawNetworkPod = true;
  const labels = { first_with_network: String(first) };
  metrics.podStartTotalDuration.observe(labels, total);
  metrics.podStartSLIDuration.observe(labels, sli);
  return { total, sli };
}

/** A pod that will not be observed Running (deleted first): drop what was recorded for it. */
export function forgetPod(podUid: string): void {
  pulls.delete(podUid);
}
