/**
 * exec probe (upstream pkg/probe/exec via CRI ExecSync): exit code 0 is success, any other code
 * failure. The probe timeout is enforced twice: the runtime gets it as ExecSync's timeout, and we
 * stop waiting at timeout + 1 s in case the runtime does not honour it (a hung command is a
 * failure, as upstream since 1.20).
 */
import type { RuntimeService } from '../cri/types.js';
import { errorMessage } from '../errors.js';
import type { Prober, ProbeReply, ProbeTarget } from './types.js';

/** Output kept for the event message (upstream maxReadLength). */
const MAX_OUTPUT = 10 * 1024;

export function execProber(runtime: Pick<RuntimeService, 'execSync'>, command: string[]): Prober {
  return {
    async probe(t: ProbeTarget, timeoutMs: number): Promise<ProbeReply> {
      const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<ProbeReply>((resolve) => {
        timer = setTimeout(
          () => resolve({ outcome: 'failure', output: `command ${JSON.stringify(command)} timed out` }),
          timeoutMs + 1000,
        );
      });
      const run = runtime.execSync(t.containerId, command, seconds).then(
        (r): ProbeReply => {
          const out = Buffer.concat([r.stdout, r.stderr]).subarray(0, MAX_OUTPUT).toString('utf8');
          return r.exitCode === 0
            ? { outcome: 'success', output: out }
            : { outcome: 'failure', output: out || `command exited with ${r.exitCode}` };
        },
        (err: unknown): ProbeReply => {
          const msg = errorMessage(err);
          // containerd answers a command that outlived its timeout with an error naming it.
          if (/timeout|deadline/i.test(msg))
            return { outcome: 'failure', output: `command ${JSON.stringify(command)} timed out` };
          return { outcome: 'unknown', output: msg };
        },
      );
      try {
        return await Promise.race([run, timedOut]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
