/**
 * Container logs (upstream pkg/kubelet/kuberuntime/logs and pkg/kubelet/logs): the CRI log file
 * format, reading with the PodLogOptions of `GET /containerLogs`, and rotation through CRI
 * ReopenContainerLog.
 */
import type { Pod } from '../api/types.js';
import type { RuntimeService } from '../cri/types.js';

/** core/v1 PodLogOptions as the kubelet applies them (sinceSeconds already turned into sinceTime). */
export interface LogOptions {
  follow: boolean;
  /** Last N lines of the file; undefined = all. */
  tailLines?: number | undefined;
  /** Stop after this many bytes of output. */
  limitBytes?: number | undefined;
  /** Only lines logged at or after this time. */
  sinceTime?: Date | undefined;
  /** Prefix each line with its RFC3339Nano timestamp. */
  timestamps: boolean;
  /** The previous (dead) instance of the container instead of the current one. */
  previous: boolean;
}

export type LogStream = 'stdout' | 'stderr';

/** One line of a CRI log file: `<RFC3339Nano> <stream> <P|F>[:tags] <content>`. */
export interface CriLogLine {
  /** The timestamp as written (RFC3339Nano), echoed with timestamps=true. */
  timestamp: string;
  /** Milliseconds since the epoch (sinceTime filtering). */
  timeMs: number;
  stream: LogStream;
  /** A partial line: the next line continues it. */
  partial: boolean;
  content: Buffer;
}

/** What the log handler needs from the kubelet. */
export interface ContainerLogsDeps {
  /** upstream --pod-logs-dir. */
  podLogsDir: string;
  /** The desired pod named (its UID locates the log directory). */
  getPod(namespace: string, name: string): Pod | undefined;
  /** Whether the container's newest instance is running: following stops when it is not. */
  isContainerRunning(pod: Pod, containerName: string): Promise<boolean>;
  /** How often a follower looks for new lines (default 200 ms). */
  followPollMs?: number;
}

/** The CRI calls rotation uses. */
export type LogRotationRuntime = Pick<RuntimeService, 'listContainers' | 'containerStatus'> & {
  reopenContainerLog(containerId: string): Promise<void>;
};

/** upstream ContainerLogManager. */
export interface ContainerLogManager {
  start(): void;
  stop(): void;
  /** One pass over running containers (public for tests). */
  rotateOnce(): Promise<void>;
}
