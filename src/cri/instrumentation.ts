/**
 * Upstream pkg/kubelet/kuberuntime/instrumented_services.go, done once for every unary CRI call
 * at the channel: kubelet_runtime_operations_total, _duration_seconds and _errors_total, labelled
 * with upstream's operation names (`list_containers`, `run_podsandbox`, ...).
 */
import { metrics } from '../metrics/index.js';

/** The names upstream gives that are not the plain snake_case of the CRI method. */
const IRREGULAR: Readonly<Record<string, string>> = {
  RunPodSandbox: 'run_podsandbox',
  StopPodSandbox: 'stop_podsandbox',
  RemovePodSandbox: 'remove_podsandbox',
  PodSandboxStatus: 'podsandbox_status',
  ListPodSandbox: 'list_podsandbox',
  PodSandboxStats: 'podsandbox_stats',
  ListPodSandboxStats: 'list_podsandbox_stats',
  UpdateContainerResources: 'update_container',
};

/** The operation_type label for a CRI method name (`ListContainers` → `list_containers`). */
export function operationType(method: string): string {
  return IRREGULAR[method] ?? method.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** Counts one finished call (upstream recordOperation + recordError). */
export function recordOperation(method: string, startedMs: number, failed: boolean): void {
  const operation_type = operationType(method);
  metrics.runtimeOperations.inc({ operation_type });
  metrics.runtimeOperationsDuration.observe({ operation_type }, (Date.now() - startedMs) / 1000);
  if (failed) metrics.runtimeOperationsErrors.inc({ operation_type });
}

/** Wraps a call's promise so it is counted however it ends. */
export function instrumented<T>(method: string, call: () => Promise<T>): Promise<T> {
  const started = Date.now();
  return call().then(
    (v) => {
      recordOperation(method, started, false);
      return v;
    },
    (err: unknown) => {
      recordOperation(method, started, true);
      throw err;
    },
  );
}
