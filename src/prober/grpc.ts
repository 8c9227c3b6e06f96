/**
 * grpc probe (upstream pkg/probe/grpc): grpc.health.v1.Health/Check with the probe's service
 * name on podIP:port, plaintext. SERVING is success; any other status, an RPC error or no
 * connection within the timeout is failure. The two messages are tiny, so they are encoded here
 * (field 1: service string / status enum) rather than loading a .proto at run time.
 */
import * as grpc from '@grpc/grpc-js';
import { KubeletError } from '../errors.js';
import type { Prober, ProbeReply, ProbeTarget } from './types.js';

/** grpc.health.v1.HealthCheckResponse.ServingStatus. */
export const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;

export function encodeHealthCheckRequest(service: string): Buffer {
  const s = Buffer.from(service, 'utf8');
  return s.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a]), varint(s.length), s]);
}

export function decodeHealthCheckRequest(buf: Buffer): string {
  const v = readField1(buf, 2);
  return Buffer.isBuffer(v) ? v.toString('utf8') : '';
}

export function encodeHealthCheckResponse(status: number): Buffer {
  return status === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x08]), varint(status)]);
}

export function decodeHealthCheckResponse(buf: Buffer): number {
  const v = readField1(buf, 0);
  return typeof v === 'number' ? v : 0;
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

function readVarint(buf: Buffer, pos: number): [number, number] {
  let v = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length)
      throw new KubeletError('KTS_ERR_POD_ENDPOINT', `grpc health message: varint truncated at byte ${pos}`);
    const b = buf[pos++]!;
    v += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [v, pos];
    shift += 7;
  }
}

/** The value of field 1 with the wire type asked (0 varint, 2 bytes); other fields skipped. */
function readField1(buf: Buffer, wireType: 0 | 2): number | Buffer | undefined {
  let pos = 0;
  let found: number | Buffer | undefined;
  while (pos < buf.length) {
    let key: number;
    [key, pos] = readVarint(buf, pos);
    const wt = key & 7;
    let value: number | Buffer;
    if (wt === 0) {
      [value, pos] = readVarint(buf, pos);
    } else if (wt === 2) {
      let len: number;
      [len, pos] = readVarint(buf, pos);
      value = buf.subarray(pos, pos + len);
      pos += len;
    } else if (wt === 1 || wt === 5) {
      pos += wt === 1 ? 8 : 4;
      continue;
    } else {
      throw new KubeletError('KTS_ERR_POD_ENDPOINT', `grpc health message: unsupported wire type ${wt} at byte ${pos}`);
    }
    if (key >>> 3 === 1 && wt === wireType) found = value;
  }
  return found;
}

/** The Health service definition, shared by the prober and test servers. */
export const HEALTH_SERVICE: grpc.ServiceDefinition = {
  Check: {
    path: '/grpc.health.v1.Health/Check',
    requestStream: false,
    responseStream: false,
    requestSerialize: (service: string) => encodeHealthCheckRequest(service),
    requestDeserialize: decodeHealthCheckRequest,
    responseSerialize: (status: number) => encodeHealthCheckResponse(status),
    responseDeserialize: decodeHealthCheckResponse,
  },
};

const HealthClient = grpc.makeGenericClientConstructor(HEALTH_SERVICE, 'grpc.health.v1.Health');

export function grpcProber(action: { port: number; service?: string }): Prober {
  return {
    probe(t: ProbeTarget, timeoutMs: number): Promise<ProbeReply> {
      const host = t.podIP.includes(':') ? `[${t.podIP}]` : t.podIP;
      const addr = `${host}:${action.port}`;
      const service = action.service ?? '';
      const client = new HealthClient(addr, grpc.credentials.createInsecure(), {
        'grpc.max_receive_message_length': 64 * 1024,
      });
      const deadline = new Date(Date.now() + timeoutMs);
      return new Promise<ProbeReply>((resolve) => {
        client.makeUnaryRequest(
          '/grpc.health.v1.Health/Check',
          encodeHealthCheckRequest,
          (b: Buffer) => decodeHealthCheckResponse(b),
          service,
          { deadline },
          (err, status?: number) => {
            client.close();
            if (err) {
              if (err.code === grpc.status.UNIMPLEMENTED)
                resolve({
                  outcome: 'failure',
                  output: `this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`,
                });
              else if (err.code === grpc.status.DEADLINE_EXCEEDED || err.code === grpc.status.UNAVAILABLE)
                resolve({
                  outcome: 'failure',
                  output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${timeoutMs / 1000}s: ${err.details}`,
                });
              else
                resolve({
                  outcome: 'failure',
                  output: `rpc error: code = ${grpc.status[err.code]} desc = ${err.details}`,
                });
              return;
            }
            const s = status ?? 0;
            if (s === 1) resolve({ outcome: 'success', output: '' });
            else
              resolve({ outcome: 'failure', output: `service unhealthy (responded with "${SERVING_STATUS[s] ?? s}")` });
          },
        );
      });
    },
  };
}
