/**
 * User namespaces (src/kubelet/userns): our tables of upstream's
 * pkg/kubelet/userns/userns_manager_test.go (TestUserNsManagerAllocate, TestMakeUserNsManager,
 * TestUserNsManagerParseUserNsFile, TestGetOrCreateUserNamespaceMappings,
 * TestCleanupOrphanedPodUsernsAllocations, TestMakeUserNsManagerFailsListPod, TestRecordBounds)
 * and of the kubelet's range (kubelet_pods_linux_test.go TestParseGetSubIdsOutput, read here
 * from /etc/subuid lines), plus the checkpoint across a restart, the admission refusal and the
 * CRI request of a hostUsers:false pod.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import type { RuntimeHandler } from '../../src/cri/types.js';
import { createRecorder } from '../../src/events/index.js';
import {
  createUserNamespaces,
  defaultMappings,
  getKubeletMappings,
  MAPPINGS_FILE,
  usernsAdmitHandler,
  UsernsManager,
  type IdRange,
  type UsernsPods,
} from '../../src/kubelet/userns/index.js';
import { subIdRange } from '../../src/kubelet/userns/kubelet-mappings.js';
import { metrics } from '../../src/metrics/index.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { fakeRuntimeManager, makePod } from '../kuberuntime/helpers.js';
import { testTempDir } from '../support/temp-dir.js';

const LEN = 65536;
/** upstream's test range: skip the first block, room for 2000 pods. */
const TEST_RANGE: IdRange = { first: LEN, length: LEN * 2000 };

let dir: string;
let n = 0;
/** A node without a `kubelet` user: upstream's default range. */
let noKubeletUser: { passwd: string; subuid: string; subgid: string };
before(async () => {
  dir = testTempDir('userns-test-');
  noKubeletUser = await idFiles('root:x:0:0::/root:/bin/sh\n', '', '');
});

async function idFiles(passwd: string, subuid: string, subgid: string) {
  const d = join(dir, `ids-${n++}`);
  await mkdir(d, { recursive: true });
  const files = { passwd: join(d, 'passwd'), subuid: join(d, 'subuid'), subgid: join(d, 'subgid') };
  await writeFile(files.passwd, passwd);
  await writeFile(files.subuid, subuid);
  await writeFile(files.subgid, subgid);
  return files;
}
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** upstream testUserNsPodsManager: one pod directory for every pod, a handler answer, maxPods. */
async function pods(o: { userns?: boolean; maxPods?: number; list?: string[] } = {}): Promise<UsernsPods> {
  const podDir = join(dir, `pods-${n++}`);
  await mkdir(podDir, { recursive: true });
  return {
    podDir: () => podDir,
    listPodsFromDisk: () => Promise.resolve(o.list ?? []),
    handlerSupportsUserNamespaces: (h) => {
      if (h === 'error') throw new Error('unknown runtime');
      return o.userns ?? false;
    },
    maxPods: o.maxPods ?? 110,
  };
}

const withHostUsers = (v: boolean | undefined): Pod => {
  const pod = makePod();
  if (v !== undefined) pod.spec!.hostUsers = v;
  return pod;
};

