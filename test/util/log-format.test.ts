import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { formatJson, formatText, goQuote, type LogRecord } from '../../src/util/log-format.js';
import { callerOf, nowMs, recordFromCall, releaseSourceMaps } from '../../src/util/log.js';
import { Recorder } from '../../src/events/recorder.js';
import { captureLogs } from '../support/logs.js';

// A fixed instant, local time as klog prints it.
const T = new Date(2026, 10, 23, 16, 20, 33, 123).getTime();
const PID = String(process.pid).padStart(7);
const rec = (r: Partial<LogRecord>): LogRecord => ({
  timeMs: T,
  severity: 'I',
  v: 0,
  caller: 'kubelet/kubelet.ts:123',
  msg: 'msg',
  kv: [],
  ...r,
});

// upstream staging/src/k8s.io/component-base/logs/json/klog_test.go TestKlogIntegration (InfoS, V(n).InfoS, KObj, ErrorS, Warning)
describe('JSON lines as component-base writes them', () => {
  const cases: Array<{ name: string; r: Partial<LogRecord>; want: string }> = [
    {
      name: 'InfoS',
      r: { msg: 'test', kv: [['count', 1]] },
      want: `{"ts":${T},"caller":"kubelet/kubelet.ts:123","msg":"test","v":0,"count":1}`,
    },
    {
      name: 'V(2).InfoS',
      r: { msg: 'test', v: 2, kv: [['count', 1]] },
      want: `{"ts":${T},"caller":"kubelet/kubelet.ts:123","msg":"test","v":2,"count":1}`,
    },
    {
      name: 'nested object',
      r: { msg: 'some', kv: [['pod', { name: 'pod-1', namespace: 'kube-system' }]] },
      want: `{"ts":${T},"caller":"kubelet/kubelet.ts:123","msg":"some","v":0,"pod":{"name":"pod-1","namespace":"kube-system"}}`,
    },
    {
      name: 'array of objects',
      r: { msg: 'several', kv: [['pods', [{ name: 'a' }, { name: 'b' }]]] },
      want: `{"ts":${T},"caller":"kubelet/kubelet.ts:123","msg":"several","v":0,"pods":[{"name":"a"},{"name":"b"}]}`,
    },
    {
      name: 'Warning is V(0)',
      r: { severity: 'W', msg: 'test' },
      want: `{"ts":${T},"caller":"kubelet/kubelet.ts:123","msg":"test","v":0}`,
    },
    {
      name: 'ErrorS: no v, pairs, then err',
      r: { severity: 'E', v: undefined, msg: 'test', kv: [['count', 1]], err: 'fail' },
      want: `{"ts":${T},"caller":"kubelet/kubelet.ts:123","msg":"test","count":1,"err":"fail"}`,
    },
    {
      name: 'named logger',
      r: { logger: 'pleg', msg: 'x' },
      want: `{"ts":${T},"logger":"pleg","caller":"kubelet/kubelet.ts:123","msg":"x","v":0}`,
    },
    {
      name: 'quotes and newlines escaped',
      r: { msg: 'a "b"\nc', kv: [['s', 'x\ty']] },
      want: `{"ts":${T},"caller":"kubelet/kubelet.ts:123","msg":"a \\"b\\"\\nc","v":0,"s":"x\\ty"}`,
    },
    {
      name: 'undefined values dropped, null kept',
      r: {
        msg: 'x',
        kv: [
          ['a', undefined],
          ['b', null],
        ],
      },
      want: `{"ts":${T},"caller":"kubelet/kubelet.ts:123","msg":"x","v":0,"b":null}`,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const line = formatJson(rec(c.r));
      assert.equal(line, c.want + '\n');
      JSON.parse(line); // one valid JSON document per line
    });
  }

  it('a cycle or a BigInt does not throw', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const line = formatJson(
      rec({
        kv: [
          ['c', cyclic],
          ['big', 10n],
        ],
      }),
    );
    assert.match(line, /"c":"<internal error: /);
    assert.match(line, /"big":"10"/);
  });
});

