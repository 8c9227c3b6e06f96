// Differential tests of the relist differ (src/pleg/relist-types.ts): the native addon, the
// TypeScript twin and the conventional reference (protobufjs + generateEvents) fed the same
// random relist sequences must agree at every step; malformed bytes must give the same error
// from both skim decoders and leave the retained state alone. Seeded: a failure names its seed.
// Runs under AddressSanitizer in scripts/test-native-asan.sh.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { implementations } from '../../src/cmd/hot-paths.js';
import { KubeletError } from '../../src/errors.js';
import type { RelistDiffer, RelistResult } from '../../src/pleg/relist-types.js';
import { createConventionalDiffer } from '../../bench/fixtures/relist-conventional.js';
import { encodeContainers, encodeSandboxes, PbWriter, POD_UID, CONTAINER_NAME, RandomNode, Rng } from '../../bench/fixtures/relist-model.js';

const impls = implementations('pleg');
const SEEDS = Number(process.env['KTS_PLEG_SEEDS'] ?? 24);
const STEPS = Number(process.env['KTS_PLEG_STEPS'] ?? 300);

type Outcome = { ok: RelistResult } | { error: string };

function attempt(d: RelistDiffer, sb: Uint8Array, ct: Uint8Array): Outcome {
  try {
    return { ok: d.diff(sb, ct) };
  } catch (err) {
    assert.ok(err instanceof KubeletError, `not a KubeletError: ${String(err)}`);
    assert.equal(err.code, 'KTS_ERR_CRI_REPLY');
    return { error: err.message };
  }
}

function plain(r: RelistResult) {
  return { events: r.events, pods: [...r.pods.entries()], counts: r.counts };
}

it('has the TypeScript twin (and the native one when the addon is built)', () => {
  assert.deepEqual(
    impls.map((i) => i.name),
    impls.length === 2 ? ['native', 'ts'] : ['ts'],
  );
});

describe('random relist sequences: native, TS and conventional agree at every step', () => {
  for (let seed = 1; seed <= SEEDS; seed++) {
    it(`seed ${seed}, ${STEPS} relists`, () => {
      const node = new RandomNode(seed);
      const rng = new Rng(seed * 7919);
      const oracle = createConventionalDiffer();
      const differs = impls.map((i) => ({ name: i.name, d: i.createRelistDiffer() }));
      const seen = new Set<string>();
      let events = 0;
      for (let step = 0; step < STEPS; step++) {
        node.step();
        const { sandboxes, containers } = node.lists();
        const sb = encodeSandboxes(sandboxes);
        const ct = encodeContainers(containers);
        const want = plain(oracle.diff(sb, ct));
        events += want.events.length;
        for (const { name, d } of differs) assert.deepEqual(plain(d.diff(sb, ct)), want, `seed ${seed} step ${step}: ${name} differs from the reference`);
        for (const [uid] of want.pods) seen.add(uid);
        for (const p of node.pods) seen.add(p.uid);
        // podInfo for everything ever seen, including pods long gone.
        if (step % 5 === 0) {
          for (const uid of seen) {
            const info = oracle.podInfo(uid);
            for (const { name, d } of differs) assert.deepEqual(d.podInfo(uid), info, `seed ${seed} step ${step}: ${name} podInfo(${uid})`);
          }
        }
        // Failed inspections: some pods with events keep their previous records.
        if (want.pods.length > 0 && rng.chance(0.3)) {
          const uids = want.pods.map(([uid]) => uid).filter(() => rng.chance(0.5));
          if (rng.chance(0.2)) uids.push(uids[0] ?? 'unknown-uid'); // twice in one call
          oracle.keepPrevious(uids);
          for (const { d } of differs) d.keepPrevious(uids);
        }
        if (rng.chance(0.01)) {
          oracle.reset();
          for (const { d } of differs) d.reset();
        }
      }
      assert.ok(events > STEPS / 2, `the sequence should have events (${events})`);
      for (const { d } of differs) d.close();
    });
  }
});

