/**
 * The CRI ContainerConfig for one container (upstream kuberuntime_container.go
 * generateContainerConfig + generateLinuxContainerConfig): metadata with the restart count as
 * attempt, the image the puller resolved, expanded command/args/env, mounts, labels and
 * annotations, the log path, and Linux resources and security context. The volumes are already
 * set up (the volume manager, before SyncPod): it only binds them, preparing subPaths
 * (container-mounts.ts). Any problem here is a configuration problem of the pod:
 * ContainerConfigError → CreateContainerConfigError.
 */
import type { Container, Pod } from '../api/types.js';
import type { ContainerConfig, Device, KeyValue, Mount, NamespaceOption, UserNamespace } from '../cri/types.js';
import type { DeviceRunContainerOptions } from '../devicemanager/index.js';
import { kubeletErrorClass, VolumeError } from '../errors.js';
import { EnvError, resourceFieldRefValue, type NodeAllocatable } from '../fieldpath/index.js';
import type { PodVolumes, RuntimeVolumes } from '../volume/index.js';
import { makeMounts } from './container-mounts.js';
import type { HostsFileInput } from './hosts-file.js';
import { expandCommandAndArgs, makeEnvironmentVariables, type EnvContext } from './env.js';
import { newContainerAnnotations, newContainerLabels } from './labels.js';
import { linuxContainerResources } from './resources.js';
import { ResourceError } from '../util/pod-resources.js';
import { namespacesForPod } from './sandbox-config.js';
import { containerIdentity, SecurityContextError } from './security-context.js';
import { containerLogPath } from '../util/pod-identity.js';
import {
  containerSecurityProfiles,
  DEFAULT_SECCOMP_PROFILE_ROOT,
  SecurityProfileError,
  type SecurityProfileSettings,
} from './security-profiles.js';
import { runAsNonRootProblem, type ImageUser } from './run-as-non-root.js';

export class ContainerConfigError extends kubeletErrorClass('KTS_ERR_CONTAINER_CONFIG') {}

export interface ContainerConfigInput {
  pod: Pod;
  container: Container;
  restartCount: number;
  /** The image reference EnsureImageExists returned (the image ID). */
  imageRef: string;
  /** Who the image runs as (run-as-non-root.ts getImageUser); absent: not known (unit tests). */
  imageUser?: ImageUser;
  env: EnvContext;
  memoryCapacity: number;
  /** What a missing limit means to the downward API (resourceFieldRef). */
  allocatable: NodeAllocatable;
  /** The pod's volumes as the volume manager set them up: name → host path, or the volume's error. */
  volumes: PodVolumes;
  /** Prepares subPath binds (the volume manager's). */
  subPaths: Pick<RuntimeVolumes, 'prepareSubPath'>;
  /** The pod's managed /etc/hosts (hosts-file.ts); absent: none. */
  hosts?: HostsFileInput;
  /** An ephemeral container's target: the container whose process namespace it joins. */
  targetId?: string;
  /** The sandbox's user namespace options (kubelet/userns); absent: not sent. */
  userns?: UserNamespace | undefined;
  /** upstream getPodDir: the termination message file goes below it; absent: none (unit tests). */
  podDir?: string;
  /** seccompDefault and the Localhost seccomp root; absent: upstream's defaults (off, /var/lib/kubelet/seccomp). */
  securityProfiles?: SecurityProfileSettings;
  /** What the device plugins' Allocate answers give this container (device manager); absent: none. */
  deviceOptions?: DeviceRunContainerOptions | undefined;
}

/** No image user known: neither a uid nor a name (unit tests that do not ask). */
const UNKNOWN_IMAGE_USER: ImageUser = { username: '' };

const DEFAULT_PROFILE_SETTINGS: SecurityProfileSettings = {
  seccompDefault: false,
  seccompProfileRoot: DEFAULT_SECCOMP_PROFILE_ROOT,
};

/**
 * upstream generateLinuxContainerConfig: a debug container with a target joins the target's
 * process namespace, unless the pod shares one process namespace (or the host's) anyway.
 */
function containerNamespaces(pod: Pod, targetId: string | undefined, userns?: UserNamespace): NamespaceOption {
  const ns = namespacesForPod(pod, userns);
  if (targetId === undefined || ns.pid !== 'CONTAINER') return ns;
  return { ...ns, pid: 'TARGET', targetId };
}

/** The downward API context with resourceFieldRef bound to the node's allocatable. */
export function downwardContext(pod: Pod, env: EnvContext, allocatable: NodeAllocatable): EnvContext {
  return { ...env, resourceFieldRef: (fs, c) => resourceFieldRefValue(pod, c, fs, allocatable) };
}