// upstream k8s.io/klog/v2 internal/serialize keyvalues_test.go TestKvListFormat and klog_test.go TestInfoS/TestErrorS
describe('text lines as klog writes them', () => {
  const head = (sev: string, file = 'kubelet.ts:123') => `${sev}1123 16:20:33.123000 ${PID} ${file}] `;
  const cases: Array<{ name: string; r: Partial<LogRecord>; want: string }> = [
    {
      name: 'InfoS with string and int',
      r: {
        msg: 'test',
        kv: [
          ['pod', 'kubedns'],
          ['count', 3],
        ],
      },
      want: `${head('I')}"test" pod="kubedns" count=3`,
    },
    { name: 'severity letters', r: { severity: 'W', msg: 'w' }, want: `${head('W')}"w"` },
    {
      name: 'ErrorS: err first',
      r: { severity: 'E', v: undefined, msg: 'failed', kv: [['pod', 'a']], err: 'boom' },
      want: `${head('E')}"failed" err="boom" pod="a"`,
    },
    { name: 'fatal', r: { severity: 'F', v: undefined, msg: 'bye' }, want: `${head('F')}"bye"` },
    {
      name: 'bool, null, nested object as JSON',
      r: {
        msg: 'x',
        kv: [
          ['ok', true],
          ['none', null],
          ['obj', { a: [1, 'b'] }],
        ],
      },
      want: `${head('I')}"x" ok=true none=null obj={"a":[1,"b"]}`,
    },
    {
      name: 'quotes in message and value',
      r: { msg: 'say "hi"', kv: [['q', 'a"b']] },
      want: `${head('I')}"say \\"hi\\"" q="a\\"b"`,
    },
    {
      name: 'multi-line value',
      r: { msg: 'x', kv: [['text', 'hello\nworld']] },
      want: `${head('I')}"x" text=<\n\thello\n\tworld\n >`,
    },
    {
      name: 'multi-line value ending with a newline',
      r: { msg: 'x', kv: [['text', 'hello\nworld\n']] },
      want: `${head('I')}"x" text=<\n\thello\n\tworld\n >`,
    },
    { name: 'newline in the message stays quoted', r: { msg: 'a\nb' }, want: `${head('I')}"a\\nb"` },
    { name: 'named logger', r: { logger: 'pleg', msg: 'x' }, want: `${head('I')}"x" logger="pleg"` },
    {
      name: 'header shows the file only',
      r: { caller: 'pleg/generic.ts:7' },
      want: `${head('I', 'generic.ts:7')}"msg"`,
    },
    { name: 'unknown caller', r: { caller: '' }, want: `${head('I', '???:1')}"msg"` },
  ];
  for (const c of cases) it(c.name, () => assert.equal(formatText(rec(c.r)), c.want + '\n'));

  it('control characters quoted as Go strconv.Quote does', () => {
    assert.equal(goQuote('a\u0007b\u000bc\u0001d\u007f'), '"a\\ab\\vc\\x01d\\x7f"');
    assert.equal(goQuote('tab\there'), '"tab\\there"');
  });
});

describe('line time', () => {
  it('sub-millisecond, and within a millisecond of the wall clock', () => {
    for (let i = 0; i < 1000; i++) {
      const before = Date.now();
      const t = nowMs();
      const after = Date.now();
      assert.ok(t > before - 1 && t < after + 1, `${before} ${t} ${after}`);
    }
  });
});

describe('pino call arguments become a record', () => {
  it('(obj, msg): pairs in order after the bindings, err pulled out, component as logger', () => {
    const r = recordFromCall([{ pod: 'a', err: new Error('boom'), n: 1 }, 'failed %s', 'twice'], {
      component: 'pleg',
      worker: 3,
    });
    assert.deepEqual(r, {
      msg: 'failed twice',
      kv: [
        ['worker', 3],
        ['pod', 'a'],
        ['n', 1],
      ],
      err: 'boom',
      logger: 'pleg',
    });
  });
  it('(err, msg) and (err) alone', () => {
    assert.deepEqual(recordFromCall([new Error('x'), 'm'], {}), { msg: 'm', kv: [], err: 'x', logger: undefined });
    assert.deepEqual(recordFromCall([new Error('x')], {}), { msg: 'x', kv: [], err: 'x', logger: undefined });
  });
  it('a string err stays a string', () => {
    assert.equal(recordFromCall([{ err: 'plain' }, 'm'], {}).err, 'plain');
  });
});

