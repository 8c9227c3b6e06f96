/**
 * The pod securityContext, attacked from inside real containers (the real agent, containerd and
 * runc): each hardening a pod asks for is tried the way an intruder in the container would, and
 * must hold; the same command in an unhardened container succeeds, so the failure is the
 * hardening's and not the image's. `drop: [ALL]` as root: chown, a raw socket and mknod fail and
 * every capability set is empty; `add: [NET_ADMIN]` gives that bit alone; no_new_privs keeps a
 * setuid-root binary from giving euid 0; a read-only root stays read-only beside a writable
 * emptyDir; RuntimeDefault seccomp refuses a user namespace; a root image with runAsNonRoot never
 * runs; hostUsers: false never runs in the host's user namespace; an unsafe sysctl is
 * SysctlForbidden; a container that is not privileged sees no host device, cannot write or remount
 * /proc/sys and reads the masked /proc files as empty. One agent, every pod started at once.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { TEST_IMAGES } from '../support/containerd.js';
import { buildImages, SETUID_IMAGE } from '../support/images.js';
import { agentTestContext, getPods, startKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';
import { importImage } from '../support/variant-images.js';

const MODE = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
const NS = `e2e-secctx-${MODE}-${Math.random().toString(36).slice(2, 7)}`;
let kubelet: KubeletProcess | undefined;
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);

const forever = "trap 'exit 0' TERM; sleep 3600 & wait";
const c = (name: string, securityContext: object = {}, extra: object = {}) => ({
  name,
  image: TEST_IMAGES.busybox,
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c', forever],
  securityContext,
  ...extra,
});

function manifest(name: string, spec: object): void {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS } };
  writeFileSync(
    join(manifests, `${name}.json`),
    JSON.stringify({ ...pod, spec: { terminationGracePeriodSeconds: 1, ...spec } }),
  );
}

// Root in every container of `caps`; the pod sets ping_group_range to the kernel's default
// ("1 0": nobody), a safe sysctl, so ping has no unprivileged ICMP socket to fall back on
// whatever the runtime's own default (containerd's enable_unprivileged_icmp opens it to all).
manifest('caps', {
  securityContext: { sysctls: [{ name: 'net.ipv4.ping_group_range', value: '1 0' }] },
  volumes: [{ name: 'scratch', emptyDir: {} }],
  containers: [
    c('plain'),
    c('dropall', { capabilities: { drop: ['ALL'] } }),
    c('netadmin', { capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] } }),
    c('readonly', { readOnlyRootFilesystem: true }, { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }),
    c('seccomp', { seccompProfile: { type: 'RuntimeDefault' } }),
    c('unconfined', { seccompProfile: { type: 'Unconfined' } }),
  ],
});
// A user that is not root, running a setuid-root busybox (scripts/build-images.mjs).
manifest('setuid', {
  securityContext: { runAsUser: 1000, runAsGroup: 1000 },
  containers: [
    c('nnp', { allowPrivilegeEscalation: false }, { image: SETUID_IMAGE }),
    c('escalates', {}, { image: SETUID_IMAGE }),
  ],
});
manifest('privileged', { containers: [c('host', { privileged: true })] });
// The busybox image runs as root (no User): runAsNonRoot must keep it from starting.
manifest('nonroot', { securityContext: { runAsNonRoot: true }, containers: [c('app')] });
manifest('uid0', { containers: [c('app', { runAsNonRoot: true, runAsUser: 0 })] });
// A user namespace of its own: where the runtime cannot give one, refused, never the host's.
manifest('userns', { hostUsers: false, containers: [c('app')] });
manifest('sysctl', {
  securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '65536' }] },
  containers: [c('app')],
});

const pod = async (name: string): Promise<Pod | undefined> =>
  (await getPods(kubelet!)).find((p) => p.metadata?.name === `${name}-e2e-node`);

/** The container ids of a pod once all its containers run. */
async function running(name: string): Promise<Record<string, string>> {
  return waitFor(
    `${name}: every container running`,
    90_000,
    async () => {
      const s = (await pod(name))?.status?.containerStatuses ?? [];
      if (s.length === 0 || !s.every((x) => x.state?.running && x.containerID)) return undefined;
      return Object.fromEntries(s.map((x) => [x.name, x.containerID!.replace(/^[a-z]+:\/\//, '')]));
    },
    250,
  );
}

let ids: Record<string, Record<string, string>> = {};
before(async () => {
  // The setuid image is this file's alone: imported here, so image GC elsewhere cannot take it first.
  await importImage(endpoint, (await buildImages()).setuid);
  kubelet = startKubelet({ dir, manifests, endpoint });
  const started = ['caps', 'setuid', 'privileged'].map(async (n) => [n, await running(n)] as const);
  ids = Object.fromEntries(await Promise.all(started));
});

/** Runs `script` in a container: its exit code and its output (stdout then stderr). */
async function sh(podName: string, container: string, script: string): Promise<{ code: number; out: string }> {
  const id = ids[podName]?.[container];
  assert.ok(id, `${podName}/${container} has a container id`);
  const r = await runtime.execSync(id, ['sh', '-c', script], 20);
  return { code: r.exitCode, out: `${r.stdout.toString()}${r.stderr.toString()}` };
}

/** The attack fails, naming why; the control succeeds. */
async function refused(where: [string, string], script: string, why: RegExp): Promise<void> {
  const r = await sh(...where, script);
  assert.notEqual(r.code, 0, `${where.join('/')}: \`${script}\` must fail: ${r.out}`);
  assert.match(r.out, why, `${where.join('/')}: \`${script}\``);
}
async function allowed(where: [string, string], script: string): Promise<string> {
  const r = await sh(...where, script);
  assert.equal(r.code, 0, `${where.join('/')}: \`${script}\` must succeed (control): ${r.out}`);
  return r.out;
}

/** The capability sets of the container's first process, /proc/1/status. */
async function capSets(where: [string, string]): Promise<Record<string, string>> {
  const status = await allowed(where, 'cat /proc/1/status');
  return Object.fromEntries([...status.matchAll(/^(Cap\w+):\s+([0-9a-f]+)$/gm)].map((m) => [m[1], m[2]]));
}

const EPERM = /Operation not permitted/;

test('capabilities drop ALL as root: chown, a raw socket and mknod fail; every set is empty', async () => {
  const attacks: Array<[string, RegExp]> = [
    ['touch /tmp/f && chown 1234:1234 /tmp/f', EPERM],
    ['ping -c1 -W2 127.0.0.1', /permission denied|Operation not permitted/i],
    ['mknod /tmp/null c 1 3', EPERM],
  ];
  for (const [script, why] of attacks) {
    await refused(['caps', 'dropall'], script, why);
    await allowed(['caps', 'plain'], script);
  }
  const zero = '0000000000000000';
  assert.deepEqual(await capSets(['caps', 'dropall']), {
    CapInh: zero,
    CapPrm: zero,
    CapEff: zero,
    CapBnd: zero,
    CapAmb: zero,
  });
  assert.notEqual((await capSets(['caps', 'plain'])).CapEff, zero, "the runtime's default set (control)");
});

test('capabilities add NET_ADMIN after drop ALL: that bit alone, and it configures the pod network', async () => {
  const bit12 = '0000000000001000';
  const sets = await capSets(['caps', 'netadmin']);
  for (const set of ['CapPrm', 'CapEff', 'CapBnd']) assert.equal(sets[set], bit12, `${set} is CAP_NET_ADMIN`);
  assert.equal(sets.CapInh, '0000000000000000');
  // The pod's own network namespace: the runtime's default set has no NET_ADMIN either.
  await allowed(['caps', 'netadmin'], 'ip addr add 10.254.254.1/32 dev lo');
  for (const other of ['dropall', 'plain']) await refused(['caps', other], 'ip addr add 10.254.254.2/32 dev lo', EPERM);
  await refused(['caps', 'netadmin'], 'chown 1234 /tmp', EPERM);
});

test('allowPrivilegeEscalation false: a setuid-root binary run by a non-root user gets no euid 0', async () => {
  const nnp = await allowed(['setuid', 'nnp'], 'busybox-suid id; grep NoNewPrivs /proc/1/status');
  assert.match(nnp, /^uid=1000 gid=1000 /);
  assert.doesNotMatch(nnp, /euid=0/);
  assert.match(nnp, /^NoNewPrivs:\s+1$/m);
  const control = await allowed(['setuid', 'escalates'], 'busybox-suid id; grep NoNewPrivs /proc/1/status');
  assert.match(control, /^uid=1000 gid=1000 euid=0\(root\)/, 'the setuid bit works without no_new_privs');
  assert.match(control, /^NoNewPrivs:\s+0$/m);
});

test('readOnlyRootFilesystem: / and /etc are read-only, the emptyDir stays writable', async () => {
  for (const path of ['/attack', '/etc/attack', '/bin/attack']) {
    await refused(['caps', 'readonly'], `echo x > ${path}`, /Read-only file system/);
    await allowed(['caps', 'plain'], `echo x > ${path}`);
  }
  assert.equal(await allowed(['caps', 'readonly'], 'echo kept > /scratch/f && cat /scratch/f'), 'kept\n');
});

test('seccomp RuntimeDefault: a user namespace is refused (EPERM); Unconfined allows it', async () => {
  await refused(['caps', 'seccomp'], 'unshare -U true', EPERM);
  assert.match(await allowed(['caps', 'seccomp'], 'cat /proc/1/status'), /^Seccomp:\s+2$/m, 'a filter');
  for (const open of ['unconfined', 'plain']) {
    await allowed(['caps', open], 'unshare -U true');
    assert.match(await allowed(['caps', open], 'cat /proc/1/status'), /^Seccomp:\s+0$/m, `${open}: no filter`);
  }
});

test('runAsNonRoot: a root image with no runAsUser, or runAsUser 0, never runs', async () => {
  // Refused at admission (PodFeatureUnsupported) where the image's user is not checked, or the
  // container refused with CreateContainerConfigError where it is (upstream verifyRunAsNonRoot).
  const verdict = async (name: string) =>
    waitFor(`${name}: refused`, 60_000, async () => {
      const p = await pod(name);
      const waiting = p?.status?.containerStatuses?.[0]?.state?.waiting;
      if (p?.status?.phase === 'Failed' && p.status.reason) return `${p.status.reason}: ${p.status.message}`;
      return waiting?.reason === 'CreateContainerConfigError' ? `${waiting.reason}: ${waiting.message}` : undefined;
    });
  assert.match(
    await verdict('nonroot'),
    /^(PodFeatureUnsupported: .*runAsNonRoot|CreateContainerConfigError: container has runAsNonRoot and image will run as root)/,
  );
  assert.match(await verdict('uid0'), /^CreateContainerConfigError: container's runAsUser breaks non-root policy/);
  await new Promise((r) => setTimeout(r, 2000));
  for (const name of ['nonroot', 'uid0']) {
    const st = (await pod(name))?.status?.containerStatuses?.[0];
    assert.ok(!st?.state?.running && !st?.state?.terminated && !st?.lastState?.terminated, `${name} never ran`);
    const created = await runtime.listContainers({
      labelSelector: { 'io.kubernetes.pod.name': `${name}-e2e-node`, 'io.kubernetes.pod.namespace': NS },
    });
    assert.deepEqual(created, [], `${name}: no container was created`);
  }
});

test('hostUsers false: refused, or run in a user namespace of its own, never in the host one', async () => {
  const seen = await waitFor(
    'userns: refused or running',
    60_000,
    async (): Promise<{ refused: string } | { id: string } | undefined> => {
      const p = await pod('userns');
      if (p?.status?.phase === 'Failed') return { refused: `${p.status.reason}: ${p.status.message}` };
      const s = p?.status?.containerStatuses?.[0];
      return s?.state?.running && s.containerID ? { id: s.containerID.replace(/^[a-z]+:\/\//, '') } : undefined;
    },
    250,
  );
  if ('refused' in seen) return assert.match(seen.refused, /^\w+: .*(hostUsers|[Uu]ser namespace)/);
  const map = (await runtime.execSync(seen.id, ['cat', '/proc/self/uid_map'], 10)).stdout.toString();
  assert.doesNotMatch(map, /^\s*0\s+0\s+4294967295\s*$/, `not the host's identity map: ${map}`);
});

test('an unsafe sysctl is refused with SysctlForbidden; the safe one reached the sandbox', async () => {
  const p = await waitFor('sysctl: refused', 60_000, async () => {
    const x = await pod('sysctl');
    return x?.status?.phase === 'Failed' ? x : undefined;
  });
  assert.equal(p.status?.reason, 'SysctlForbidden');
  assert.match(p.status?.message ?? '', /forbidden sysctl: "kernel.msgmax" not allowlisted/);
  assert.equal((await allowed(['caps', 'plain'], 'cat /proc/sys/net/ipv4/ping_group_range')).trim(), '1\t0');
});

test('privileged false: no host device, no /dev/mem; a privileged container sees the disks', async () => {
  const hostDisks = readdirSync('/sys/block').filter((d) => existsSync(`/dev/${d}`));
  assert.ok(hostDisks.length > 0, 'the host has block devices to hide');
  assert.equal(await allowed(['caps', 'plain'], 'find /dev -type b'), '', 'no block device at all');
  for (const d of hostDisks) await refused(['caps', 'plain'], `ls /dev/${d}`, /No such file or directory/);
  await refused(['caps', 'plain'], 'ls /dev/mem /dev/kmem /dev/port', /No such file or directory/);
  // Control: a privileged container sees the host's disks (and /dev/mem where the host has one).
  for (const d of hostDisks) await allowed(['privileged', 'host'], `test -b /dev/${d}`);
  if (existsSync('/dev/mem')) await allowed(['privileged', 'host'], 'test -c /dev/mem');
});

test('privileged false: /proc/sys is read-only and stays so; host /proc and /sys files are masked', async () => {
  // Upstream's default read-only paths: kernel.core_pattern is the host's (not namespaced), and
  // writable it runs a program of the container's choosing as host root. The shell only opens
  // the files for writing, never writes, so a hole here changes nothing on the host.
  for (const f of ['/proc/sys/kernel/core_pattern', '/proc/sys/vm/overcommit_memory', '/proc/sysrq-trigger'])
    if (existsSync(f)) await refused(['caps', 'plain'], `true >> ${f}`, /Read-only file system/);
  assert.match(await allowed(['caps', 'plain'], 'grep " /proc/sys " /proc/mounts'), /^proc \/proc\/sys proc ro,/);
  await refused(['caps', 'plain'], 'mount -o remount,rw /proc/sys', /denied|not permitted/i);
  // Upstream's default masked paths: host kernel state reads as nothing (privileged: the control).
  for (const f of ['/proc/timer_list', '/proc/keys', '/proc/interrupts', '/proc/sched_debug'].filter(existsSync)) {
    assert.equal((await allowed(['caps', 'plain'], `wc -c < ${f}`)).trim(), '0', `${f} masked`);
    assert.notEqual((await allowed(['privileged', 'host'], `wc -c < ${f}`)).trim(), '0', `${f} (control)`);
  }
  assert.equal(await allowed(['caps', 'plain'], 'ls -A /sys/firmware'), '', '/sys/firmware masked');
  if (readdirSync('/sys/firmware').length > 0)
    assert.notEqual(await allowed(['privileged', 'host'], 'ls -A /sys/firmware'), '', '/sys/firmware (control)');
});
