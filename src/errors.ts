/**
 * Every error kubelet-ts raises on purpose is a KubeletError with a stable code, so that logs,
 * tests and operators can match on the code rather than on message text. Wrapping keeps `cause`.
 * The table in ERROR_CODES documents each code; test/errors.test.ts checks it is complete.
 */
export const ERROR_CODES = {
  KTS_ERR_CONFIG: 'A configuration file field or command-line flag is invalid.',
  KTS_ERR_FLAG: 'An unknown or malformed command-line flag.',
  KTS_ERR_MANIFEST: 'A pod manifest could not be parsed or failed validation.',
  KTS_ERR_CRI: 'A call to the container runtime (CRI) failed.',
  KTS_ERR_CRI_TIMEOUT: 'A CRI call exceeded its deadline.',
  KTS_ERR_CRI_UNAVAILABLE: 'The container runtime socket could not be reached.',
  KTS_ERR_CRI_NOT_FOUND: 'The runtime does not know the container, sandbox or image named.',
  KTS_ERR_CRI_UNIMPLEMENTED: 'The runtime does not implement this CRI method.',
  KTS_ERR_CRI_REPLY: 'The runtime returned a reply the agent cannot use.',
  KTS_ERR_RUNTIME_NOT_READY: 'The container runtime reports it is not ready.',
  KTS_ERR_IMAGE_PULL: 'An image could not be pulled (ErrImagePull).',
  KTS_ERR_IMAGE_NEVER_PULL: 'The image is absent and imagePullPolicy is Never (ErrImageNeverPull).',
  KTS_ERR_CREATE_CONTAINER: 'A container could not be created or started.',
  KTS_ERR_SANDBOX: 'A pod sandbox could not be created or inspected.',
  KTS_ERR_NATIVE: 'The native addon failed in a way that is not "not built".',
  KTS_ERR_HTTP: 'A request to one of the agent\'s HTTP servers was malformed.',
  KTS_ERR_MANIFEST_URL: 'The manifest URL (staticPodURL) could not be read: connection, HTTP status or size bound.',
  KTS_ERR_IMAGE_GC: 'Image garbage collection could not free the space required (ImageGCFailed).',
  KTS_ERR_LOCK_FILE: 'The lock file (--lock-file) could not be taken or was lost.',
  KTS_ERR_CONTAINER_LOGS: 'A container log request was invalid, named no known container or log, or tried to leave the pod\'s log directory.',
  KTS_ERR_KUBECONFIG: 'The --kubeconfig file could not be loaded (missing, malformed, no current cluster).',
  KTS_ERR_API: 'A request to the kube-apiserver failed (connection, timeout or an error status).',
  KTS_ERR_VOLUME: 'A pod volume could not be set up: unknown type, bad mode or path, a mount that failed (CreateContainerConfigError).',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class KubeletError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A bad KubeletConfiguration field or flag; `problems` lists every violation found at once. */
export class ConfigError extends KubeletError {
  readonly problems: string[];
  constructor(problems: string[], code: ErrorCode = 'KTS_ERR_CONFIG') {
    super(code, problems.length === 1 ? problems[0]! : `${problems.length} problems:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}

/** A manifest that cannot become a pod. `file` and `field` say where to look. */
export class ManifestError extends KubeletError {
  readonly file: string;
  readonly field: string | undefined;
  constructor(file: string, message: string, field?: string, options?: { cause?: unknown }) {
    super('KTS_ERR_MANIFEST', `${file}: ${field ? `${field}: ` : ''}${message}`, options);
    this.file = file;
    this.field = field;
  }
}

/** A failed CRI call; `grpcCode` is the gRPC status code when the runtime answered. */
export class CriError extends KubeletError {
  readonly method: string;
  readonly grpcCode: number | undefined;
  constructor(code: ErrorCode, method: string, message: string, grpcCode?: number, options?: { cause?: unknown }) {
    super(code, `CRI ${method}: ${message}`, options);
    this.method = method;
    this.grpcCode = grpcCode;
  }
}

/** Errors from starting a container that the pod status reports as a waiting reason. */
export class ContainerStartError extends KubeletError {
  /** Upstream waiting reason: ErrImagePull, ImagePullBackOff, CreateContainerError, ... */
  readonly reason: string;
  constructor(code: ErrorCode, reason: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.reason = reason;
  }
}

/** A failed kube-apiserver request; `statusCode` 0 = no HTTP answer (connection, timeout). */
export class ApiError extends KubeletError {
  readonly statusCode: number;
  /** The Status reason (NotFound, Conflict, AlreadyExists, Expired, ...) or ConnectionFailed. */
  readonly reason: string;
  constructor(statusCode: number, reason: string, message: string, options?: { cause?: unknown }) {
    super('KTS_ERR_API', message, options);
    this.statusCode = statusCode;
    this.reason = reason;
  }
}

/**
 * A pod volume that cannot be set up (unsupported type, a file mode or path out of bounds, a
 * tmpfs that will not mount); the container waits with CreateContainerConfigError.
 */
export class VolumeError extends KubeletError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('KTS_ERR_VOLUME', message, options);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