/** Random damage to a valid encoding. */
function mutate(rng: Rng, src: Buffer): Buffer {
  const b = Buffer.from(src);
  switch (rng.int(7)) {
    case 0: // flip bits
      for (let i = 0, n = 1 + rng.int(4); i < n && b.length > 0; i++) b[rng.int(b.length)]! ^= 1 << rng.int(8);
      return b;
    case 1: // truncate
      return b.subarray(0, rng.int(b.length + 1));
    case 2: // overwrite a byte with an interesting value
      if (b.length > 0) b[rng.int(b.length)] = rng.pick([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0a, 0x7f, 0x80, 0xff, 0x0b, 0x0c]);
      return b;
    case 3: {
      // insert garbage
      const at = rng.int(b.length + 1);
      const junk = Buffer.from(Array.from({ length: 1 + rng.int(12) }, () => rng.pick([0x80, 0xff, 0x08, 0x0a, 0x12, 0x01, 0x00, 0x3f])));
      return Buffer.concat([b.subarray(0, at), junk, b.subarray(at)]);
    }
    case 4: {
      // delete a range
      const at = rng.int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + rng.int(8)))]);
    }
    case 5: {
      // duplicate a range (fields repeated, merged)
      const at = rng.int(b.length + 1);
      const end = Math.min(b.length, at + rng.int(64));
      return Buffer.concat([b.subarray(0, end), b.subarray(at, end), b.subarray(end)]);
    }
    default: // a 10+ byte varint somewhere
      {
        const at = rng.int(b.length + 1);
        const v = Buffer.alloc(9 + rng.int(3), 0xff);
        v[v.length - 1] = rng.pick([0x01, 0x7f, 0xff, 0x02]);
        return Buffer.concat([b.subarray(0, at), v, b.subarray(at)]);
      }
  }
}

