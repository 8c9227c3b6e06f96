/** tcpSocket probe (upstream pkg/probe/tcp): a TCP connect within the timeout is success. */
import { connect } from 'node:net';
import type { Container } from '../api/types.js';
import { resolveContainerPort } from '../util/http-get.js';
import type { Prober, ProbeReply, ProbeTarget } from './types.js';

export function tcpProber(action: { host?: string; port: number | string }, container: Container): Prober {
  return {
    probe(t: ProbeTarget, timeoutMs: number): Promise<ProbeReply> {
      let port: number;
      try {
        port = resolveContainerPort(action.port, container);
      } catch (err) {
        return Promise.resolve({ outcome: 'unknown', output: (err as Error).message });
      }
      return dialTcp(action.host || t.podIP, port, timeoutMs);
    },
  };
}

function dialTcp(host: string, port: number, timeoutMs: number): Promise<ProbeReply> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const finish = (reply: ProbeReply) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(reply);
    };
    const timer = setTimeout(
      () => finish({ outcome: 'failure', output: `dial tcp ${host}:${port}: i/o timeout` }),
      timeoutMs,
    );
    sock.once('connect', () => finish({ outcome: 'success', output: '' }));
    sock.once('error', (err) => finish({ outcome: 'failure', output: `dial tcp ${host}:${port}: ${err.message}` }));
  });
}
