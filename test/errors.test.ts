// The error codes checked against the code that raises them (not against src/errors.ts itself):
// every code in ERROR_CODES is raised somewhere in src/, every code raised is in ERROR_CODES and in
// docs/errors.md's table (generated from ERROR_CODES by scripts/gen-docs.mjs), and plain Errors are thrown only where src/errors.ts allows them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { ERROR_CODES } from '../src/errors.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');
const ERRORS_TS = join(SRC, 'errors.ts');
const CODE = /^KTS_ERR_[A-Z_]+$/;

function sourceFiles(dir: string): ts.SourceFile[] {
  const out: ts.SourceFile[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith('.ts')) out.push(ts.createSourceFile(p, readFileSync(p, 'utf8'), ts.ScriptTarget.ES2022, true));
  }
  return out;
}

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  node.forEachChild((c) => walk(c, visit));
}

/** Every KTS_ERR_ string literal in `node`. */
function codeLiterals(node: ts.Node): string[] {
  const out: string[] = [];
  walk(node, (n) => {
    if (ts.isStringLiteral(n) && CODE.test(n.text)) out.push(n.text);
  });
  return out;
}

/** How a KubeletError class gets its code: fixed by the class, or from a constructor argument. */
interface ErrorClass {
  base: string | undefined;
  fixed?: string;
  codeArg?: number;
  defaultCode?: string;
}

const files = sourceFiles(SRC);

/** The KubeletError family, by class name, from every class declaration in src/. */
function errorClasses(): Map<string, ErrorClass> {
  const all = new Map<string, ErrorClass>();
  for (const f of files) {
    walk(f, (n) => {
      if (!ts.isClassDeclaration(n) || !n.name) return;
      const ext = n.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression;
      const cls: ErrorClass = { base: undefined };
      if (ext && ts.isIdentifier(ext)) cls.base = ext.text;
      // class X extends kubeletErrorClass('KTS_ERR_...') {}
      if (
        ext &&
        ts.isCallExpression(ext) &&
        ts.isIdentifier(ext.expression) &&
        ext.expression.text === 'kubeletErrorClass'
      ) {
        cls.base = 'KubeletError';
        cls.fixed = codeLiterals(ext)[0];
      }
      const ctor = n.members.find(ts.isConstructorDeclaration);
      ctor?.parameters.forEach((p, i) => {
        if (p.type && ts.isTypeReferenceNode(p.type) && p.type.typeName.getText() === 'ErrorCode') {
          cls.codeArg = i;
          if (p.initializer && ts.isStringLiteral(p.initializer)) cls.defaultCode = p.initializer.text;
        }
      });
      // constructor(...) { super('KTS_ERR_...', ...) }, or the code in another place of super's
      // arguments (a subclass passing its code to its parent's code parameter)
      if (ctor?.body && cls.codeArg === undefined) {
        walk(ctor.body, (c) => {
          if (!ts.isCallExpression(c) || c.expression.kind !== ts.SyntaxKind.SuperKeyword) return;
          const code = c.arguments.find((a): a is ts.StringLiteral => ts.isStringLiteral(a) && CODE.test(a.text));
          if (code) cls.fixed = code.text;
        });
      }
      all.set(n.name.text, cls);
    });
  }
  const family = new Map<string, ErrorClass>();
  const isKubeletError = (name: string | undefined, seen = 0): boolean =>
    name === 'KubeletError' || (name !== undefined && seen < 10 && isKubeletError(all.get(name)?.base, seen + 1));
  for (const [name, cls] of all) if (isKubeletError(name)) family.set(name, cls);
  return family;
}

/** The codes a code argument can carry: its literals, a local variable's, or a local function's returns. */
function argumentCodes(arg: ts.Expression, file: ts.SourceFile): string[] {
  const codes = codeLiterals(arg);
  walk(arg, (n) => {
    if (ts.isIdentifier(n)) {
      walk(file, (d) => {
        if (ts.isVariableDeclaration(d) && ts.isIdentifier(d.name) && d.name.text === n.text && d.initializer)
          codes.push(...codeLiterals(d.initializer));
      });
    }
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression)) {
      const fn = (n.expression as ts.Identifier).text;
      walk(file, (d) => {
        if (ts.isFunctionDeclaration(d) && d.name?.text === fn && d.body) {
          walk(d.body, (r) => {
            if (ts.isReturnStatement(r) && r.expression) codes.push(...codeLiterals(r.expression));
          });
        }
      });
    }
  });
  return codes;
}

/** code → the files (relative to src/) that construct an error carrying it. */
function raisedCodes(): Map<string, Set<string>> {
  const family = errorClasses();
  const raised = new Map<string, Set<string>>();
  const add = (code: string, f: ts.SourceFile) => {
    if (!raised.has(code)) raised.set(code, new Set());
    raised.get(code)!.add(relative(SRC, f.fileName));
  };
  for (const f of files) {
    if (f.fileName === ERRORS_TS) continue;
    walk(f, (n) => {
      if (!ts.isNewExpression(n) || !ts.isIdentifier(n.expression)) return;
      const cls = family.get(n.expression.text);
      if (!cls) return;
      if (cls.fixed) return add(cls.fixed, f);
      if (cls.codeArg === undefined) return;
      const arg = n.arguments?.[cls.codeArg];
      if (!arg) {
        if (cls.defaultCode) add(cls.defaultCode, f);
        return;
      }
      const codes = argumentCodes(arg, f);
      assert.ok(codes.length > 0, `${relative(SRC, f.fileName)}: cannot tell the code of ${n.getText().slice(0, 80)}`);
      for (const c of codes) add(c, f);
    });
  }
  return raised;
}

