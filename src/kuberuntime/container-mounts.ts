/**
 * The CRI mounts of one container (upstream kubelet_pods.go makeMounts): each volumeMount binds
 * its volume's host path as the volume manager set it up before this sync, or, with a subPath or
 * subPathExpr (expanded against the container's env), a checked bind of that part of it
 * (src/volume/subpath). Nothing is mounted or written here but those binds, the pod's
 * managed /etc/hosts (hosts-file.ts), and the container's termination message file
 * (termination-message.ts), added last as upstream, once nothing else can fail. A volume that
 * could not be set up fails the container with the volume's own error (CreateContainerConfigError).
 */
import type { Container, Pod } from '../api/types.js';
import type { Mount } from '../cri/types.js';
import { VolumeError } from '../errors.js';
import { expand, mappingFor } from '../fieldpath/index.js';
import type { MountedVolume, PodVolumes, RuntimeVolumes } from '../volume/index.js';
import { makeHostsMount, type HostsFileInput } from './hosts-file.js';
import { makeTerminationMessageMount } from './termination-message.js';

function volumeFor(pod: Pod, name: string, volumes: PodVolumes): MountedVolume {
  if (!pod.spec?.volumes?.some((v) => v.name === name))
    throw new VolumeError(`volumeMount ${name}: no volume of that name in the pod`);
  const error = volumes.errors.get(name);
  if (error) throw error;
  const mounted = volumes.mounted.get(name);
  if (!mounted)
    throw new VolumeError(
      `volume ${name}: not mounted: the volume manager has not set it up for this pod (the kubelet and the runtime manager must share one VolumeManager)`,
    );
  return mounted;
}

/** What the pod's volumes are on this node: what was set up, and who binds subPaths of them. */
export interface PodVolumeBinding {
  volumes: PodVolumes;
  subPaths: Pick<RuntimeVolumes, 'prepareSubPath'>;
  /** The managed /etc/hosts; absent: none (unit tests of the volume binds). */
  hosts?: HostsFileInput;
  /** upstream getPodDir, where the termination message file goes; absent: none (unit tests). */
  podDir?: string;
}

export async function makeMounts(
  pod: Pod,
  container: Container,
  env: ReadonlyMap<string, string>,
  { volumes, subPaths, hosts, podDir }: PodVolumeBinding,
): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const [index, vm] of (container.volumeMounts ?? []).entries()) {
    const volume = volumeFor(pod, vm.name, volumes);
    const sub = vm.subPathExpr ? expand(vm.subPathExpr, mappingFor(env)) : (vm.subPath ?? '');
    const hostPath = sub
      ? await subPaths.prepareSubPath({
          uid: pod.metadata?.uid ?? '',
          container: container.name,
          index,
          volumeName: vm.name,
          volumePath: volume.hostPath,
          subPath: sub,
        })
      : volume.hostPath;
    // upstream mounts API data volumes read-only whatever the volumeMount says.
    mounts.push({ containerPath: vm.mountPath, hostPath, readonly: volume.readOnly || vm.readOnly === true });
  }
  const paths = (container.volumeMounts ?? []).map((vm) => vm.mountPath);
  const hostsMount = hosts && (await makeHostsMount(pod, paths, hosts));
  if (hostsMount) mounts.push(hostsMount);
  const messageMount = podDir !== undefined && (await makeTerminationMessageMount(podDir, container));
  if (messageMount) mounts.push(messageMount);
  return mounts;
}
