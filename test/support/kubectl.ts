/**
 * The machine's real kubectl (KUBECTL, default `kubectl` on PATH) for e2e tests against the test
 * apiserver: whether it is installed, and a runner bound to a kubeconfig and namespace.
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