test('every code in ERROR_CODES is raised somewhere in src/ (outside errors.ts), and every code raised is in ERROR_CODES', () => {
  const raised = raisedCodes();
  const never = Object.keys(ERROR_CODES).filter((c) => !raised.has(c));
  assert.deepEqual(never, [], `codes in ERROR_CODES that nothing raises: ${never.join(', ')}`);
  const undocumented = [...raised.keys()].filter((c) => !(c in ERROR_CODES));
  assert.deepEqual(undocumented, [], `codes raised but not in ERROR_CODES: ${undocumented.join(', ')}`);
});

test('every KTS_ERR_ string in src/ is a code of ERROR_CODES', () => {
  const unknown = new Set<string>();
  for (const f of files)
    for (const c of codeLiterals(f)) if (!(c in ERROR_CODES)) unknown.add(`${relative(SRC, f.fileName)}: ${c}`);
  assert.deepEqual([...unknown], []);
});

test("docs/errors.md's table lists exactly the codes of ERROR_CODES, in the same order", () => {
  const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
  const section = doc.slice(doc.indexOf('<!-- generated:error-codes -->'));
  const table = section.slice(0, section.indexOf('<!-- /generated -->'));
  const rows = [...table.matchAll(/^\| `(KTS_ERR_[A-Z_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(rows, Object.keys(ERROR_CODES));
});

// src/errors.ts: a plain Error (TypeError, RangeError) only for a programming error, or an OS error
// in Node's shape. Each allowed site, by file, with what makes it one.
const PLAIN_ERRORS_ALLOWED: Record<string, { count: number; why: string }> = {
  'config/feature-gates.ts': { count: 1, why: 'a gate read that the table does not have (upstream panics the same)' },
  'podconfig/file-source.ts': { count: 1, why: 'start() called twice' },
  'podconfig/url-source.ts': { count: 1, why: 'start() called twice' },
  'podconfig/pod-config.ts': { count: 2, why: 'a source registered without a name, or twice' },
  'stats/exposition.ts': { count: 1, why: 'a metric family written before it was declared' },
  'stats/cgroup-reader-ts.ts': {
    count: 1,
    why: 'a CgroupReader used while its readAsync runs, as the native one throws (the stats pass awaits it)',
  },
  'podworkers/pod-workers.ts': { count: 1, why: 'an illegal pod worker state transition' },
  'podworkers/states.ts': { count: 1, why: 'work asked of a finished pod worker' },
  'logs/rotation.ts': { count: 2, why: 'options that config validation already rules out' },
  'util/backoff.ts': { count: 1, why: 'back-off options out of order (set by our own code only)' },
  'cri/channel.ts': { count: 1, why: 'a CRI method name not in api.proto' },
  'cri/proto.ts': { count: 1, why: "the package's own api.proto incomplete" },
  'util/package-file.ts': { count: 1, why: "a file of the package's own source (a .proto) missing" },
  'util/source-map-lookup.ts': { count: 1, why: "a .map of the package's own build that is not a source map (caught)" },
  'volume/csi/proto.ts': { count: 1, why: "the package's own csi.proto incomplete" },
  'pluginmanager/proto.ts': { count: 1, why: "the package's own plugin registration api.proto incomplete" },
  'devicemanager/proto.ts': { count: 1, why: "the package's own deviceplugin-v1beta1.proto incomplete" },
  'pleg/relist-types.ts': { count: 1, why: 'a RelistDiffer used after close' },
  'pleg/relist-differ-ts.ts': { count: 1, why: 'a RelistDiffer given something other than bytes' },
  'fswatch/fs-watcher-common.ts': {
    count: 2,
    why: 'the ErrnoException fs.watch would throw; a path that is not a string',
  },
  'cm/index.ts': {
    count: 1,
    why: "the systemd driver asked for without systemd's slice operations (main.ts connects first)",
  },
  'volume/subpath/subpath-types.ts': {
    count: 1,
    why: 'the errno-shaped failure of a subPath bind (code ELOOP, ENOTDIR, ...), alike from both twins; subpath.ts wraps it in a SubPathError',
  },
};

test('plain Errors are thrown only where src/errors.ts allows them', () => {
  const found: Record<string, number> = {};
  for (const f of files) {
    walk(f, (n) => {
      const plainNew =
        ts.isNewExpression(n) &&
        ts.isIdentifier(n.expression) &&
        ['Error', 'TypeError', 'RangeError', 'SyntaxError'].includes(n.expression.text);
      const plainClass =
        ts.isClassDeclaration(n) &&
        n.heritageClauses?.some((h) => h.types.some((t) => t.expression.getText() === 'Error'));
      if (plainNew || plainClass) {
        const key = relative(SRC, f.fileName);
        if (key !== 'errors.ts') found[key] = (found[key] ?? 0) + 1;
      }
    });
  }
  const allowed = Object.fromEntries(Object.entries(PLAIN_ERRORS_ALLOWED).map(([k, v]) => [k, v.count]));
  assert.deepEqual(
    found,
    allowed,
    'a new plain Error: raise a KubeletError with a code instead, or (a programming error only) allow it here with its reason',
  );
});
