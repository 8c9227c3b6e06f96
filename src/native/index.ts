/**
 * Chooses, per hot path, the native addon or its TypeScript twin (see types.ts).
 *
 * The addon is looked for at $KUBELET_TS_NATIVE_ADDON (an explicit .node file, which must load),
 * then build/Release and build/Debug under the package root. A binary that exists but fails to
 * load throws KubeletError('KTS_ERR_NATIVE'): a broken build fails loudly instead of being
 * skipped. KUBELET_TS_NATIVE=0 selects every TypeScript twin without loading the addon.
 *
 * Adding a hot path: its API in HotPathApis, its twin in TS_TWINS, its adapter in FROM_ADDON.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeletError } from '../errors.js';
import { nativeFsWatcherFactory, type NativeInotifyCtor } from './fs-watcher-native.js';
import { createTsFsWatcher } from './fs-watcher-ts.js';
import { createTsRelistDiffer, type CreateRelistDiffer } from '../pleg/relist-diff.js';
import { nativeRelistDifferFactory, type NativeRelistDifferCtor } from '../pleg/relist-diff-native.js';
import type { CreateFsWatcher, Implementation } from './types.js';
import { createTsCgroupReader } from '../stats/cgroup-reader-ts.js';
import { nativeCgroupReaderFactory, type NativeCgroupReaderCtor } from '../stats/cgroup-reader-native.js';
import type { CreateCgroupReader } from '../stats/types.js';
import { createTsKmsgWatcher } from '../oom/kmsg-ts.js';
import { parseKmsgTs } from '../oom/kmsg-parser.js';
import { nativeKmsgWatcherFactory, type NativeKmsgWatcherCtor } from '../oom/kmsg-native.js';
import type { CreateKmsgWatcher, ParseKmsg } from '../oom/types.js';

export type * from './types.js';

/** What the addon exports (native/src/addon.cc); a member may be missing from an older binary. */
export interface NativeAddon {
  InotifyWatcher?: NativeInotifyCtor;
  RelistDiffer?: NativeRelistDifferCtor;
  CgroupReader?: NativeCgroupReaderCtor;
  KmsgWatcher?: NativeKmsgWatcherCtor;
  parseKmsg?: ParseKmsg;
}

/** The API of each hot path; both implementations provide it. */
export interface HotPathApis {
  inotify: { createFsWatcher: CreateFsWatcher };
  pleg: { createRelistDiffer: CreateRelistDiffer };
  cgroupStats: { createCgroupReader: CreateCgroupReader };
  kmsg: { createKmsgWatcher: CreateKmsgWatcher; parseKmsg: ParseKmsg };
}
export type HotPath = keyof HotPathApis;
export type HotPaths = { [P in HotPath]: HotPathApis[P] & { impl: Implementation } };
export type NamedImplementation<P extends HotPath> = HotPathApis[P] & { name: Implementation };

const TS_TWINS: { [P in HotPath]: HotPathApis[P] } = {
  inotify: { createFsWatcher: createTsFsWatcher },
  pleg: { createRelistDiffer: createTsRelistDiffer },
  cgroupStats: { createCgroupReader: createTsCgroupReader },
  kmsg: { createKmsgWatcher: createTsKmsgWatcher, parseKmsg: parseKmsgTs },
};

const FROM_ADDON: { [P in HotPath]: (addon: NativeAddon) => HotPathApis[P] | undefined } = {
  inotify: (addon) =>
    typeof addon.InotifyWatcher === 'function' ? { createFsWatcher: nativeFsWatcherFactory(addon.InotifyWatcher) } : undefined,
  pleg: (addon) =>
    typeof addon.RelistDiffer === 'function' ? { createRelistDiffer: nativeRelistDifferFactory(addon.RelistDiffer) } : undefined,
  cgroupStats: (addon) =>
    typeof addon.CgroupReader === 'function' ? { createCgroupReader: nativeCgroupReaderFactory(addon.CgroupReader) } : undefined,
  kmsg: (addon) =>
    typeof addon.KmsgWatcher === 'function' && typeof addon.parseKmsg === 'function'
      ? { createKmsgWatcher: nativeKmsgWatcherFactory(addon.KmsgWatcher), parseKmsg: addon.parseKmsg }
      : undefined,
};

const ADDON_FILE = 'kubelet_ts_native.node';
const require = createRequire(import.meta.url);

/** The directory holding package.json: src/native/ in the sources, dist/src/native/ compiled. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new KubeletError('KTS_ERR_NATIVE', `no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return dir;
}

/** The files tried, in order; an explicit KUBELET_TS_NATIVE_ADDON is the only one. */
export function addonCandidates(): string[] {
  const explicit = process.env['KUBELET_TS_NATIVE_ADDON'];
  if (explicit) return [resolve(explicit)];
  const root = packageRoot();
  return [join(root, 'build', 'Release', ADDON_FILE), join(root, 'build', 'Debug', ADDON_FILE)];
}

let addon: NativeAddon | null | undefined;

/** The loaded addon, or null when none is built. Throws KTS_ERR_NATIVE when one fails to load. */
export function loadAddon(): NativeAddon | null {
  if (addon !== undefined) return addon;
  const explicit = Boolean(process.env['KUBELET_TS_NATIVE_ADDON']);
  for (const file of addonCandidates()) {
    if (!existsSync(file)) {
      if (explicit) throw new KubeletError('KTS_ERR_NATIVE', `KUBELET_TS_NATIVE_ADDON=${file}: no such file`);
      continue;
    }
    try {
      addon = require(file) as NativeAddon;
      return addon;
    } catch (err) {
      throw new KubeletError('KTS_ERR_NATIVE', `cannot load native addon ${file}: ${(err as Error).message}`, { cause: err });
    }
  }
  addon = null;
  return addon;
}

/** True when KUBELET_TS_NATIVE=0 asks for the TypeScript twins only. */
export function nativeDisabled(): boolean {
  return process.env['KUBELET_TS_NATIVE'] === '0';
}

let chosen: HotPaths | undefined;

/** The implementation in use for every hot path (memoized; reads the environment once). */
export function hotPaths(): HotPaths {
  if (chosen) return chosen;
  const native = nativeDisabled() ? null : loadAddon();
  const pick = <P extends HotPath>(path: P): HotPathApis[P] & { impl: Implementation } => {
    const api = native ? FROM_ADDON[path](native) : undefined;
    return api ? { ...api, impl: 'native' } : { ...TS_TWINS[path], impl: 'ts' };
  };
  chosen = { inotify: pick('inotify'), pleg: pick('pleg'), cgroupStats: pick('cgroupStats'), kmsg: pick('kmsg') };
  return chosen;
}

/** e.g. { inotify: 'native' }: for start-up logging and kubelet_ts_native_enabled{path}. */
export function nativeStatus(): Record<string, Implementation> {
  const status: Record<string, Implementation> = {};
  for (const [path, api] of Object.entries(hotPaths())) status[path] = api.impl;
  return status;
}

/**
 * Every implementation of `path` this host can run, native first: for contract and differential
 * tests. Ignores KUBELET_TS_NATIVE (it lists what is available, not what is chosen).
 */
export function implementations<P extends HotPath>(path: P): Array<NamedImplementation<P>> {
  const out: Array<NamedImplementation<P>> = [];
  const native = loadAddon();
  const api = native ? FROM_ADDON[path](native) : undefined;
  if (api) out.push({ ...api, name: 'native' });
  out.push({ ...TS_TWINS[path], name: 'ts' });
  return out;
}
