// The termination-message reader as a table: upstream kuberuntime_container.go getTerminationMessage
// (with tail.ReadAtMost), readLastStringFromContainerLogs and convertToKubeContainerStatus's
// fallbackToLogs, and the cases of upstream's conformance tests "Container Runtime blackbox test on
// terminated container" (test/e2e/common/node/runtime.go): the message from the file, as non-root at a
// non-default path, from the log output with FallbackToLogsOnError, empty when the pod succeeds with
// FallbackToLogsOnError, and from the file when the pod succeeds with FallbackToLogsOnError. Rows
// marked `ours` are deliberate differences (docs/differences.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Container, Pod } from '../../src/api/types.js';
import type { Mount } from '../../src/cri/types.js';
import {
  MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH,
  discardTerminationMessageFile,
  getTerminationMessage,
  lastLogString,
  makeTerminationMessageMount,
  mayFallBackToLogs,
  ownMessageFile,
  removeTerminationMessageFile,
  terminationMessage,
  type ExitedContainer,
} from '../../src/kuberuntime/termination-message.js';
import { testTempDir } from '../support/temp-dir.js';

const PATH = '/dev/termination-log';
const logLine = (i: number, stream = 'stdout') =>
  `2026-11-27T13:00:00.${String(i).padStart(9, '0')}Z ${stream} F line ${i}\n`;

test('getTerminationMessage (upstream getTerminationMessage): the file found through the status mounts', async (t) => {
  const dir = testTempDir('kts-tmsg-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = async (name: string, content: string | Buffer) => {
    await writeFile(join(dir, name), content);
    return join(dir, name);
  };
  const at = (hostPath: string, containerPath = PATH): Mount[] => [
    { containerPath: '/data', hostPath: dir, readonly: false },
    { containerPath, hostPath, readonly: false },
  ];
  const big = Buffer.concat([Buffer.from('HEAD'), Buffer.alloc(5000, 'x'), Buffer.from('TAIL')]);
  await mkdir(join(dir, 'a-dir'));
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  const rows: Array<{
    name: string;
    mounts: Mount[];
    path?: string;
    fallback: boolean;
    message: string | RegExp;
    checkLogs: boolean;
  }> = [
    {
      name: 'no terminationMessagePath: nothing read',
      mounts: at(await file('a', 'x')),
      path: '',
      fallback: true,
      message: '',
      checkLogs: true,
    },
    {
      name: 'no mount at the path',
      mounts: at(await file('b', 'x'), '/other'),
      fallback: false,
      message: '',
      checkLogs: false,
    },
    { name: 'no mount at the path, fallback allowed', mounts: [], fallback: true, message: '', checkLogs: true },
    { name: 'the file is gone (ENOENT)', mounts: at(join(dir, 'gone')), fallback: true, message: '', checkLogs: true },
    {
      name: 'the file content, exactly',
      mounts: at(await file('c', 'DONE')),
      fallback: false,
      message: 'DONE',
      checkLogs: false,
    },
    {
      name: 'a non-empty file wins over the log',
      mounts: at(await file('d', 'OK')),
      fallback: true,
      message: 'OK',
      checkLogs: false,
    },
    {
      name: 'an empty file with fallback: the log',
      mounts: at(await file('e', '')),
      fallback: true,
      message: '',
      checkLogs: true,
    },
    {
      name: 'an empty file without fallback: empty',
      mounts: at(await file('f', '')),
      fallback: false,
      message: '',
      checkLogs: false,
    },
    {
      name: 'more than MaxContainerTerminationMessageLength: its last 4096 bytes',
      mounts: at(await file('g', big)),
      fallback: false,
      message: `${'x'.repeat(4092)}TAIL`,
      checkLogs: false,
    },
    // ours: upstream reads a directory and reports the read error, and blocks on a FIFO.
    {
      name: 'ours: a directory reads as empty',
      mounts: at(join(dir, 'a-dir')),
      fallback: true,
      message: '',
      checkLogs: true,
    },
    {
      name: 'ours: a FIFO reads as empty, never blocks',
      mounts: at(join(dir, 'fifo')),
      fallback: false,
      message: '',
      checkLogs: false,
    },
  ];
  for (const r of rows) {
    const got = await getTerminationMessage(r.mounts, r.path ?? PATH, r.fallback);
    assert.equal(got.message, r.message, r.name);
    assert.equal(got.checkLogs, r.checkLogs, r.name);
  }
  assert.equal(MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH, 4096);
});