describe('UsernsManager (upstream userns_manager_test.go)', () => {
  it('TestUserNsManagerAllocate: default and custom idsPerPod', async () => {
    for (const len of [LEN, 1048576]) {
      const m = await UsernsManager.create(await pods(), { first: len, length: len * 2000 }, len);
      const one = m.allocateOne('one');
      assert.equal(one.length, len);
      assert.ok(m.isSet(one.first));
      const two = m.allocateOne('two');
      assert.notEqual(one.first, two.first);
      assert.equal(two.length, one.length);
      // Recording the same range again is fine; anything different fails.
      m.record('two', two.first, two.length);
      assert.throws(() => m.record('two', two.first + 1, two.length));
      await m.release('one');
      await m.release('two');
      assert.ok(!m.isSet(one.first) && !m.isSet(two.first));
      const allocs: number[] = [];
      for (let i = 0; i < 1000; i++) {
        const a = m.allocateOne(String(i));
        assert.equal(a.length, len);
        assert.ok(a.first >= len && a.first <= len + len * 2000 - len, `iteration ${i}`);
        allocs.push(a.first);
      }
      for (const [i, v] of allocs.entries()) {
        assert.ok(m.isSet(v));
        await m.release(String(i));
        assert.ok(!m.isSet(v));
        m.record(String(i), v, len);
        await m.release(String(i));
        assert.ok(!m.isSet(v));
      }
    }
  });

  it('TestMakeUserNsManager: the range must suit idsPerPod and maxPods', async () => {
    const cases: [name: string, range: IdRange, maxPods: number, ok: boolean][] = [
      ['default', TEST_RANGE, 110, true],
      ['firstID not multiple', { first: LEN + 1, length: LEN * 2000 }, 110, false],
      ['firstID is less than 65535', { first: 1, length: LEN * 2000 }, 110, false],
      ['mappingLen not multiple', { first: LEN, length: LEN + 1 }, 110, false],
      ["range can't fit maxPods", { first: LEN, length: LEN }, 2, false],
      ['range ends at INVALID_UID', { first: LEN, length: 2 ** 32 - LEN }, 110, false],
      ['range ends past INVALID_UID', { first: 327680, length: 4294836224 }, 110, false],
    ];
    for (const [name, range, maxPods, ok] of cases) {
      const made = UsernsManager.create(await pods({ maxPods }), range);
      if (ok) await assert.doesNotReject(made, name);
      else await assert.rejects(made, { code: 'KTS_ERR_CONFIG' }, name);
    }
  });

  it('TestUserNsManagerParseUserNsFile: only what the manager writes is read back', async () => {
    const map = (hostId: number, containerId = 0, length = LEN) => ({ hostId, containerId, length });
    const file = (u: object[], g: object[]) => JSON.stringify({ uidMappings: u, gidMappings: g });
    const cases: [name: string, content: string, ok: boolean][] = [
      ['basic', file([map(131072)], [map(131072)]), true],
      ['invalid length', file([map(131072, 0, 0)], [map(131072, 0, 0)]), false],
      ['wrong offset', file([map(131073)], [map(131073)]), false],
      ['two GID mappings', file([map(131072)], [map(131072), map(196608)]), false],
      ['two UID mappings', file([map(131072), map(196608)], [map(131072)]), false],
      ['no root UID', file([map(131072, 1)], [map(131072, 1)]), false],
      ['no root GID', file([map(131072)], [map(131072, 1)]), false],
      ['not JSON', '{', false],
    ];
    const m = await UsernsManager.create(await pods(), TEST_RANGE);
    for (const [name, content, ok] of cases) {
      if (ok) assert.doesNotThrow(() => m.parseAndRecord(name, content), name);
      else assert.throws(() => m.parseAndRecord(name, content), name);
    }
  });

  it('TestGetOrCreateUserNamespaceMappings: NODE, or POD where the handler supports it', async () => {
    const cases: [name: string, pod: Pod, userns: boolean, handler: string, mode?: string][] = [
      ['no user namespace', withHostUsers(undefined), false, '', 'NODE'],
      ['opt-in to host user namespace', withHostUsers(true), false, '', 'NODE'],
      ['user namespace', withHostUsers(false), true, '', 'POD'],
      ['user namespace, but no runtime support', withHostUsers(false), false, ''],
      ['user namespace, but runtime returns error', withHostUsers(false), true, 'error'],
    ];
    for (const [name, pod, userns, handler, mode] of cases) {
      const m = await UsernsManager.create(await pods({ userns }), TEST_RANGE);
      const got = m.getOrCreateUserNamespaceMappings(pod, handler);
      if (!mode) {
        await assert.rejects(got, /can't set `spec.hostUsers: false`/, name);
        continue;
      }
      const ns = await got;
      assert.equal(ns.mode, mode, name);
      if (mode === 'POD') {
        assert.equal(ns.uids.length, 1);
        assert.deepEqual(ns.uids, ns.gids);
        assert.equal(ns.uids[0]!.containerId, 0);
        assert.equal(ns.uids[0]!.length, LEN);
      }
    }
  });

  it("a handler without support is named in upstream's words", async () => {
    const m = await UsernsManager.create(await pods({ userns: false }), TEST_RANGE);
    await assert.rejects(m.getOrCreateUserNamespaceMappings(withHostUsers(false), 'runc'), {
      code: 'KTS_ERR_SANDBOX',
      message: 'can\'t set `spec.hostUsers: false`, RuntimeClass handler "runc" does not support user namespaces',
    });
  });

  it('TestCleanupOrphanedPodUsernsAllocations', async () => {
    const cases: [name: string, list: string[], before: string[], known: string[], set: string[], unset: string[]][] = [
      ['no stale pods', ['pod-1', 'pod-2'], [], [], [], []],
      ['no stale pods set', ['pod-1', 'pod-2'], ['pod-1', 'pod-2'], [], [], ['pod-1', 'pod-2']],
      ['one running pod', ['pod-1', 'pod-2'], ['pod-1', 'pod-2'], ['pod-1'], ['pod-1'], ['pod-2']],
      ['pod set before cleanup but not listed ==> unset', [], ['pod-1', 'pod-2'], ['pod-1'], [], ['pod-1', 'pod-2']],
      ['no listed pods ==> all unset', [], ['pod-1', 'pod-2'], [], [], ['pod-1', 'pod-2']],
    ];
    for (const [name, list, recorded, known, set, unset] of cases) {
      const m = await UsernsManager.create(await pods({ list }), TEST_RANGE);
      recorded.forEach((uid, i) => m.record(uid, (i + 1) * LEN, LEN));
      await m.cleanupOrphaned(new Set(known));
      for (const uid of set) assert.ok(m.podAllocated(uid), `${name}: ${uid} allocated`);
      for (const uid of unset) assert.ok(!m.podAllocated(uid), `${name}: ${uid} released`);
    }
  });

  it('TestMakeUserNsManagerFailsListPod', async () => {
    const p = await pods();
    p.listPodsFromDisk = () => Promise.reject(Object.assign(new Error('permission denied'), { code: 'EACCES' }));
    await assert.rejects(UsernsManager.create(p, TEST_RANGE), /read pods from disk/);
  });

  it('TestRecordBounds: a range for exactly one pod', async () => {
    const m = await UsernsManager.create(await pods({ maxPods: 1 }), { first: LEN, length: LEN });
    m.record('0', LEN, LEN);
    assert.throws(() => m.record('2', 2 * LEN, LEN), /out of range/);
  });

  it('checkpoints the block in the pod directory, reads it back after a restart, removes it on release', async () => {
    const root = join(dir, `root-${n++}`);
    const uid = 'b5e7c6a4-0000-4000-8000-000000000001';
    await mkdir(join(root, 'pods', uid), { recursive: true });
    const handlers = (): RuntimeHandler[] => [
      { name: '', supportsRecursiveReadOnlyMounts: true, supportsUserNamespaces: true },
    ];
    const opts = { rootDir: root, maxPods: 110, handlers, files: noKubeletUser };
    const pod = withHostUsers(false);
    pod.metadata!.uid = uid;
    const first = await (await createUserNamespaces(opts)).getOrCreateUserNamespaceMappings(pod, '');
    const file = join(root, 'pods', uid, MAPPINGS_FILE);
    assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { uidMappings: first.uids, gidMappings: first.gids });
    // A new manager (a restart) records the checkpoint: the same block, and it is taken.
    const again = await createUserNamespaces(opts);
    assert.ok(again.podAllocated(uid) && again.isSet(first.uids[0]!.hostId));
    assert.deepEqual(await again.getOrCreateUserNamespaceMappings(pod, ''), first);
    await again.release(uid);
    assert.ok(!again.isSet(first.uids[0]!.hostId));
    await assert.rejects(readFile(file), { code: 'ENOENT' });
  });

  it('only pod directories are read at start; a stray file is no pod', async () => {
    const root = join(dir, `root-${n++}`);
    await mkdir(join(root, 'pods'), { recursive: true });
    await writeFile(join(root, 'pods', 'stray'), 'x');
    const m = await createUserNamespaces({ rootDir: root, maxPods: 110, handlers: () => [], files: noKubeletUser });
    assert.ok(!m.podAllocated('stray'));
  });

  it('a corrupt checkpoint stops the start, naming the pod', async () => {
    const root = join(dir, `root-${n++}`);
    await mkdir(join(root, 'pods', 'p1'), { recursive: true });
    await writeFile(join(root, 'pods', 'p1', MAPPINGS_FILE), '{"uidMappings": []}');
    await assert.rejects(
      createUserNamespaces({ rootDir: root, maxPods: 110, handlers: () => [], files: noKubeletUser }),
      {
        code: 'KTS_ERR_CONFIG',
        message: /record pod mappings for existing pod "p1"/,
      },
    );
  });
});

