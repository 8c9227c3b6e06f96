/**
 * The subPath hot path's contract, which the native addon (native/src/subpath.cc) and its
 * TypeScript twin (subpath-bind-ts.ts) both meet; src/cmd/hot-paths.ts picks one.
 *
 * bindSubPath opens `components` below `base` one at a time without following a symlink at any
 * level (openat(O_PATH | O_NOFOLLOW) in the addon; `/proc/self/fd/<dir>/<name>` opens with
 * O_NOFOLLOW in the twin, which the kernel resolves the same way), creating missing directories
 * with `dirMode`, then bind-mounts the opened file itself (through its `/proc/.../fd/<fd>` magic
 * link, never a path that could have changed) onto `target`, created as a directory or an empty
 * file to match, and checks the mount shows the very inode it opened.
 */

export interface SubPathBindRequest {
  /** The volume root, already resolved (trusted: the caller realpath()s it). */
  base: string;
  /** Single names below base (no '/', not '', '.' or '..'); empty binds base itself. */
  components: readonly string[];
  /** Kubelet-owned mount point; its parent exists and nothing is mounted on it. */
  target: string;
  /** Mode of directories created on the way (upstream: the volume root's). */
  dirMode: number;
}

export interface SubPathBindResult {
  isDir: boolean;
}

/** Where a bind failed, for errors both implementations report alike. */
export type SubPathStep = 'open' | 'mkdir' | 'stat' | 'target' | 'mount' | 'verify';

/**
 * A failed bind: Node's errno shape (`code` ELOOP, ENOTDIR, ...) plus the step and the index of
 * the component that failed (-1 when none did). `verify` fails with ESTALE. A failed `mount`
 * carries mount(2)'s errno from the addon; the twin sees only mount(8)'s exit status and reports
 * EPERM, with mount's own message as the cause.
 */
export interface SubPathBindFailure extends Error {
  code: string;
  step: SubPathStep;
  component: number;
}

export type BindSubPath = (req: SubPathBindRequest) => Promise<SubPathBindResult>;

/** The failure both twins throw. */
export function subPathBindFailure(
  step: SubPathStep,
  code: string,
  component = -1,
  cause?: unknown,
): SubPathBindFailure {
  const err = new Error(`subPath ${step}${component >= 0 ? ` of component ${component}` : ''}: ${code}`, {
    cause,
  }) as SubPathBindFailure;
  err.code = code;
  err.step = step;
  err.component = component;
  return err;
}

export function isSubPathBindFailure(err: unknown): err is SubPathBindFailure {
  return (
    err instanceof Error &&
    typeof (err as SubPathBindFailure).step === 'string' &&
    typeof (err as SubPathBindFailure).code === 'string'
  );
}