test('the last 4096 bytes never start with half a character', async (t) => {
  const dir = testTempDir('kts-tmsg-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  // 'é' is two bytes: the last 4096 of these 4097 bytes start in the middle of the first one.
  const path = join(dir, 'utf8');
  await writeFile(path, 'é'.repeat(2048) + 'a');
  const { message } = await getTerminationMessage(
    [{ containerPath: PATH, hostPath: path, readonly: false }],
    PATH,
    false,
  );
  assert.equal(message, 'é'.repeat(2047) + 'a');
});

test('fallbackToLogs (upstream convertToKubeContainerStatus): FallbackToLogsOnError, a failure, a container that ran', () => {
  const c: ExitedContainer = {
    exitCode: 1,
    reason: 'Error',
    logPath: '/l',
    terminationMessagePath: PATH,
    terminationMessagePolicy: 'FallbackToLogsOnError',
    mounts: [],
  };
  assert.equal(mayFallBackToLogs(c), true);
  assert.equal(mayFallBackToLogs({ ...c, terminationMessagePolicy: 'File' }), false, 'policy File');
  assert.equal(mayFallBackToLogs({ ...c, exitCode: 0 }), false, 'the pod succeeds: no log');
  assert.equal(mayFallBackToLogs({ ...c, reason: 'ContainerCannotRun' }), false, 'it never ran: no log');
});

test('readLastStringFromContainerLogs: the last 80 lines, at most their last 2048 bytes, without the CRI prefixes', async (t) => {
  const dir = testTempDir('kts-tmsg-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const short = join(dir, 'short.log');
  await writeFile(short, logLine(1) + logLine(2, 'stderr'));
  assert.equal(await lastLogString(short), 'line 1\nline 2\n');
  const long = join(dir, 'long.log');
  await writeFile(long, Array.from({ length: 200 }, (_, i) => logLine(i)).join(''));
  const s = await lastLogString(long);
  assert.ok(s.endsWith('line 199\n'), s.slice(-20));
  assert.ok(!s.includes('line 119\n'), 'only the last 80 lines');
  const wide = join(dir, 'wide.log');
  await writeFile(wide, `2026-11-27T13:00:00.000000000Z stdout F ${'x'.repeat(5000)}END\n`);
  const w = await lastLogString(wide);
  assert.equal(w.length, 2048);
  assert.ok(w.endsWith('END\n'));
  assert.match(await lastLogString(join(dir, 'missing.log')), /^Error on reading termination message from logs: /);
});

test('the conformance cases, end to end of the reader: file, non-default path, log output, empty on success, file on success', async (t) => {
  const dir = testTempDir('kts-tmsg-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const log = join(dir, 'c.log');
  await writeFile(log, '2026-11-27T13:00:00.000000000Z stdout P DONE\n');
  const fileWith = async (name: string, content: string) => (
    await writeFile(join(dir, name), content),
    join(dir, name)
  );
  const exited = (over: Partial<ExitedContainer> & { hostPath: string }): ExitedContainer => ({
    exitCode: 0,
    reason: 'Completed',
    logPath: log,
    terminationMessagePath: PATH,
    terminationMessagePolicy: 'File',
    ...over,
    mounts: [{ containerPath: over.terminationMessagePath ?? PATH, hostPath: over.hostPath, readonly: false }],
  });
  const rows: Array<[string, ExitedContainer, string]> = [
    [
      'should report termination message if TerminationMessagePath is set',
      exited({ hostPath: await fileWith('1', 'DONE') }),
      'DONE',
    ],
    [
      'should report termination message if TerminationMessagePath is set as non-root user and at a non-default path',
      exited({ hostPath: await fileWith('2', 'DONE'), terminationMessagePath: '/dev/termination-custom-log' }),
      'DONE',
    ],
    [
      'should report termination message from log output if TerminationMessagePolicy FallbackToLogsOnError is set',
      exited({
        hostPath: await fileWith('3', ''),
        exitCode: 1,
        reason: 'Error',
        terminationMessagePolicy: 'FallbackToLogsOnError',
      }),
      'DONE',
    ],
    [
      'should report termination message as empty when pod succeeds and TerminationMessagePolicy FallbackToLogsOnError is set',
      exited({ hostPath: await fileWith('4', ''), terminationMessagePolicy: 'FallbackToLogsOnError' }),
      '',
    ],
    [
      'should report termination message from file when pod succeeds and TerminationMessagePolicy FallbackToLogsOnError is set',
      exited({ hostPath: await fileWith('5', 'OK'), terminationMessagePolicy: 'FallbackToLogsOnError' }),
      'OK',
    ],
    [
      'a failed container with a message file: the file, not the log',
      exited({ hostPath: await fileWith('6', 'why'), exitCode: 2, terminationMessagePolicy: 'FallbackToLogsOnError' }),
      'why',
    ],
    [
      'no log path: no log to read',
      {
        ...exited({ hostPath: join(dir, 'none'), exitCode: 1, terminationMessagePolicy: 'FallbackToLogsOnError' }),
        logPath: '',
      },
      '',
    ],
  ];
  for (const [name, c, want] of rows) assert.equal(await terminationMessage(c), want, name);
});

const pod = (uid: string): Pod => ({ metadata: { name: 'p', namespace: 'ns', uid }, spec: { containers: [] } });
const ctr = (extra: Partial<Container> = {}): Container =>
  ({ name: 'main', image: 'busybox', terminationMessagePath: PATH, ...extra }) as Container;

test('makeMounts: a fresh empty file per container instance, 0666 whatever the umask, at <pod dir>/containers/<name>/', async (t) => {
  const root = testTempDir('kts-tmsg-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const podDir = join(root, 'pods', 'uid-1');
  const oldMask = process.umask(0o077);
  let first, second;
  try {
    first = (await makeTerminationMessageMount(podDir, ctr()))!;
    second = (await makeTerminationMessageMount(podDir, ctr()))!;
  } finally {
    process.umask(oldMask);
  }
  assert.equal(first.containerPath, PATH);
  assert.equal(first.readonly, false);
  assert.match(first.hostPath, new RegExp(`^${join(podDir, 'containers', 'main')}/[0-9a-f]{8}$`));
  assert.notEqual(first.hostPath, second.hostPath, 'each instance its own file');
  const st = statSync(first.hostPath);
  assert.equal(st.size, 0);
  assert.equal(st.mode & 0o777, 0o666);
  assert.deepEqual(
    await makeTerminationMessageMount(podDir, ctr({ terminationMessagePath: '/tmp/msg' })).then(
      (m) => m?.containerPath,
    ),
    '/tmp/msg',
  );
  assert.equal(
    await makeTerminationMessageMount(podDir, ctr({ terminationMessagePath: '' })),
    undefined,
    'no path: none',
  );
  // As upstream, a file that cannot be made leaves the container without one (logged), never fails it.
  await writeFile(join(root, 'not-a-dir'), '');
  assert.equal(await makeTerminationMessageMount(join(root, 'not-a-dir'), ctr()), undefined);
  assert.equal(await makeTerminationMessageMount(podDir, ctr({ name: '../escape' })), undefined);
});

test('only a message file this agent made is removed with its container', async (t) => {
  const root = testTempDir('kts-tmsg-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const podDir = join(root, 'pods', 'uid-1');
  const m = (await makeTerminationMessageMount(podDir, ctr()))!;
  const who = { podUid: 'uid-1', containerName: 'main', terminationMessagePath: PATH };
  const volume = { containerPath: '/data', hostPath: join(root, 'data'), readonly: false };
  assert.equal(ownMessageFile({ mounts: [volume, m] }, who), m.hostPath);
  assert.equal(ownMessageFile({ mounts: [m] }, { ...who, podUid: 'uid-2' }), undefined, 'another pod');
  assert.equal(ownMessageFile({ mounts: [m] }, { ...who, containerName: 'other' }), undefined, 'another container');
  assert.equal(ownMessageFile({ mounts: [m] }, { ...who, terminationMessagePath: '/x' }), undefined, 'not at the path');
  assert.equal(ownMessageFile({ mounts: [m] }, { ...who, terminationMessagePath: '' }), undefined, 'no path');
  // A hostPath volume bound at the message path is the user's file.
  const hostFile = { containerPath: PATH, hostPath: join(root, 'etc', 'important'), readonly: false };
  assert.equal(ownMessageFile({ mounts: [hostFile] }, who), undefined);
  assert.equal(ownMessageFile({}, who), undefined, 'a runtime that reports no mounts');
  await removeTerminationMessageFile(m.hostPath);
  assert.equal(existsSync(m.hostPath), false);
  await removeTerminationMessageFile(m.hostPath); // gone already: fine
  // A directory where the file was is left alone.
  await mkdir(m.hostPath);
  await removeTerminationMessageFile(m.hostPath);
  assert.equal(existsSync(m.hostPath), true);
});

test('a container the runtime refused to create leaves no message file', async (t) => {
  const root = testTempDir('kts-tmsg-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const podDir = join(root, 'pods', 'uid-1');
  const m = (await makeTerminationMessageMount(podDir, ctr()))!;
  await discardTerminationMessageFile(pod('uid-1'), ctr(), { mounts: [m] });
  assert.deepEqual(await readdir(join(podDir, 'containers', 'main')), []);
});
