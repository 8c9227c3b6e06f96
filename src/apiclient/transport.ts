/**
 * What a kubeconfig turns into for node:https: the server URL, TLS options (CA, client pair,
 * verification, server name), credentials that follow rotation, and connection pools that
 * tunnel through the cluster's proxy-url when there is one. Shared by the API clients and the
 * auth webhooks' review client.
 */
import { Agent, type AgentOptions, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Duplex } from 'node:stream';
import { ApiError, errorMessage } from '../errors.js';
import { loadKubeconfig, type Kubeconfig } from './kubeconfig.js';
import { userCredentials, type Credentials } from './credentials.js';

export interface Transport {
  base: URL;
  /** ca/cert/key, verification and server name (no headers: credentials carry the Authorization). */
  tls: RequestOptions;
  /** Token, token file, exec plugin or basic auth; absent: TLS client certificate or anonymous. */
  credentials?: Credentials;
  /** A keep-alive pool of at most `maxSockets` connections to the server (through the proxy, if any). */
  newAgent(maxSockets: number): Agent;
}

/** The TLS options of a kubeconfig's cluster and user. */
export function tlsOptionsOf(kc: Kubeconfig): RequestOptions {
  return {
    ca: kc.cluster.ca,
    cert: kc.user.cert,
    key: kc.user.key,
    rejectUnauthorized: !kc.cluster.insecureSkipTlsVerify,
    // Node checks the certificate against servername when it is set (as Go's tls ServerName).
    servername: kc.cluster.tlsServerName,
  };
}

/** Loads the kubeconfig at `path` (KubeconfigError on any problem) into a Transport. */
export function transportOf(path: string): Transport {
  const kc = loadKubeconfig(path);
  const tls = tlsOptionsOf(kc);
  const proxy = kc.cluster.proxyUrl;
  const agentOptions = (maxSockets: number): AgentOptions => ({ keepAlive: true, maxSockets, ...tls }) as AgentOptions;
  return {
    base: kc.cluster.server,
    tls,
    credentials: userCredentials(kc.user),
    newAgent: (maxSockets) =>
      proxy ? new TunnelingAgent(proxy, agentOptions(maxSockets)) : new Agent(agentOptions(maxSockets)),
  };
}

/**
 * An https.Agent whose connections go through an HTTP CONNECT tunnel of `proxy` (client-go's
 * proxy-url for http and https proxies). The TLS handshake with the apiserver runs inside the
 * tunnel, so the proxy sees only the host and port.
 */
class TunnelingAgent extends Agent {
  constructor(
    private readonly proxy: URL,
    opts: AgentOptions,
  ) {
    super(opts);
  }

  // Node's Agent takes the callback form of createConnection for sockets made asynchronously.
  override createConnection(
    options: ConnectionOptions & { host?: string; port?: number },
    done: (err: Error | null, socket?: Duplex) => void,
  ): undefined {
    const target = `${options.host ?? 'localhost'}:${options.port ?? 443}`;
    const headers: Record<string, string> = { host: target };
    if (this.proxy.username)
      headers['proxy-authorization'] =
        `Basic ${Buffer.from(`${decodeURIComponent(this.proxy.username)}:${decodeURIComponent(this.proxy.password)}`).toString('base64')}`;
    const send = this.proxy.protocol === 'https:' ? httpsRequest : httpRequest;
    const fail = (why: string, cause?: unknown) =>
      done(new ApiError(0, 'ConnectionFailed', `proxy ${this.proxy.host}: CONNECT ${target}: ${why}`, { cause }));
    const req = send({
      host: this.proxy.hostname,
      port: this.proxy.port || (this.proxy.protocol === 'https:' ? 443 : 80),
      method: 'CONNECT',
      path: target,
      headers,
      agent: false,
    });
    req.once('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        return fail(`answered ${res.statusCode}`);
      }
      done(null, tlsConnect({ ...options, socket }));
    });
    req.once('error', (err) => fail(errorMessage(err), err));
    req.end();
    return undefined;
  }
}
