/** The node's IP (upstream: --node-ip, else the first non-loopback address of the host). */
import { networkInterfaces } from 'node:os';

export function detectNodeIP(explicit: string | undefined): string {
  if (explicit) return explicit;
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
