#!/usr/bin/env node
// Summarises a V8 heap snapshot (.heapsnapshot, from --heapsnapshot-signal or the inspector):
// live size by node type and by constructor, and retained sizes (dominator tree, weak edges not
// followed) of the largest retainers. Given two snapshots it prints what grew from the first to
// the second (e.g. 0 and 100 pods: the per-pod cost), by constructor.
//
//   node scripts/heap-summary.mjs <snapshot> [--top N]
//   node scripts/heap-summary.mjs <before.heapsnapshot> <after.heapsnapshot> [--per N] [--top N]
import { readFileSync } from 'node:fs';

function load(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const meta = snap.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const f = (name) => meta.node_fields.indexOf(name);
  const [typeF, nameF, sizeF, edgeCountF] = [f('type'), f('name'), f('self_size'), f('edge_count')];
  const [edgeTypeF, edgeToF] = [meta.edge_fields.indexOf('type'), meta.edge_fields.indexOf('to_node')];
  const n = snap.nodes.length / nf;
  const firstEdge = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) firstEdge[i + 1] = firstEdge[i] + snap.nodes[i * nf + edgeCountF] * ef;
  const weak = edgeTypes.indexOf('weak');
  return {
    n,
    type: (i) => nodeTypes[snap.nodes[i * nf + typeF]],
    name: (i) => snap.strings[snap.nodes[i * nf + nameF]],
    size: (i) => snap.nodes[i * nf + sizeF],
    /** Strong children of node i (node indexes). */
    children(i, out) {
      out.length = 0;
      for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += ef)
        if (snap.edges[e + edgeTypeF] !== weak) out.push(snap.edges[e + edgeToF] / nf);
      return out;
    },
  };
}

/** A label per node: the constructor or kind a reader recognises. */
function label(h, i) {
  const t = h.type(i);
  if (t === 'object' || t === 'native') return h.name(i).split(' ')[0] || t;
  if (t === 'closure') return '(closure)';
  if (t === 'string' || t === 'concatenated string' || t === 'sliced string') return '(string)';
  return `(${t})`;
}

/** Retained sizes through the dominator tree (Cooper, Harvey, Kennedy), root = node 0. */
function retained(h) {
  const order = new Int32Array(h.n).fill(-1); // post-order number
  const post = [];
  const preds = Array.from({ length: h.n }, () => []);
  const stack = [[0, 0]];
  const kids = [];
  const childLists = new Array(h.n);
  order[0] = -2;
  while (stack.length) {
    const top = stack[stack.length - 1];
    const [i] = top;
    childLists[i] ??= h.children(i, kids).slice();
    if (top[1] < childLists[i].length) {
      const c = childLists[i][top[1]++];
      preds[c].push(i);
      if (order[c] === -1) {
        order[c] = -2;
        stack.push([c, 0]);
      }
    } else {
      stack.pop();
      order[i] = post.length;
      post.push(i);
    }
  }
  const idom = new Int32Array(h.n).fill(-1);
  idom[0] = 0;
  const intersect = (a, b) => {
    while (a !== b) {
      while (order[a] < order[b]) a = idom[a];
      while (order[b] < order[a]) b = idom[b];
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let k = post.length - 2; k >= 0; k--) {
      const i = post[k];
      let d = -1;
      for (const p of preds[i]) if (idom[p] !== -1 && order[p] >= 0) d = d === -1 ? p : intersect(p, d);
      if (d !== -1 && idom[i] !== d) {
        idom[i] = d;
        changed = true;
      }
    }
  }
  const ret = new Float64Array(h.n);
  for (const i of post) ret[i] += h.size(i);
  for (const i of post) if (i !== 0 && idom[i] >= 0) ret[idom[i]] += ret[i];
  return { ret, idom, reachable: post.length };
}

function byLabel(h) {
  const m = new Map();
  for (let i = 0; i < h.n; i++) {
    const l = label(h, i);
    const e = m.get(l) ?? { count: 0, size: 0 };
    e.count++;
    e.size += h.size(i);
    m.set(l, e);
  }
  return m;
}

const kib = (b) => (b / 1024).toFixed(1).padStart(9);
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const files = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
const top = opt('--top', 25);
if (files.length === 0) {
  process.stderr.write('usage: node scripts/heap-summary.mjs <snapshot> [<snapshot>] [--per N] [--top N]\n');
  process.exit(2);
}
if (files.length === 1) {
  const h = load(files[0]);
  let total = 0;
  for (let i = 0; i < h.n; i++) total += h.size(i);
  const { ret, idom } = retained(h);
  console.log(`${files[0]}: ${h.n} nodes, ${kib(total)} KiB self size in all`);
  console.log('\nby constructor / kind (self size)          count       KiB');
  for (const [l, e] of [...byLabel(h)].sort((a, b) => b[1].size - a[1].size).slice(0, top))
    console.log(`${l.slice(0, 40).padEnd(40)} ${String(e.count).padStart(8)} ${kib(e.size)}`);
  console.log('\nlargest retainers (retained size, dominated by the root or a GC root)       KiB');
  const idx = [...Array(h.n).keys()].filter((i) => i !== 0 && idom[i] >= 0 && ret[i] > 0);
  idx.sort((a, b) => ret[b] - ret[a]);
  for (const i of idx.slice(0, top))
    console.log(`${`${label(h, i)} ${h.name(i).slice(0, 60).replace(/\s+/g, ' ')}`.padEnd(72)} ${kib(ret[i])}`);
} else {
  const [a, b] = files.map(load);
  const per = opt('--per', 1);
  const [ma, mb] = [byLabel(a), byLabel(b)];
  const sum = (m) => [...m.values()].reduce((s, e) => s + e.size, 0);
  console.log(`self size: ${kib(sum(ma))} → ${kib(sum(mb))} KiB; per ${per}: ${kib((sum(mb) - sum(ma)) / per)} KiB`);
  console.log(`\ngrowth by constructor / kind              count Δ     KiB Δ   per ${per} (KiB)`);
  const rows = [...new Set([...ma.keys(), ...mb.keys()])].map((l) => {
    const [x, y] = [ma.get(l) ?? { count: 0, size: 0 }, mb.get(l) ?? { count: 0, size: 0 }];
    return { l, dc: y.count - x.count, ds: y.size - x.size };
  });
  for (const r of rows.sort((p, q) => Math.abs(q.ds) - Math.abs(p.ds)).slice(0, top))
    console.log(`${r.l.slice(0, 40).padEnd(40)} ${String(r.dc).padStart(8)} ${kib(r.ds)} ${kib(r.ds / per)}`);
}
