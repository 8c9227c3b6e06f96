// The Summary API sections beyond cpu and memory: node.network and pod network (/proc/<pid>/net/dev),
// node.systemContainers (/proc/<pid>/cgroup, the process listening on the CRI socket), container
// rootfs (CRI writable layer) and logs, pod volume and ephemeral-storage. Parsers on recorded
// texts; the provider over a recorded cgroup tree with fake CRI numbers.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultRouteInterface, parseNetDev, parseNetDevInterfaces } from '../../src/stats/net-dev.js';
import {
  RuntimeProcessFinder,
  cgroupOfProcess,
  listeningSocketInodes,
  parseProcCgroup,
  socketPath,
  systemContainers,
} from '../../src/stats/system-containers.js';
import { createServer } from 'node:net';
import { podVolumeStats } from '../../src/stats/volume-stats.js';
import { createCgroupLayout } from '../../src/stats/cgroup-layout.js';
import { CgroupStatsProvider } from '../../src/stats/provider.js';
import { buildSummary, stringifyExact } from '../../src/stats/summary.js';
import { createTsCgroupReader } from '../../src/stats/cgroup-reader-ts.js';
import { podLogsDirName } from '../../src/util/pod-identity.js';
import { makeCgroupTree } from '../../bench/fixtures/cgroup-tree.js';
import { testTempDir } from '../support/temp-dir.js';

let dir: string;
before(() => {
  dir = testTempDir('kts-summary-');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  123456     100    0    0    0     0          0         0   123456     100    0    0    0     0       0          0
  ens5: 9007199254740993 2000 3 0 0 0 0 0 555 1000 4 0 0 0 0 0
vethab12: 10 1 0 0 0 0 0 0 20 2 0 0 0 0 0 0
  eth0:    1000      10    1    0    0     0          0         0     2000      20    2    0    0     0       0          0
`;

describe('net/dev (upstream stats/v1alpha1 NetworkStats)', () => {
  const t = new Date(0);
  it('lists every interface but lo and container links; counters exact', () => {
    const ifs = parseNetDevInterfaces(NET_DEV);
    assert.deepEqual(
      ifs.map((i) => i.name),
      ['ens5', 'eth0'],
    );
    assert.equal(ifs[0]!.rxBytes, 9007199254740993n);
    assert.deepEqual([ifs[0]!.rxErrors, ifs[0]!.txBytes, ifs[0]!.txErrors], [3n, 555n, 4n]);
  });
  it('top level: the preferred interface, else eth0 (upstream default), else the first', () => {
    assert.equal(parseNetDev(NET_DEV, t, 'ens5')!.name, 'ens5');
    assert.equal(parseNetDev(NET_DEV, t)!.name, 'eth0');
    assert.equal(parseNetDev(NET_DEV.replace(/ {2}eth0:.*\n/, ''), t)!.name, 'ens5');
    assert.equal(parseNetDev(NET_DEV, t)!.interfaces!.length, 2);
    assert.equal(parseNetDev(NET_DEV.split('\n').slice(0, 3).join('\n'), t), undefined, 'only lo: no network');
  });
  it('the default route interface from /proc/net/route', () => {
    const route = `Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
ens5\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
ens5\t00000000\t0100A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
`;
    assert.equal(defaultRouteInterface(route), 'ens5');
    assert.equal(defaultRouteInterface(route.split('\n').slice(0, 2).join('\n')), undefined);
  });
});

describe('system containers (upstream cm.GetSystemContainers)', () => {
  it('a process cgroup: memory path on v1/hybrid hosts, unified path on v2', () => {
    const hybrid = parseProcCgroup(
      '9:name=systemd:/\n4:memory:/system.slice/containerd.service\n2:cpu,cpuacct:/system.slice\n0::/system.slice/containerd.service\n',
    );
    assert.equal(cgroupOfProcess(hybrid, 'v1'), '/system.slice/containerd.service');
    assert.equal(hybrid.get('cpuacct'), '/system.slice');
    assert.equal(hybrid.has('name=systemd'), false);
    assert.equal(cgroupOfProcess(parseProcCgroup('0::/kubelet.slice\n'), 'v2'), '/kubelet.slice');
  });
  it('the listening socket of the CRI endpoint in /proc/net/unix', () => {
    const unix = `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 4242 /run/ctr/containerd.sock
0000000000000000: 00000003 00000000 00000000 0001 03 4243 /run/ctr/containerd.sock
0000000000000000: 00000002 00000000 00010000 0001 01 4244 /run/other.sock
`;
    assert.deepEqual([...listeningSocketInodes(unix, socketPath('unix:///run/ctr/containerd.sock'))], ['4242']);
    assert.equal(socketPath('/run/x.sock'), '/run/x.sock');
  });
  it('the runtime is the process listening on the CRI socket; a miss is not retried for a minute', async () => {
    const sock = join(mkdtempSync(join(dir, 'sock-')), 'cri.sock');
    const server = createServer();
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      assert.equal(new RuntimeProcessFinder(`unix://${sock}`).find(), process.pid);
      let now = 0;
      const missing = new RuntimeProcessFinder(`${sock}.absent`, () => now);
      assert.equal(missing.find(), undefined);
      now = 59_000;
      assert.equal(missing.find(), undefined, 'within the minute: no walk');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('this process is found as `kubelet` when its cgroup is in the tree read', () => {
    const own = cgroupOfProcess(parseProcCgroup(readFileSync('/proc/self/cgroup', 'latin1')), 'v1');
    const root = mkdtempSync(join(dir, 'sys-'));
    mkdirSync(join(root, own ?? '/'), { recursive: true });
    mkdirSync(join(root, 'kubepods'), { recursive: true });
    const found = systemContainers({ mode: 'v1', memoryRoot: root, kubepods: '/kubepods' });
    assert.deepEqual(
      found.map((c) => c.name),
      own ? ['kubelet', 'pods'] : ['pods'],
    );
    assert.equal(found.find((c) => c.name === 'pods')!.cgroup, '/kubepods');
  });
});