describe('malformed replies', () => {
  it('random damage: both skim decoders give the same error or the same result, and keep their state', () => {
    const node = new RandomNode(4242);
    const rng = new Rng(99);
    const differs = impls.map((i) => ({ name: i.name, d: i.createRelistDiffer() }));
    const oracle = createConventionalDiffer();
    let errors = 0;
    const cases = Number(process.env['KTS_PLEG_MUTATIONS'] ?? 3000);
    for (let i = 0; i < cases; i++) {
      if (i % 10 === 0) node.step();
      const { sandboxes, containers } = node.lists();
      let sb = encodeSandboxes(sandboxes);
      let ct = encodeContainers(containers);
      if (rng.chance(0.5)) sb = mutate(rng, sb);
      else ct = mutate(rng, ct);
      const outcomes = differs.map(({ d }) => attempt(d, sb, ct));
      const first = outcomes[0]!;
      if ('error' in first) errors++;
      for (let k = 1; k < outcomes.length; k++) {
        const o = outcomes[k]!;
        assert.deepEqual('error' in o ? o : plain(o.ok), 'error' in first ? first : plain(first.ok), `case ${i}: ${differs[k]!.name} vs ${differs[0]!.name}`);
      }
      if ('error' in first) continue;
      // Accepted damage moved the state: resynchronise everyone on the next valid relist.
      oracle.reset();
      for (const { d } of differs) d.reset();
      const good = node.lists();
      const gsb = encodeSandboxes(good.sandboxes);
      const gct = encodeContainers(good.containers);
      const want = plain(oracle.diff(gsb, gct));
      for (const { name, d } of differs) assert.deepEqual(plain(d.diff(gsb, gct)), want, `case ${i}: ${name} after resync`);
    }
    assert.ok(errors > cases / 4, `most damage should be detected (${errors}/${cases})`);
  });

  it('a rejected reply leaves the retained state exactly as it was', () => {
    const node = new RandomNode(77);
    const rng = new Rng(5);
    const oracle = createConventionalDiffer();
    const differs = impls.map((i) => ({ name: i.name, d: i.createRelistDiffer() }));
    for (let step = 0; step < 200; step++) {
      node.step();
      const { sandboxes, containers } = node.lists();
      const sb = encodeSandboxes(sandboxes);
      const ct = encodeContainers(containers);
      // A truncated reply first (rejected), then the real one: same as without the bad one.
      const bad = ct.length > 2 ? ct.subarray(0, ct.length - 1 - rng.int(2)) : Buffer.from([0x0a, 0x05]);
      for (const { name, d } of differs) assert.ok('error' in attempt(d, sb, bad), `${name}: truncated reply accepted at step ${step}`);
      const want = plain(oracle.diff(sb, ct));
      for (const { name, d } of differs) assert.deepEqual(plain(d.diff(sb, ct)), want, `step ${step}: ${name}`);
    }
  });

  it('every truncation of a valid reply: same outcome from both', () => {
    const node = new RandomNode(3);
    for (let i = 0; i < 5; i++) node.step();
    const { sandboxes, containers } = node.lists();
    const sb = encodeSandboxes(sandboxes);
    const ct = encodeContainers(containers.slice(0, 4));
    for (const [which, buf] of [['sandboxes', sb], ['containers', ct]] as const) {
      for (let cut = 0; cut <= buf.length; cut++) {
        const part = buf.subarray(0, cut);
        const outcomes = impls.map((i) => {
          const d = i.createRelistDiffer();
          return which === 'sandboxes' ? attempt(d, part, Buffer.alloc(0)) : attempt(d, Buffer.alloc(0), part);
        });
        const norm = outcomes.map((o) => ('error' in o ? o : plain(o.ok)));
        for (let k = 1; k < norm.length; k++) assert.deepEqual(norm[k], norm[0], `${which} cut at ${cut}`);
      }
    }
  });

  const container = (fill: (w: PbWriter) => void) => new PbWriter().message(1, fill).finish();
  const labels = (w: PbWriter) => w.map(8, [[POD_UID, 'u'], [CONTAINER_NAME, 'c']]);
  const table: Array<[string, 'sandboxes' | 'containers', Buffer, string]> = [
    ['truncated tag varint', 'containers', Buffer.from([0x80]), 'ListContainersResponse: truncated varint at byte 0'],
    ['varint over 10 bytes', 'containers', Buffer.alloc(11, 0xff), 'ListContainersResponse: varint longer than 10 bytes at byte 0'],
    ['tag over 32 bits', 'containers', Buffer.from([0x80, 0x80, 0x80, 0x80, 0x10]), 'ListContainersResponse: tag 4294967296 out of range at byte 0'],
    ['field number 0', 'containers', Buffer.from([0x02, 0x00]), 'ListContainersResponse: field number 0 at byte 0'],
    ['length past end', 'containers', Buffer.from([0x0a, 0x05, 0x00]), 'ListContainersResponse: field 1: length 5 past end (1 bytes left) at byte 0'],
    ['huge length', 'containers', Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), 'ListContainersResponse: field 1: length 18446744073709551615 past end (0 bytes left) at byte 0'],
    ['truncated length', 'containers', Buffer.from([0x0a, 0x80]), 'ListContainersResponse: field 1: truncated length at byte 0'],
    ['wrong wire type at the top', 'containers', Buffer.from([0x08, 0x01]), 'ListContainersResponse: field 1: wire type 0, expected 2 at byte 0'],
    ['group wire type', 'containers', Buffer.from([0x13]), 'ListContainersResponse: field 2: group wire type 3 not supported at byte 0'],
    ['end group', 'containers', Buffer.from([0x0c]), 'ListContainersResponse: field 1: group wire type 4 not supported at byte 0'],
    ['wire type 6', 'containers', Buffer.from([0x0e]), 'ListContainersResponse: field 1: invalid wire type 6 at byte 0'],
    ['truncated fixed64', 'containers', Buffer.from([0x11, 1, 2, 3]), 'ListContainersResponse: field 2: truncated fixed64 at byte 0'],
    ['truncated fixed32', 'containers', Buffer.from([0x15, 1, 2, 3]), 'ListContainersResponse: field 2: truncated fixed32 at byte 0'],
    [
      'id with the wrong wire type',
      'containers',
      Buffer.concat([container((w) => w.str(1, 'ok').map(8, [])), container((w) => w.tag(1, 0).uvarint(3))]),
      'ListContainersResponse containers[1]: field 1: wire type 0, expected 2 at byte 8',
    ],
    ['state with the wrong wire type', 'containers', container((w) => w.str(1, 'c').bytes(6, 'x')), 'ListContainersResponse containers[0]: field 6: wire type 2, expected 0 at byte 5'],
    ['truncated state', 'containers', container((w) => w.str(1, 'c').tag(6, 0).raw(Buffer.from([0x80]))), 'ListContainersResponse containers[0]: field 6: truncated varint at byte 5'],
    ['labels not a message', 'containers', container((w) => w.tag(8, 0).uvarint(1)), 'ListContainersResponse containers[0]: field 8: wire type 0, expected 2 at byte 2'],
    ['label key with the wrong wire type', 'containers', container((w) => w.message(8, (e) => e.tag(1, 5).raw(Buffer.alloc(4)))), 'ListContainersResponse containers[0].labels: field 1: wire type 5, expected 2 at byte 4'],
    ['label value past end', 'containers', container((w) => w.bytes(8, Buffer.from([0x12, 0x09, 0x41]))), 'ListContainersResponse containers[0].labels: field 2: length 9 past end (1 bytes left) at byte 4'],
    ['bad container after a good one', 'containers', Buffer.concat([container((w) => labels(w.str(1, 'a'))), Buffer.from([0x0a, 0x01, 0x08])]), 'ListContainersResponse containers[1]: field 1: truncated varint at byte 70'],
    ['sandbox: truncated', 'sandboxes', Buffer.from([0x0a, 0x03, 0x0a, 0x05, 0x41]), 'ListPodSandboxResponse items[0]: field 1: length 5 past end (1 bytes left) at byte 2'],
    ['sandbox: state with the wrong wire type', 'sandboxes', new PbWriter().message(1, (w) => w.tag(3, 1).raw(Buffer.alloc(8))).finish(), 'ListPodSandboxResponse items[0]: field 3: wire type 1, expected 0 at byte 2'],
    ['sandbox: metadata name with the wrong wire type', 'sandboxes', new PbWriter().message(1, (w) => w.message(2, (m) => m.tag(1, 0).uvarint(1))).finish(), 'ListPodSandboxResponse items[0].metadata: field 1: wire type 0, expected 2 at byte 4'],
    ['sandbox: labels malformed', 'sandboxes', new PbWriter().message(1, (w) => w.bytes(5, Buffer.from([0xff]))).finish(), 'ListPodSandboxResponse items[0].labels: truncated varint at byte 4'],
  ];
  for (const impl of impls) {
    for (const [name, which, bytes, message] of table) {
      it(`${impl.name}: ${name}`, () => {
        const d = impl.createRelistDiffer();
        const before = d.diff(Buffer.alloc(0), container((w) => labels(w.str(1, 'keep'))));
        assert.equal(before.events.length, 1);
        const out = which === 'sandboxes' ? attempt(d, bytes, Buffer.alloc(0)) : attempt(d, Buffer.alloc(0), bytes);
        assert.deepEqual(out, { error: `cannot decode ${message}` });
        // State kept: the same relist again has no events.
        assert.equal(d.diff(Buffer.alloc(0), container((w) => labels(w.str(1, 'keep')))).events.length, 0);
      });
    }
  }

  it('rejects arguments that are not byte arrays', () => {
    for (const impl of impls) {
      const d = impl.createRelistDiffer();
      assert.throws(() => d.diff('x' as unknown as Uint8Array, Buffer.alloc(0)));
    }
  });
});