describe('the process logger end to end (a child process writing to stderr)', () => {
  const emitter = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'log-emitter.js');
  const run = (format: string, v: number) => {
    const r = spawnSync(process.execPath, [emitter, format, String(v)], {
      encoding: 'utf8',
      env: { ...process.env, KUBELET_TS_LOG_LEVEL: '' },
    });
    assert.equal(r.status, 0, r.stderr);
    return r.stderr.split('\n').filter(Boolean);
  };

  it('json: one document per line, caller mapped to the .ts file and line', () => {
    const lines = run('json', 0).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((l) => l.msg),
      ['info line', 'warn line', 'error line'],
    );
    assert.deepEqual(Object.keys(lines[0]!), ['ts', 'logger', 'caller', 'msg', 'v', 'n']);
    assert.equal(lines[0]!.caller, 'fixtures/log-emitter.ts:9');
    assert.equal(typeof lines[0]!.ts, 'number');
    assert.ok(Math.abs((lines[0]!.ts as number) - Date.now()) < 60_000, 'ts is epoch milliseconds, as component-base');
    assert.deepEqual(lines[2], { ...lines[2], msg: 'error line', err: 'boom' });
    assert.equal('v' in lines[2]!, false);
  });

  it('text: klog header with severity, pid and file:line', () => {
    const lines = run('text', 0);
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ log-emitter\.ts:9\] "info line" logger="pleg" n=0$/);
    assert.match(lines[1]!, /^W\d{4} .* log-emitter\.ts:10\] "warn line"/);
    assert.match(lines[2]!, /^E\d{4} .* log-emitter\.ts:11\] "error line" err="boom" logger="pleg"$/);
  });

  // upstream component-base/logs/json/klog_test.go TestKlogV: V(j) is written iff j <= -v
  for (const [v, want] of [
    [0, ['info line', 'warn line', 'error line']],
    [1, ['info line', 'warn line', 'error line']],
    [2, ['debug line', 'info line', 'warn line', 'error line']],
    [4, ['trace line', 'debug line', 'info line', 'warn line', 'error line']],
  ] as const) {
    it(`-v ${v}`, () =>
      assert.deepEqual(
        run('json', v).map((l) => (JSON.parse(l) as { msg: string }).msg),
        want,
      ));
  }
});

describe('caller', () => {
  // Issue 18: the parsed source maps are dropped once call sites stop being new (they held
  // 2.2 MiB of heap at 100 pods); call sites resolved before stay, a new one reads its map again.
  it('maps to the .ts line before and after the source maps are dropped', () => {
    const first = callerOf();
    assert.match(first, /^util\/log-format\.test\.ts:\d+$/);
    assert.ok(releaseSourceMaps() >= 1, "the test file's map was held");
    const second = callerOf();
    assert.match(second, /^util\/log-format\.test\.ts:\d+$/);
    assert.equal(
      Number(second.split(':')[1]),
      Number(first.split(':')[1]) + 3,
      'the next call site, three .ts lines below',
    );
    assert.equal(releaseSourceMaps(), 1, 'read again for the new call site, once');
    assert.equal(releaseSourceMaps(), 0);
  });
});

describe('events in the log', () => {
  it('one "Event occurred" line whose message appears once', async () => {
    const lines = await captureLogs(async () => {
      new Recorder().event(
        { kind: 'Pod', namespace: 'ns', name: 'p', fieldPath: 'spec.containers{right}' },
        'Normal',
        'Killing',
        'Stopping container right',
      );
    });
    const ev = lines.filter((l) => l.msg === 'Event occurred');
    assert.equal(ev.length, 1);
    assert.deepEqual(
      { ...ev[0], level: undefined, time: undefined, pid: undefined, hostname: undefined },
      {
        level: undefined,
        time: undefined,
        pid: undefined,
        hostname: undefined,
        component: 'events',
        object: 'Pod/ns/p',
        fieldPath: 'spec.containers{right}',
        kind: 'Pod',
        type: 'Normal',
        reason: 'Killing',
        message: 'Stopping container right',
        msg: 'Event occurred',
      },
    );
    assert.equal(JSON.stringify(ev[0]).split('Stopping container right').length - 1, 1);
  });
});