describe('getKubeletMappings (upstream kubelet_pods.go)', () => {
  it('TestParseGetSubIdsOutput, as /etc/subuid lines', () => {
    const cases: [name: string, text: string, want?: IdRange][] = [
      ['valid', 'kubelet:65536:2147483648', { first: 65536, length: 2147483648 }],
      ['multiple lines', 'kubelet:1:2\nkubelet:3:4\n'],
      ['wrong format', 'kubelet:65536'],
      ['non numeric 1', 'kubelet:Foo:65536'],
      ['non numeric 2', 'kubelet:0:Bar'],
      ['overflow 1', 'kubelet:4294967296:65536'],
      ['overflow 2', 'kubelet:65536:4294967296'],
      ['negative value 1', 'kubelet:-1:65536'],
      ['negative value 2', 'kubelet:65536:-1'],
      ['no line for the user', 'alice:100000:65536'],
    ];
    for (const [name, text, want] of cases) {
      if (want) assert.deepEqual(subIdRange(text, 'kubelet', '999', '/etc/subuid'), want, name);
      else assert.throws(() => subIdRange(text, 'kubelet', '999', '/etc/subuid'), { code: 'KTS_ERR_CONFIG' }, name);
    }
  });

  it("no kubelet user: upstream's default, whole blocks from idsPerPod short of 4294967295", async () => {
    assert.deepEqual(await getKubeletMappings(LEN, noKubeletUser), { first: LEN, length: 65534 * LEN });
    assert.deepEqual(defaultMappings(1048576), { first: 1048576, length: 4094 * 1048576 });
    // The default range always passes the manager's checks with upstream's 110 pods.
    await assert.doesNotReject(UsernsManager.create(await pods(), defaultMappings(LEN)));
  });

  it("the kubelet user's subordinate range (by name or UID); users and groups must agree", async () => {
    const passwd = 'root:x:0:0::/root:/bin/sh\nkubelet:x:999:999::/var/lib/kubelet:/usr/sbin/nologin\n';
    const range = '# comment\nalice:100000:65536\nkubelet:196608:6553600\n';
    assert.deepEqual(await getKubeletMappings(LEN, await idFiles(passwd, range, range)), {
      first: 196608,
      length: 6553600,
    });
    const byUid = '999:196608:6553600\n';
    assert.deepEqual(await getKubeletMappings(LEN, await idFiles(passwd, byUid, byUid)), {
      first: 196608,
      length: 6553600,
    });
    await assert.rejects(getKubeletMappings(LEN, await idFiles(passwd, range, 'kubelet:262144:6553600\n')), {
      message: '"kubelet" has different mappings for users and groups',
    });
    await assert.rejects(getKubeletMappings(LEN, await idFiles(passwd, '', range)), /no subordinate ID range/);
  });
});

