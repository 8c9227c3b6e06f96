/**
 * The composition root's choice, per hot path, of the native addon or its TypeScript twin. Only
 * the root picks: every subsystem takes its implementation as a parameter (createGenericPLEG's
 * differ, createStatsProvider's reader, createOomWatcher's kmsg watcher, the file source's
 * watcher, createRuntimeManager's subPath binder), so it can be tested with either.
 *
 * Adding a hot path: its API in HotPathApis, its twin in TS_TWINS, its adapter in FROM_ADDON.
 */
import { loadAddon, nativeDisabled, type Implementation, type NativeAddon } from '../native/index.js';
import { nativeFsWatcherFactory, type NativeInotifyCtor } from '../fswatch/fs-watcher-native.js';
import { createTsFsWatcher } from '../fswatch/fs-watcher-ts.js';
import type { CreateFsWatcher } from '../fswatch/types.js';
import { createTsRelistDiffer } from '../pleg/relist-differ-ts.js';
import type { CreateRelistDiffer } from '../pleg/relist-types.js';
import { nativeRelistDifferFactory, type NativeRelistDifferCtor } from '../pleg/relist-diff-native.js';
import { createTsCgroupReader } from '../stats/cgroup-reader-ts.js';
import { nativeCgroupReaderFactory, type NativeCgroupReaderCtor } from '../stats/cgroup-reader-native.js';
import type { CreateCgroupReader } from '../stats/types.js';
import { createTsKmsgWatcher } from '../oom/kmsg-ts.js';
import { parseKmsgTs } from '../oom/kmsg-parser.js';
import { nativeKmsgWatcherFactory, type NativeKmsgWatcherCtor } from '../oom/kmsg-native.js';
import type { CreateKmsgWatcher, ParseKmsg } from '../oom/types.js';
import { bindSubPathTs } from '../volume/subpath/subpath-bind-ts.js';
import { nativeBindSubPath, type NativeBindSubPath } from '../volume/subpath/subpath-bind-native.js';
import type { BindSubPath } from '../volume/subpath/subpath-types.js';

export type { Implementation };

/** The API of each hot path; both implementations provide it. */
export interface HotPathApis {
  inotify: { createFsWatcher: CreateFsWatcher };
  pleg: { createRelistDiffer: CreateRelistDiffer };
  cgroupStats: { createCgroupReader: CreateCgroupReader };
  kmsg: { createKmsgWatcher: CreateKmsgWatcher; parseKmsg: ParseKmsg };
  subpath: { bindSubPath: BindSubPath };
}
export type HotPath = keyof HotPathApis;
export type HotPaths = { [P in HotPath]: HotPathApis[P] & { impl: Implementation } };
export type NamedImplementation<P extends HotPath> = HotPathApis[P] & { name: Implementation };

const TS_TWINS: { [P in HotPath]: HotPathApis[P] } = {
  inotify: { createFsWatcher: createTsFsWatcher },
  pleg: { createRelistDiffer: createTsRelistDiffer },
  cgroupStats: { createCgroupReader: createTsCgroupReader },
  kmsg: { createKmsgWatcher: createTsKmsgWatcher, parseKmsg: parseKmsgTs },
  subpath: { bindSubPath: bindSubPathTs },
};

const isCtor = (v: unknown): v is new (...args: never[]) => unknown => typeof v === 'function';

/** The addon's export adapted to each hot path's API; undefined when the binary lacks it. */
const FROM_ADDON: { [P in HotPath]: (addon: NativeAddon) => HotPathApis[P] | undefined } = {
  inotify: ({ InotifyWatcher: C }) =>
    isCtor(C) ? { createFsWatcher: nativeFsWatcherFactory(C as NativeInotifyCtor) } : undefined,
  pleg: ({ RelistDiffer: C }) =>
    isCtor(C) ? { createRelistDiffer: nativeRelistDifferFactory(C as NativeRelistDifferCtor) } : undefined,
  cgroupStats: ({ CgroupReader: C }) =>
    isCtor(C) ? { createCgroupReader: nativeCgroupReaderFactory(C as NativeCgroupReaderCtor) } : undefined,
  kmsg: ({ KmsgWatcher: C, parseKmsg }) =>
    isCtor(C) && typeof parseKmsg === 'function'
      ? { createKmsgWatcher: nativeKmsgWatcherFactory(C as NativeKmsgWatcherCtor), parseKmsg: parseKmsg as ParseKmsg }
      : undefined,
  subpath: ({ bindSubPath: f }) =>
    typeof f === 'function' ? { bindSubPath: nativeBindSubPath(f as NativeBindSubPath) } : undefined,
};

let chosen: HotPaths | undefined;

/** The implementation in use for every hot path (memoized; reads the environment once). */
export function hotPaths(): HotPaths {
  if (chosen) return chosen;
  const native = nativeDisabled() ? null : loadAddon();
  const pick = <P extends HotPath>(path: P): HotPathApis[P] & { impl: Implementation } => {
    const api = native ? FROM_ADDON[path](native) : undefined;
    return api ? { ...api, impl: 'native' } : { ...TS_TWINS[path], impl: 'ts' };
  };
  chosen = {
    inotify: pick('inotify'),
    pleg: pick('pleg'),
    cgroupStats: pick('cgroupStats'),
    kmsg: pick('kmsg'),
    subpath: pick('subpath'),
  };
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