describe('pod volumes (stats/v1alpha1 VolumeStats)', () => {
  it('emptyDir, configMap, secret measured by name; secrets are not ephemeral storage', () => {
    const vols = mkdtempSync(join(dir, 'vols-'));
    const put = (plugin: string, name: string, file: string, bytes: number) => {
      mkdirSync(join(vols, plugin, name), { recursive: true });
      writeFileSync(join(vols, plugin, name, file), Buffer.alloc(bytes, 1));
    };
    put('kubernetes.io~empty-dir', 'scratch', 'data', 64 * 1024);
    put('kubernetes.io~configmap', 'config', 'app.yaml', 10);
    put('kubernetes.io~secret', 'token', 'token', 10);
    const got = podVolumeStats(vols, new Date(0));
    assert.deepEqual(
      got.map((v) => [v.name, v.ephemeral]),
      [
        ['scratch', true],
        ['config', true],
        ['token', false],
      ],
    );
    const scratch = got[0]!;
    assert.ok(scratch.usedBytes! >= 64n * 1024n, 'blocks of the 64 KiB file');
    assert.equal(scratch.inodesUsed, 2n, 'the dir and its file');
    assert.ok(scratch.capacityBytes! > 0n && scratch.availableBytes! > 0n && scratch.inodes! > 0n);
    assert.deepEqual(podVolumeStats(join(vols, 'absent'), new Date(0)), []);
  });
});

describe('provider: rootfs, logs, volume, ephemeral-storage, network in the Summary', () => {
  it('puts the CRI writable layer, the log dir and the volumes in upstream keys, and sums them', async () => {
    const root = mkdtempSync(join(dir, 'prov-'));
    const tree = makeCgroupTree(join(root, 'cg'), { mode: 'v2', pods: 1, containersPerPod: 2 });
    const pod = tree.pods[0]!;
    const c1 = pod.containers[0];
    const logs = join(root, 'logs', podLogsDirName(pod));
    mkdirSync(join(logs, c1!.name), { recursive: true });
    writeFileSync(join(logs, c1!.name, '0.log'), Buffer.alloc(8192, 1));
    const vol = join(root, 'pods', pod.uid, 'volumes', 'kubernetes.io~empty-dir', 'cache');
    mkdirSync(vol, { recursive: true });
    writeFileSync(join(vol, 'f'), Buffer.alloc(4096, 1));
    const p = new CgroupStatsProvider({
      nodeName: 'node-a',
      layout: createCgroupLayout(tree.mounts),
      reader: createTsCgroupReader(),
      listPods: async () => structuredClone(tree.pods),
      cgroupRoot: '/',
      rootDir: root,
      podLogsDir: join(root, 'logs'),
      memoryCapacity: 8n << 30n,
      housekeepingIntervalMs: 10_000,
      bootTime: new Date(0),
      imageFsPath: async () => root,
      containerFs: async () => new Map([[c1!.id, { usedBytes: 1_000_000n, inodesUsed: 30n }]]),
    });
    try {
      const j = JSON.parse(stringifyExact(buildSummary(await p.collect())));
      const [a, b] = j.pods[0].containers;
      assert.equal(a.rootfs.usedBytes, 1_000_000);
      assert.equal(a.rootfs.inodesUsed, 30);
      assert.ok(a.rootfs.capacityBytes > 0, 'rootfs capacity: the image filesystem');
      assert.ok(a.logs.usedBytes >= 8192);
      assert.equal('rootfs' in b, false, 'no writable layer reported: no rootfs');
      assert.equal('logs' in b, false, 'no log dir: no logs');
      assert.deepEqual(
        j.pods[0].volume.map((v: { name: string }) => v.name),
        ['cache'],
      );
      const eph = j.pods[0]['ephemeral-storage'];
      assert.ok(eph.usedBytes >= 1_000_000 + 8192 + 4096, 'writable layers + logs + emptyDir');
      assert.ok(eph.inodesUsed >= 30 + 3 + 2);
      if (j.node.network) assert.ok(Array.isArray(j.node.network.interfaces), 'node.network lists interfaces');
      const only = JSON.parse(stringifyExact(buildSummary(await p.collect(), true)));
      assert.equal('rootfs' in only.pods[0].containers[0], false, 'only_cpu_and_memory: no rootfs');
      assert.equal('volume' in only.pods[0], false);
    } finally {
      p.stop();
    }
  });
});
