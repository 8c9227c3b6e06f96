/**
 * Every error kubelet-ts raises on purpose is a KubeletError with a stable code, so that logs,
 * tests and operators can match on the code rather than on message text. Wrapping keeps `cause`.
 * The table in ERROR_CODES documents each code (docs/errors.md is generated from it);
 * test/errors.test.ts checks that every code is raised somewhere in src/ and every code raised is
 * documented, and lists each plain Error the rule below allows.
 *
 * A plain Error (TypeError, RangeError) is thrown only for a programming error: a broken invariant
 * of kubelet-ts's own code or files, or a function called against its contract by our own code
 * (a source started twice, options that config validation already rules out, a RelistDiffer used
 * after close). The one other plain Error is an operating-system error in Node's own shape
 * (NodeJS.ErrnoException with `code` ENOENT, ENOSPC, ...), passed on as the OS gave it; fswatch's
 * watchError builds that shape for the native watcher so both twins fail alike.
 */
export const ERROR_CODES = {
  KTS_ERR_CONFIG: 'A configuration file field or command-line flag value is invalid.',
  KTS_ERR_FLAG: 'The command line is malformed: an unknown flag, a flag without its value, or a stray argument.',
  KTS_ERR_MANIFEST:
    'A pod manifest could not be parsed or failed validation, or a quantity in a pod spec is not a valid quantity.',
  KTS_ERR_CRI: 'A call to the container runtime (CRI) failed.',
  KTS_ERR_CRI_TIMEOUT: "A CRI call, or a connection to the runtime's streaming server, exceeded its deadline.",
  KTS_ERR_CRI_UNAVAILABLE: 'The container runtime socket could not be reached.',
  KTS_ERR_CRI_NOT_FOUND: 'The runtime does not know the container, sandbox or image named.',
  KTS_ERR_CRI_UNIMPLEMENTED: 'The runtime does not implement this CRI method.',
  KTS_ERR_CRI_REPLY:
    'The runtime returned a reply the agent cannot use, or broke the CRI contract (containers still running after a successful KillPod).',
  KTS_ERR_RUNTIME_NOT_READY:
    'The container runtime reports it is not ready, or its Status call failed; pod work waits.',
  KTS_ERR_NETWORK_NOT_READY:
    "The runtime's network is not ready (NetworkReady=false: no CNI config yet); pods on the pod network wait, hostNetwork pods run.",
  KTS_ERR_IMAGE_PULL: 'An image could not be pulled (ErrImagePull).',
  KTS_ERR_IMAGE_NEVER_PULL: 'The image is absent and imagePullPolicy is Never (ErrImageNeverPull).',
  KTS_ERR_CREATE_CONTAINER: 'A container could not be created or started.',
  KTS_ERR_CONTAINER_CONFIG:
    "A container's configuration could not be built from its pod: env, resources, downward API (CreateContainerConfigError).",
  KTS_ERR_VOLUME: 'A pod volume could not be set up, mounted or torn down.',
  KTS_ERR_CSI: 'A call to a CSI driver (its Node or Identity service) failed, or the driver could not be reached.',
  KTS_ERR_CSI_TIMEOUT: 'A call to a CSI driver exceeded its deadline.',
  KTS_ERR_PLUGIN_REGISTRATION:
    'A plugin socket in <root-dir>/plugins_registry could not be registered: GetInfo failed or timed out, or the plugin offered an unknown type, no supported version, or no name.',
  KTS_ERR_DEVICE_PLUGIN:
    'A device plugin could not be registered (unsupported version, invalid resource name, its socket not serving) or a call to it failed or exceeded its deadline (GetDevicePluginOptions, Allocate, GetPreferredAllocation, PreStartContainer).',
  KTS_ERR_DEVICE_ALLOCATION:
    "A container's device plugin resources could not be allocated: too few healthy devices, an unregistered or stopped plugin, a changed request (the pod is refused with UnexpectedAdmissionError).",
  KTS_ERR_DEVICE_CHECKPOINT:
    'The device manager checkpoint (<root-dir>/device-plugins/kubelet_internal_checkpoint) is unreadable, not the expected JSON, or fails its checksum: the manager starts without the allocations it held.',
  KTS_ERR_POD_RESOURCES:
    'The pod resources API (<root-dir>/pod-resources/kubelet.sock) could not listen: the socket path is not absolute, too long for a unix socket, or its directory cannot be made or written.',
  KTS_ERR_SUBPATH:
    'A volumeMount subPath (or expanded subPathExpr) is absolute, has a ".." component, resolves outside its volume through a symlink, or changed to a symlink while it was opened: it is not mounted and the container waits (CreateContainerConfigError).',
  KTS_ERR_HOOK: 'A lifecycle hook (postStart, preStop) failed.',
  KTS_ERR_POD_ENDPOINT:
    "A request to a pod's own endpoint (an httpGet or grpc probe, an httpGet hook) failed or got an unreadable reply.",
  KTS_ERR_POD_KILL_TIMEOUT: 'A pod the kubelet stopped on its own (eviction, node shutdown) did not terminate in time.',
  KTS_ERR_SANDBOX: 'A pod sandbox could not be created or inspected.',
  KTS_ERR_NATIVE: 'The native addon exists but failed to load, or one of its watchers stopped.',
  KTS_ERR_HTTP:
    "A request to one of the agent's HTTP servers was refused or cut short: a rejected credential (401), a client gone mid-reply.",
  KTS_ERR_MANIFEST_URL: 'The manifest URL (staticPodURL) could not be read: connection, HTTP status or size bound.',
  KTS_ERR_IMAGE_GC: 'Image garbage collection could not free the space required (ImageGCFailed).',
  KTS_ERR_LOCK_FILE: 'The lock file (--lock-file) could not be taken or was lost.',
  KTS_ERR_CONTAINER_LOGS:
    "A container log request was invalid, named no known container or log, or tried to leave the pod's log directory; or a log line is not in the CRI log format.",
  KTS_ERR_KUBECONFIG: 'The --kubeconfig file could not be loaded (missing, malformed, no current cluster).',
  KTS_ERR_API: 'A request to the kube-apiserver failed (connection, timeout or an error status).',
  KTS_ERR_API_LIMIT:
    "A kube-apiserver answer went over one of the API client's bounds (body size, object or watch line size, deadline, LIST pages, credential plugin output): the request was cut off and refused.",
  KTS_ERR_POD_IDENTITY:
    "A pod's UID, name, namespace or a container name is not valid (from a manifest, a manifest URL or the apiserver): the pod is refused before any path is built from it.",
  KTS_ERR_UNSAFE_PATH:
    'A path component taken from a pod (UID, name, namespace, container name) is empty, "." or "..", or holds "/", "\\", NUL or a control character: the path is not built.',
  KTS_ERR_CERTIFICATE:
    'A node certificate could not be obtained or renewed: the certificate signing request was denied, failed or not issued in time, or the issued certificate or the files it is stored in are unusable.',
  KTS_ERR_DBUS_PROTOCOL:
    'A D-Bus message could not be marshalled or did not parse: bad signature, wrong length, bad padding, a bound crossed (128 MiB message, 64 MiB array, nesting depth).',
  KTS_ERR_DBUS_CONNECTION:
    'A D-Bus socket could not be reached or authenticated, the connection was lost or closed, or a call got no reply in time.',
  KTS_ERR_DBUS_CALL: 'A D-Bus method call was answered with an error (the D-Bus error name and message are kept).',
  KTS_ERR_SYSTEMD_JOB:
    'A systemd job (start or stop of a unit, through D-Bus) ended with a result other than "done", or did not end in time.',
  KTS_ERR_SYSTEMD_UNAVAILABLE:
    "cgroupDriver is systemd (configured, or reported by the runtime's RuntimeConfig) but systemd's manager does not answer on D-Bus (/run/systemd/private, the system bus): the agent does not start.",
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

/**
 * A KubeletError class whose code is fixed, for errors a module raises and its callers tell apart
 * by class: `export class EnvError extends kubeletErrorClass('KTS_ERR_CONTAINER_CONFIG') {}`.
 */
export function kubeletErrorClass(code: ErrorCode) {
  return class extends KubeletError {
    constructor(message: string, options?: { cause?: unknown }) {
      super(code, message, options);
    }
  };
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
  constructor(code: ErrorCode, method: string, message: string, options: { grpcCode?: number; cause?: unknown } = {}) {
    super(code, `CRI ${method}: ${message}`, 'cause' in options ? { cause: options.cause } : undefined);
    this.method = method;
    this.grpcCode = options.grpcCode;
  }
}

/** A failed CSI driver call; `grpcCode` is the gRPC status code when the driver answered. */
export class CsiError extends KubeletError {
  readonly method: string;
  readonly grpcCode: number | undefined;
  constructor(code: ErrorCode, method: string, message: string, options: { grpcCode?: number; cause?: unknown } = {}) {
    super(code, `CSI ${method}: ${message}`, 'cause' in options ? { cause: options.cause } : undefined);
    this.method = method;
    this.grpcCode = options.grpcCode;
  }
}

/** A plugin registration socket that was refused (plugin watcher). */
export class PluginRegistrationError extends kubeletErrorClass('KTS_ERR_PLUGIN_REGISTRATION') {}
/** The pod resources API server could not listen on its socket. */
export class PodResourcesError extends kubeletErrorClass('KTS_ERR_POD_RESOURCES') {}

/** Device plugin registration or a call to a plugin failed (the message is upstream's where it has one). */
export class DevicePluginError extends kubeletErrorClass('KTS_ERR_DEVICE_PLUGIN') {}

/** Devices for a container could not be allocated; the message is upstream's text. */
export class DeviceAllocationError extends kubeletErrorClass('KTS_ERR_DEVICE_ALLOCATION') {}

/** The device manager checkpoint could not be read or failed its checksum. */
export class DeviceCheckpointError extends kubeletErrorClass('KTS_ERR_DEVICE_CHECKPOINT') {}

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
 * An apiserver answer over one of the client's bounds (src/apiclient/limits.ts): `limit` names
 * the bound, `path` the URL path. The request was aborted when the bound was crossed.
 */
export class ApiLimitError extends KubeletError {
  constructor(
    readonly path: string,
    readonly limit: string,
    what: string,
    options?: { cause?: unknown },
  ) {
    super('KTS_ERR_API_LIMIT', `apiserver ${what} for ${path} exceeded ${limit}; refused`, options);
  }
}

/** A pod whose identity (UID, name, namespace, container names) is not valid; `field` names what. */
export class PodIdentityError extends KubeletError {
  readonly field: string;
  constructor(pod: string, field: string, message: string) {
    super('KTS_ERR_POD_IDENTITY', `pod ${pod}: ${field}: ${message}`);
    this.field = field;
  }
}

/** A value that would not be exactly one path component; nothing was built from it. */
export class UnsafePathError extends KubeletError {
  constructor(what: string, value: string) {
    super(
      'KTS_ERR_UNSAFE_PATH',
      `refusing to build a path from ${what} ${JSON.stringify(value)}: it must be one path component (not empty, ".", "..", and no "/", "\\", NUL or control characters)`,
    );
  }
}

/**
 * A pod volume that cannot be set up (unsupported type, a file mode or path out of bounds, a
 * tmpfs that will not mount); the container waits with CreateContainerConfigError.
 */
export class VolumeError extends KubeletError {
  constructor(message: string, options?: { cause?: unknown }, code: ErrorCode = 'KTS_ERR_VOLUME') {
    super(code, message, options);
  }
}

/** A subPath that would leave its volume, or could not be opened safely inside it; nothing was mounted. */
export class SubPathError extends VolumeError {
  constructor(mount: string, subPath: string, problem: string, options?: { cause?: unknown }) {
    super(`volumeMount ${mount}: subPath ${JSON.stringify(subPath)} ${problem}`, options, 'KTS_ERR_SUBPATH');
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** TLS bootstrap and certificate rotation (src/certificate): what was asked for and why it failed. */
export class CertificateError extends KubeletError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('KTS_ERR_CERTIFICATE', message, options);
  }
}
