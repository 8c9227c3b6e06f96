/** Adapter for the addon's bindSubPath (native/src/subpath.{h,cc}): its errno becomes Node's code name. */
import { constants } from 'node:os';
import { subPathBindFailure, type BindSubPath, type SubPathStep } from './subpath-types.js';

type NativeReply = { isDir: boolean } | { errno: number; step: SubPathStep; component: number };
export type NativeBindSubPath = (
  base: string,
  components: string[],
  target: string,
  dirMode: number,
) => Promise<NativeReply>;

const ERRNO_NAMES = new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]));

export function nativeBindSubPath(fn: NativeBindSubPath): BindSubPath {
  return async (req) => {
    const reply = await fn(req.base, [...req.components], req.target, req.dirMode);
    if ('isDir' in reply) return { isDir: reply.isDir };
    throw subPathBindFailure(reply.step, ERRNO_NAMES.get(reply.errno) ?? `errno ${reply.errno}`, reply.component);
  };
}
