/**
 * The machine's real kubectl (KUBECTL, default `kubectl` on PATH) for e2e tests against the test
 * apiserver: whether it is installed, and runners bound to a kubeconfig. They run kubectl
 * asynchronously: the test apiserver lives in the test's own process and must keep answering
 * while kubectl waits for it.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

export const KUBECTL = process.env.KUBECTL ?? 'kubectl';

/** false when kubectl runs, else the reason to skip a test that needs it. */
export const kubectlSkip: Promise<false | string> = promisify(execFile)(KUBECTL, ['version', '--client'], {
  timeout: 10_000,
}).then(
  () => false,
  () => 'kubectl is not installed',
);

/** kubectl's name when it runs, or undefined when it is not installed (the caller skips its check). */
export async function findKubectl(): Promise<string | undefined> {
  return (await kubectlSkip) === false ? KUBECTL : undefined;
}

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `kubectl --kubeconfig=<kubeconfig> -n <ns> ...args` with `input` on stdin (killed after 60 s). */
export function kubectlRunner(
  kubeconfig: string,
  ns: string,
): (args: string[], input?: string) => Promise<KubectlResult> {
  return (args, input) =>
    new Promise((resolve) => {
      const child = spawn(KUBECTL, [`--kubeconfig=${kubeconfig}`, '-n', ns, ...args], { stdio: 'pipe' });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
      child.stdin.end(input ?? '');
    });
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
