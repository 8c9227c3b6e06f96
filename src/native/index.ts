/**
 * Loads the kubelet_ts_native addon and says what loaded; nothing more. Which implementation of
 * each hot path runs (the addon's or its TypeScript twin) is chosen by the composition root
 * (src/cmd/hot-paths.ts), so no subsystem depends on this folder.
 *
 * The addon is looked for at $KUBELET_TS_NATIVE_ADDON (an explicit .node file, which must load),
 * then build/Release and build/Debug under the package root. A binary that exists but fails to
 * load throws KubeletError('KTS_ERR_NATIVE'): a broken build fails loudly instead of being
 * skipped. KUBELET_TS_NATIVE=0 asks for every TypeScript twin without loading the addon.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeletError } from '../errors.js';

/** Which implementation of a hot path runs. */
export type Implementation = 'native' | 'ts';

/**
 * What the addon exports (native/src/addon.cc), unchecked: the root's adapters test each member
 * before use, since an older binary may lack one.
 */
export type NativeAddon = Readonly<Record<string, unknown>>;

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

/**
 * One function of the addon, or undefined when native code is disabled, no addon is built, or
 * the loaded build predates that function (the periodic memory tasks of src/cmd then do nothing).
 */
export function addonFunction<F>(name: string): F | undefined {
  const fn = nativeDisabled() ? undefined : loadAddon()?.[name];
  return typeof fn === 'function' ? (fn as F) : undefined;
}

/** True when KUBELET_TS_NATIVE=0 asks for the TypeScript twins only. */
export function nativeDisabled(): boolean {
  return process.env['KUBELET_TS_NATIVE'] === '0';
}

/** Where the loaded (or unloadable) addon is, for --version: the first candidate that exists. */
export function addonFile(): string | undefined {
  return addonCandidates().find((p) => existsSync(p));
}
