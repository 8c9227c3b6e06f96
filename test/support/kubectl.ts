/**
 * The machine's real kubectl (Debian kubernetes-client, /usr/bin/kubectl) for e2e checks against
 * the test apiserver. Runs asynchronously: the test apiserver lives in the test's own process and
 * must keep answering while kubectl waits for it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

/** kubectl's path, or undefined when it is not installed (the caller skips its check). */
export function findKubectl(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A runner of `kubectl --kubeconfig=<kubeconfig> <args…>` returning its stdout (30 s at most). */
export function kubectlWith(kubectl: string, kubeconfig: string): (...args: string[]) => Promise<string> {
  return async (...args) =>
    (
      await promisify(execFile)(kubectl, [`--kubeconfig=${kubeconfig}`, ...args], {
        encoding: 'utf8',
        timeout: 30_000,
      })
    ).stdout;
}