/**
 * The hardening part of upstream's determineEffectiveSecurityContext: capabilities as given,
 * readonly_rootfs, no_new_privs (AddNoNewPrivileges: only when allowPrivilegeEscalation is
 * false and the container is not privileged). The seccomp and AppArmor profiles are
 * security-profiles.ts's.
 */
function hardening(container: Container) {
  const sc = container.securityContext;
  const caps = sc?.capabilities;
  return {
    ...(caps ? { capabilities: { addCapabilities: caps.add ?? [], dropCapabilities: caps.drop ?? [] } } : {}),
    readonlyRootfs: sc?.readOnlyRootFilesystem === true,
    noNewPrivs: sc?.privileged !== true && sc?.allowPrivilegeEscalation === false,
  };
}

/** The CRI pieces of the device plugins' answers (upstream deviceRunContainerOptions → CRI fields). */
interface DeviceParts {
  envs: KeyValue[];
  mounts: Mount[];
  devices: Device[];
  annotations: Record<string, string>;
  cdi: Array<{ name: string }>;
}

function deviceParts(opts: DeviceRunContainerOptions | undefined): DeviceParts {
  return {
    envs: (opts?.envs ?? []).map((e) => ({ key: e.name, value: e.value })),
    // Propagation PRIVATE (the CRI default) and no relabel, as upstream's device mounts.
    mounts: (opts?.mounts ?? []).map((m) => ({
      containerPath: m.containerPath,
      hostPath: m.hostPath,
      readonly: m.readOnly,
    })),
    devices: (opts?.devices ?? []).map((d) => ({
      containerPath: d.pathInContainer,
      hostPath: d.pathOnHost,
      permissions: d.permissions,
    })),
    annotations: Object.fromEntries((opts?.annotations ?? []).map((a) => [a.name, a.value])),
    cdi: opts?.cdiDevices ?? [],
  };
}

/** Errors that are the pod's configuration's: CreateContainerConfigError. */
const CONFIG_PROBLEMS = [EnvError, ResourceError, VolumeError, SecurityContextError, SecurityProfileError];

export async function generateContainerConfig(input: ContainerConfigInput): Promise<ContainerConfig> {
  const { pod, container, restartCount, imageRef } = input;
  // upstream: runAsNonRoot is checked against the effective user before anything else is made.
  const nonRoot = runAsNonRootProblem(pod, container, input.imageUser ?? UNKNOWN_IMAGE_USER);
  if (nonRoot) throw new ContainerConfigError(nonRoot);
  try {
    const env = downwardContext(pod, input.env, input.allocatable);
    const dev = deviceParts(input.deviceOptions);
    // upstream GenerateRunContainerOptions: device envs first; $(VAR) expansion sees them.
    const envs = [...dev.envs, ...makeEnvironmentVariables(pod, container, env)];
    const { command, args } = expandCommandAndArgs(container, envs);
    const linux = {
      resources: linuxContainerResources(pod, container, input.memoryCapacity),
      securityContext: {
        namespaceOptions: containerNamespaces(pod, input.targetId, input.userns),
        ...containerIdentity(pod, container, input.imageUser),
        ...hardening(container),
        ...containerSecurityProfiles(pod, container, input.securityProfiles ?? DEFAULT_PROFILE_SETTINGS),
      },
    };
    // Last: the mounts write files (hosts, the termination message) that a later failure would leave.
    const volumeMounts = await makeMounts(pod, container, new Map(envs.map((e) => [e.key, e.value])), {
      volumes: input.volumes,
      subPaths: input.subPaths,
      ...(input.hosts ? { hosts: input.hosts } : {}),
      ...(input.podDir !== undefined ? { podDir: input.podDir } : {}),
    });
    return {
      metadata: { name: container.name, attempt: restartCount },
      image: { image: imageRef },
      command,
      args,
      workingDir: container.workingDir ?? '',
      envs,
      // Device mounts before volume mounts, as upstream.
      mounts: [...dev.mounts, ...volumeMounts],
      ...(dev.devices.length > 0 ? { devices: dev.devices } : {}),
      labels: newContainerLabels(container, pod),
      // "Kubelet always overrides device plugin annotations if they are conflicting."
      annotations: { ...dev.annotations, ...newContainerAnnotations(container, pod, restartCount) },
      logPath: containerLogPath(container.name, restartCount),
      stdin: container.stdin === true,
      stdinOnce: container.stdinOnce === true,
      tty: container.tty === true,
      linux,
      ...(dev.cdi.length > 0 ? { CDIDevices: dev.cdi } : {}),
    };
  } catch (err) {
    if (CONFIG_PROBLEMS.some((k) => err instanceof k))
      throw new ContainerConfigError((err as Error).message, { cause: err });
    throw err;
  }
}
