/**
 * Node resources against real containerd (issue 27 item 5), one agent: a node with a reservation
 * and enforceNodeAllocatable [pods] limits kubepods' memory and pids to capacity − reserved;
 * podPidsLimit is pids.max of the pod cgroup; a pod with a hugepages-2Mi limit gets that hugetlb
 * limit on its pod cgroup, and its HugePages emptyDir is a hugetlbfs.
 *
 * The 2 MiB pool is grown for the file (nr_hugepages) and restored in after(), once the pod and
 * its mount are gone; a host without huge page support skips that part. The agent's cgroup root
 * is its own, so kubepods here is this file's.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { detectCgroupMounts } from '../../src/cm/index.js';
import { hostMaxPID } from '../../src/node/allocatable.js';
import { fsTypeAt } from '../../src/volume/mount.js';
import { TEST_IMAGES, uniqueName } from '../support/containerd.js';
import { agentTestContext, getPods, startKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';

const NS = uniqueName('kts-na');
const CGROUP_ROOT = `/${uniqueName('kts-na-cg')}`;
const POOL = '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages';
const MiB = 2 ** 20;
const PIDS_RESERVED = 1000;
const POD_PIDS = 77;
const mounts = detectCgroupMounts();
let kubelet: KubeletProcess | undefined;
const ctx = await agentTestContext(NS, () => kubelet);
/** nr_hugepages before this file; undefined: no 2 MiB pool on this host. */
const poolBefore = existsSync(POOL) ? Number(readFileSync(POOL, 'utf8').trim()) : undefined;
let hugeReady = false;

/** The directory of a cgroup in the hierarchy with `controller` (v1), or the unified tree. */
function cgroupDir(controller: string, ...path: string[]): string | undefined {
  for (const [mount, cs] of mounts.v1) if (cs.includes(controller)) return join(mount, ...path);
  if (!mounts.unified) return undefined;
  const offered = readFileSync(join(mounts.unified, 'cgroup.controllers'), 'utf8').split(/\s+/);
  return offered.includes(controller) ? join(mounts.unified, ...path) : undefined;
}

/** cgroup directories under dir, deepest first (for removal). */
function cgroupsUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) out.push(...cgroupsUnder(join(dir, e.name)));
  return [...out, dir];
}

before(async () => {
  if (poolBefore !== undefined) {
    writeFileSync(POOL, String(Math.max(poolBefore, 4)));
    hugeReady = Number(readFileSync(POOL, 'utf8').trim()) >= 2;
  }
  const hugeLimits = hugeReady ? { 'hugepages-2Mi': '4Mi' } : {};
  writeFileSync(
    join(ctx.manifests, 'pod.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'res', namespace: NS },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes: hugeReady ? [{ name: 'hp', emptyDir: { medium: 'HugePages' } }] : [],
        containers: [
          {
            name: 'c',
            image: TEST_IMAGES.busybox,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
            resources: { limits: { memory: '64Mi', ...hugeLimits } },
            volumeMounts: hugeReady ? [{ name: 'hp', mountPath: '/hp' }] : [],
          },
        ],
      },
    }),
  );
  kubelet = startKubelet({
    ...ctx,
    extraConfig: [
      `cgroupRoot: ${CGROUP_ROOT}`,
      `systemReserved: {memory: 100Mi, pid: "${PIDS_RESERVED}"}`,
      'enforceNodeAllocatable: [pods]',
      `podPidsLimit: ${POD_PIDS}`,
    ],
  });
});

after(() => {
  // agentTestContext's after() ran first: the agent is stopped, the pod removed, the mount gone.
  const roots = [...mounts.v1.keys(), ...(mounts.unified ? [mounts.unified] : [])];
  for (const r of roots) for (const d of cgroupsUnder(join(r, CGROUP_ROOT))) rmdirSync(d);
  if (poolBefore !== undefined) writeFileSync(POOL, String(poolBefore));
});

test('kubepods limits, podPidsLimit, hugetlb limits and a HugePages emptyDir', async (t) => {
  const pod = await waitFor(
    'the pod running',
    90_000,
    async () => {
      const p = (await getPods(kubelet!)).find((x) => x.metadata?.namespace === NS);
      return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
    },
    250,
  );
  const kubepods = [CGROUP_ROOT, 'kubepods'];
  const read = (controller: string, file: string, ...path: string[]) =>
    readFileSync(join(cgroupDir(controller, ...path)!, file), 'utf8').trim();
  assert.equal(read('memory', 'memory.limit_in_bytes', ...kubepods), String(totalmem() - 100 * MiB));
  assert.equal(read('pids', 'pids.max', ...kubepods), String(hostMaxPID()! - PIDS_RESERVED));
  const podCgroup = [...kubepods, 'burstable', `pod${pod.metadata!.uid}`];
  assert.equal(read('pids', 'pids.max', ...podCgroup), String(POD_PIDS), 'podPidsLimit');
  if (!hugeReady) {
    t.diagnostic('no 2 MiB huge page pool on this host: the hugetlb part is skipped');
    return;
  }
  const hugetlb = cgroupDir('hugetlb', ...podCgroup);
  if (hugetlb)
    assert.equal(
      read(
        'hugetlb',
        existsSync(join(hugetlb, 'hugetlb.2MB.max')) ? 'hugetlb.2MB.max' : 'hugetlb.2MB.limit_in_bytes',
        ...podCgroup,
      ),
      String(4 * MiB),
    );
  else t.diagnostic('no hugetlb controller on this host: the cgroup limit is not checked');
  const volume = join(ctx.dir, 'root', 'pods', pod.metadata!.uid!, 'volumes', 'kubernetes.io~empty-dir', 'hp');
  assert.equal(await fsTypeAt(volume), 'hugetlbfs');
  const mountLine = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .find((l) => l.includes(` ${volume} `));
  assert.match(mountLine ?? '', /pagesize=2M/);
});