describe('admission and the CRI request', () => {
  const h = (name: string, supportsUserNamespaces: boolean): RuntimeHandler => ({
    name,
    supportsRecursiveReadOnlyMounts: true,
    supportsUserNamespaces,
  });

  it('refuses a hostUsers:false pod whose handler lacks support, naming it; admits the others', () => {
    const handlers = [h('', false), h('runc', false), h('crun', true)];
    const admit = usernsAdmitHandler({
      handlers: () => handlers,
      handlerFor: (pod) => {
        if (pod.spec?.runtimeClassName === 'unknown') throw new Error('not found');
        return pod.spec?.runtimeClassName ?? '';
      },
    });
    const pod = (hostUsers: boolean | undefined, cls?: string): Pod => {
      const p = withHostUsers(hostUsers);
      if (cls) p.spec!.runtimeClassName = cls;
      return p;
    };
    assert.deepEqual(admit(pod(undefined)), { admit: true });
    assert.deepEqual(admit(pod(true)), { admit: true });
    assert.deepEqual(admit(pod(false, 'runc')), {
      admit: false,
      reason: 'PodFeatureUnsupported',
      message: 'can\'t set `spec.hostUsers: false`, RuntimeClass handler "runc" does not support user namespaces',
    });
    assert.equal(
      admit(pod(false)).message,
      "can't set `spec.hostUsers: false`, runtime does not support user namespaces",
    );
    assert.deepEqual(admit(pod(false, 'crun')), { admit: true });
    // An unknown class is the sandbox's to report (upstream LookupRuntimeHandler).
    assert.deepEqual(admit(pod(false, 'unknown')), { admit: true });
    assert.match(admit(pod(false, 'kata')).message!, /"kata" does not support .*: the handler "kata" is not known/);
    // A runtime that reports no handlers (containerd 1.6, 1.7): refused too.
    const none = usernsAdmitHandler({ handlers: () => [], handlerFor: () => '' });
    assert.match(none(pod(false)).message!, /runtime handlers are not set$/);
  });

  it('sends userns_options POD with the mappings for the sandbox and each container, NODE otherwise', async () => {
    const fake = new FakeRuntimeService();
    fake.addImage('busybox:1.36');
    const root = join(dir, `root-${n++}`);
    const userns = await createUserNamespaces({
      rootDir: join(root, 'root'),
      maxPods: 110,
      handlers: () => [h('', true)],
      files: noKubeletUser,
    });
    const rt = fakeRuntimeManager(fake, root, createRecorder(), {
      userNamespaces: (pod, handler) => userns.getOrCreateUserNamespaceMappings(pod, handler),
    });
    const sync = async (pod: Pod) => {
      const m = pod.metadata!;
      await rt.syncPod(pod, await rt.getPodStatus(m.uid!, m.name!, m.namespace!));
    };
    const mapped = withHostUsers(false);
    const count = async () => (await metrics.startedUserNamespacedPods.get()).values[0]?.value ?? 0;
    const before = await count();
    await sync(mapped);
    // upstream kubelet_started_user_namespaced_pods_total: one per sandbox of such a pod.
    assert.equal(await count(), before + 1);
    const plain = makePod({ name: 'plain' });
    plain.metadata!.uid = 'plain-uid';
    await sync(plain);
    const sandboxes = [...fake.sandboxes.values()];
    const sbOf = (uid: string) => sandboxes.find((s) => s.config.metadata.uid === uid)!;
    const want = await userns.getOrCreateUserNamespaceMappings(mapped, '');
    assert.equal(want.mode, 'POD');
    assert.deepEqual(sbOf(mapped.metadata!.uid!).config.linux.securityContext.namespaceOptions.usernsOptions, want);
    assert.deepEqual(sbOf('plain-uid').config.linux.securityContext.namespaceOptions.usernsOptions, {
      mode: 'NODE',
      uids: [],
      gids: [],
    });
    for (const c of fake.containers.values()) {
      const sb = fake.sandboxes.get(c.podSandboxId)!;
      assert.deepEqual(
        c.config.linux?.securityContext?.namespaceOptions?.usernsOptions,
        sb.config.linux.securityContext.namespaceOptions.usernsOptions,
      );
    }
  });
});
