/**
 * A test kube-apiserver: in-memory, HTTPS, speaking the real wire protocol for what the kubelet
 * (and kubectl get/describe) uses — nodes, nodes/status, pods, pods/status, leases, events,
 * configmaps, secrets, services, serviceaccounts/token, node.k8s.io runtimeclasses, certificates.k8s.io CSRs,
 * storage (persistentvolumeclaims and persistentvolumes with their status subresource; storage.k8s.io
 * csinodes, csidrivers, volumeattachments with status, storageclasses: a created claim or volume is
 * Pending and an attachment unattached whatever the body said, as the real registry strategies)
 * (with bootstrap tokens and client-certificate users), pods/log|exec|attach|portforward
 * proxied to the node's kubelet (apiserver-node-proxy.ts); list with field and label selectors; watch as a
 * chunked stream of JSON watch events resuming from a resourceVersion, with bookmarks and
 * 410 Gone; JSON merge and (simplified, see apiserver-patch.ts) strategic merge patch; 409 on
 * resourceVersion and UID precondition conflicts; graceful pod deletion; pod metadata.generation
 * (1 at creation, +1 on each spec change and on graceful deletion: podGeneration). As a real apiserver,
 * namespace default holds the `kubernetes` Service (cluster IP 10.96.0.1, port 443 → this
 * server's port), and a created Service gets a cluster IP of 10.96.0.0/16 unless it is headless
 * or ExternalName. A fixture, not product.
 *
 * Every request is counted by client (User-Agent), verb and resource, with open watches, watch
 * restarts and relists (`traffic`, apiserver-traffic.ts; `call()` has its own User-Agent).
 *
 * More handlers can be mounted in front of the built-in routes (`extraHandlers`, each returns
 * true when it answered), e.g. TokenReview / SubjectAccessReview from another suite.
 */
import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { randomBytes } from 'node:crypto';
import { setPodDefaults } from '../../src/podconfig/defaults.js';
import { deepEqual } from '../../src/podconfig/pod-config.js';
import { ApiStore, type Obj } from './apiserver-store.js';
import { jsonMergePatch, strategicMergePatch } from './apiserver-patch.js';
import { withEphemeralContainers } from './apiserver-ephemeral.js';
import { makeTestCerts, writeKubeconfig, type TestCerts } from './test-certs.js';
import { NodeProxy } from './apiserver-node-proxy.js';
import { ApiTraffic, requestKind } from './apiserver-traffic.js';
import { join } from 'node:path';

interface ResourceDef {
  plural: string;
  kind: string;
  group: string;
  namespaced: boolean;
  shortNames?: string[];
}

const RESOURCES: readonly ResourceDef[] = [
  { plural: 'nodes', kind: 'Node', group: '', namespaced: false, shortNames: ['no'] },
  { plural: 'pods', kind: 'Pod', group: '', namespaced: true, shortNames: ['po'] },
  { plural: 'events', kind: 'Event', group: '', namespaced: true, shortNames: ['ev'] },
  { plural: 'configmaps', kind: 'ConfigMap', group: '', namespaced: true, shortNames: ['cm'] },
  { plural: 'secrets', kind: 'Secret', group: '', namespaced: true },
  { plural: 'services', kind: 'Service', group: '', namespaced: true, shortNames: ['svc'] },
  { plural: 'serviceaccounts', kind: 'ServiceAccount', group: '', namespaced: true, shortNames: ['sa'] },
  { plural: 'namespaces', kind: 'Namespace', group: '', namespaced: false, shortNames: ['ns'] },
  { plural: 'leases', kind: 'Lease', group: 'coordination.k8s.io', namespaced: true },
  { plural: 'runtimeclasses', kind: 'RuntimeClass', group: 'node.k8s.io', namespaced: false },
  { plural: 'csinodes', kind: 'CSINode', group: 'storage.k8s.io', namespaced: false },
  {
    plural: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    group: '',
    namespaced: true,
    shortNames: ['pvc'],
  },
  { plural: 'persistentvolumes', kind: 'PersistentVolume', group: '', namespaced: false, shortNames: ['pv'] },
  { plural: 'csidrivers', kind: 'CSIDriver', group: 'storage.k8s.io', namespaced: false },
  { plural: 'volumeattachments', kind: 'VolumeAttachment', group: 'storage.k8s.io', namespaced: false },
  { plural: 'storageclasses', kind: 'StorageClass', group: 'storage.k8s.io', namespaced: false, shortNames: ['sc'] },
  {
    plural: 'certificatesigningrequests',
    kind: 'CertificateSigningRequest',
    group: 'certificates.k8s.io',
    namespaced: false,
    shortNames: ['csr'],
  },
];

export type ExtraHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => boolean;

export interface TestApiserverOptions {
  /** Listen port; 0 = any (default). Restart on the same port with the same `store`. */
  port?: number;
  store?: ApiStore;
  certs?: TestCerts;
  token?: string;
  /** Interval of BOOKMARK events on watches that asked for them (default 1000 ms). */
  bookmarkMs?: number;
  extraHandlers?: ExtraHandler[];
  /**
   * Bootstrap tokens (`<id>.<secret>`, as kubeadm's): bearer credentials of user
   * system:bootstrap:<id> in group system:bootstrappers, allowed only to file and read CSRs.
   */
  bootstrapTokens?: string[];
}

/** Who made a request: the admin token, a bootstrap token, or a client certificate of the test CA. */
export interface RequestUser {
  name: string;
  groups: string[];
  /** Serial number of the client certificate that authenticated it. */
  certSerial?: string;
}

export interface RequestRecord {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  at: number;
}

export interface TestApiserver {
  port: number;
  url: string;
  store: ApiStore;
  certs: TestCerts;
  token: string;
  requests: RequestRecord[];
  extraHandlers: ExtraHandler[];
  /** Users of the requests, in order (for tests of who called). */
  users: RequestUser[];
  /** Requests by client, verb and resource, and open watches (apiserver-traffic.ts). */
  traffic: ApiTraffic;
  /** Writes a kubeconfig for this server into `dir` and returns its path. */
  kubeconfig(dir: string): string;
  /** A request as a client would make it (TLS + token); resolves with status and parsed body. */
  call(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; body: Obj }>;
  /** Closes the listener and every open connection (watches end abruptly, as in an outage). */
  stop(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Resources with a status subresource: the main resource never changes their status. */
const WITH_STATUS = new Set(['pods', 'nodes', 'persistentvolumeclaims', 'persistentvolumes', 'volumeattachments']);

/**
 * What the apiserver's PrepareForCreate makes of a new object's status (upstream registry
 * strategies): a claim and a volume start Pending, an attachment unattached, whatever was sent.
 */
const CREATED_STATUS: Readonly<Record<string, Obj>> = {
  persistentvolumeclaims: { phase: 'Pending' },
  persistentvolumes: { phase: 'Pending' },
  volumeattachments: { attached: false },
};

const apiVersionOf = (d: ResourceDef) => (d.group ? `${d.group}/v1` : 'v1');
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

const RESIZABLE = ['cpu', 'memory'];

/** The pod spec after a resize: `next`'s container resources and resizePolicy on `current`'s spec. */
function resizedSpec(current: Obj, next: Obj | undefined, name: string): Obj {
  const invalid = (m: string) => new HttpError(422, 'Invalid', `Pod "${name}" is invalid: ${m}`);
  const cur = (current.containers as Obj[] | undefined) ?? [];
  const want = (next?.containers as Obj[] | undefined) ?? cur;
  if (want.length !== cur.length || want.some((c, i) => c.name !== cur[i]!.name))
    throw invalid('spec.containers: Forbidden: containers may not be added, removed or renamed by a resize');
  const containers = cur.map((c, i) => {
    const w = want[i]!;
    const rest = (o: Obj) => JSON.stringify({ ...o, resources: undefined, resizePolicy: undefined });
    if (rest(c) !== rest(w))
      throw invalid(`spec: Forbidden: only cpu and memory resources are mutable (container ${String(c.name)})`);
    for (const kind of ['requests', 'limits']) {
      const a = ((c.resources as Obj | undefined)?.[kind] as Obj | undefined) ?? {};
      const b = ((w.resources as Obj | undefined)?.[kind] as Obj | undefined) ?? {};
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)]))
        if (!RESIZABLE.includes(k) && JSON.stringify(a[k]) !== JSON.stringify(b[k]))
          throw invalid(
            `spec.containers[${i}].resources.${kind}[${k}]: Forbidden: only cpu and memory resources are mutable`,
          );
    }
    return { ...c, resources: w.resources, resizePolicy: w.resizePolicy ?? c.resizePolicy };
  });
  const resized = { ...current, containers };
  if (qosClass(resized) !== qosClass(current))
    throw invalid('spec: Forbidden: Pod QOS Class may not change as a result of resizing');
  return resized;
}

/** The pod's QoS class from its containers (enough for the resize check). */
function qosClass(spec: Obj): string {
  const cs = (spec.containers as Obj[] | undefined) ?? [];
  const res = (c: Obj, k: string) => ((c.resources as Obj | undefined)?.[k] as Obj | undefined) ?? {};
  if (cs.every((c) => Object.keys(res(c, 'requests')).length === 0 && Object.keys(res(c, 'limits')).length === 0))
    return 'BestEffort';
  const guaranteed = cs.every((c) =>
    RESIZABLE.every(
      (r) =>
        res(c, 'limits')[r] !== undefined && (res(c, 'requests')[r] ?? res(c, 'limits')[r]) === res(c, 'limits')[r],
    ),
  );
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function statusBody(code: number, reason: string, message: string): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function lookup(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.'))
    cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[part] : undefined;
  return cur === undefined || cur === null ? '' : String(cur);
}

/** Field selectors: comma-separated `path=v`, `path==v`, `path!=v` terms, all must hold. */
export function matchesFieldSelector(obj: Obj, sel: string | null): boolean {
  if (!sel) return true;
  return sel
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const m = /^([^!=]+)(==|=|!=)(.*)$/.exec(term.trim());
      if (!m) throw new HttpError(400, 'BadRequest', `invalid field selector term "${term}"`);
      const v = lookup(obj, m[1]!.trim());
      return m[2] === '!=' ? v !== m[3] : v === m[3];
    });
}

/** Label selectors: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`. */
export function matchesLabelSelector(obj: Obj, sel: string | null): boolean {
  if (!sel) return true;
  const labels = (obj.metadata?.labels as Record<string, string> | undefined) ?? {};
  const terms = sel.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  return terms.every((raw) => {
    const t = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(t))) {
      const set = m[3]!.split(',').map((s) => s.trim());
      const has = m[1]! in labels && set.includes(labels[m[1]!]!);
      return m[2] === 'in' ? has : !has;
    }
    if ((m = /^([^!=]+)(==|=|!=)(.*)$/.exec(t)))
      return m[2] === '!=' ? labels[m[1]!.trim()] !== m[3]!.trim() : labels[m[1]!.trim()] === m[3]!.trim();
    if (t.startsWith('!')) return !(t.slice(1) in labels);
    return t in labels;
  });
}

interface Route {
  def: ResourceDef;
  namespace?: string;
  name?: string;
  sub?: string;
}

function parsePath(path: string): Route | undefined {
  const parts = path.split('/').filter(Boolean);
  let rest: string[];
  let group = '';
  if (parts[0] === 'api' && parts[1] === 'v1') rest = parts.slice(2);
  else if (parts[0] === 'apis' && parts.length >= 3 && parts[2] === 'v1') {
    group = parts[1]!;
    rest = parts.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const def = RESOURCES.find((d) => d.plural === rest[0] && d.group === group);
  if (!def || rest.length > 3) return undefined;
  return { def, namespace, name: rest[1], sub: rest[2] };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJson(body: Buffer): Obj {
  if (body.length === 0) return {};
  try {
    return JSON.parse(body.toString('utf8')) as Obj;
  } catch (err) {
    throw new HttpError(400, 'BadRequest', `request body is not JSON: ${String(err)}`);
  }
}

/** One named object of the API: its resource, namespace (none for cluster-scoped) and name. */
interface ObjectRef {
  def: ResourceDef;
  namespace: string | undefined;
  name: string;
}

class ApiHandler {
  private tokenCounter = 0;

  constructor(
    private readonly store: ApiStore,
    private readonly bookmarkMs: number,
  ) {}

  handle(req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer): void {
    if (this.discovery(url.pathname, res)) return;
    const route = parsePath(url.pathname);
    if (!route)
      throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${url.pathname})`);
    const { def, namespace, name, sub } = route;
    const method = req.method ?? 'GET';
    if (def.plural === 'serviceaccounts' && sub === 'token' && method === 'POST')
      return send(res, 201, this.tokenRequest(parseJson(body), namespace, name!));
    if (def.plural === 'pods' && sub === 'ephemeralcontainers' && name)
      return send(res, 200, this.ephemeralContainers({ def, namespace, name }, method, body, req));
    if (def.plural === 'pods' && sub === 'resize' && name) return this.resize({ def, namespace, name }, req, res, body);
    // certificatesigningrequests/approval is a status-like subresource (conditions only).
    const statusLike = sub === 'status' || (sub === 'approval' && def.plural === 'certificatesigningrequests');
    if (sub && !statusLike) throw new HttpError(404, 'NotFound', `unknown subresource ${sub}`);
    if (!name) {
      if (method === 'GET')
        return url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1'
          ? this.watch(res, def, namespace, url.searchParams)
          : send(res, 200, this.list(def, namespace, url.searchParams));
      if (method === 'POST') return send(res, 201, this.create(def, namespace, parseJson(body)));
      throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed on a collection`);
    }
    const ref: ObjectRef = { def, namespace, name };
    switch (method) {
      case 'GET':
        return send(res, 200, this.mustGet(def, namespace, name));
      case 'PUT':
        return send(res, 200, this.update(ref, parseJson(body), statusLike));
      case 'PATCH':
        return send(res, 200, this.patch(ref, body, req.headers['content-type'] ?? '', statusLike));
      case 'DELETE':
        return send(res, 200, this.delete(ref, parseJson(body), url.searchParams));
      default:
        throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed`);
    }
  }

  private discovery(path: string, res: ServerResponse): boolean {
    const resourceList = (group: string) => ({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/v1` : 'v1',
      resources: RESOURCES.filter((d) => d.group === group).flatMap((d) => [
        {
          name: d.plural,
          singularName: d.kind.toLowerCase(),
          namespaced: d.namespaced,
          kind: d.kind,
          verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
          shortNames: d.shortNames,
        },
        ...(WITH_STATUS.has(d.plural)
          ? [
              {
                name: `${d.plural}/status`,
                singularName: '',
                namespaced: d.namespaced,
                kind: d.kind,
                verbs: ['get', 'patch', 'update'],
              },
            ]
          : []),
        ...(d.plural === 'pods'
          ? [
              {
                name: 'pods/ephemeralcontainers',
                singularName: '',
                namespaced: true,
                kind: 'Pod',
                verbs: ['get', 'patch', 'update'],
              },
              {
                name: 'pods/resize',
                singularName: '',
                namespaced: true,
                kind: 'Pod',
                verbs: ['get', 'patch', 'update'],
              },
            ]
          : []),
      ]),
    });
    const groups = [...new Set(RESOURCES.map((d) => d.group).filter(Boolean))];
    const bodies: Record<string, unknown> = {
      // A kubelet may not be newer than its apiserver: the fake is as new as the agent (v1.35).
      '/version': { major: '1', minor: '35', gitVersion: 'v1.35.0-kubelet-ts-test', platform: 'linux/amd64' },
      '/api': {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }],
      },
      '/apis': {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: groups.map((g) => ({
          name: g,
          versions: [{ groupVersion: `${g}/v1`, version: 'v1' }],
          preferredVersion: { groupVersion: `${g}/v1`, version: 'v1' },
        })),
      },
      '/api/v1': resourceList(''),
      ...Object.fromEntries(groups.map((g) => [`/apis/${g}/v1`, resourceList(g)])),
    };
    if (!(path in bodies)) return false;
    send(res, 200, bodies[path]);
    return true;
  }

  private mustGet(def: ResourceDef, namespace: string | undefined, name: string): Obj {
    const o = this.store.get(def.plural, namespace, name);
    if (!o) throw new HttpError(404, 'NotFound', `${def.plural} "${name}" not found`);
    return { kind: def.kind, apiVersion: apiVersionOf(def), ...o };
  }

  private list(def: ResourceDef, namespace: string | undefined, q: URLSearchParams): Obj {
    const items = this.store
      .list(def.plural, namespace)
      .filter(
        (o) => matchesFieldSelector(o, q.get('fieldSelector')) && matchesLabelSelector(o, q.get('labelSelector')),
      );
    return {
      kind: `${def.kind}List`,
      apiVersion: apiVersionOf(def),
      metadata: { resourceVersion: String(this.store.rv) },
      items,
    };
  }

  private create(def: ResourceDef, namespace: string | undefined, obj: Obj): Obj {
    const meta = (obj.metadata ??= {});
    if (!meta.name && meta.generateName)
      meta.name = `${String(meta.generateName)}${randomBytes(3).toString('hex').slice(0, 5)}`;
    if (!meta.name) throw new HttpError(422, 'Invalid', 'metadata.name: Required value');
    if (def.namespaced) meta.namespace = namespace ?? meta.namespace ?? 'default';
    if (this.store.get(def.plural, meta.namespace as string | undefined, meta.name as string))
      throw new HttpError(409, 'AlreadyExists', `${def.plural} "${String(meta.name)}" already exists`);
    delete meta.resourceVersion;
    delete meta.uid;
    if (def.plural === 'pods') {
      setPodDefaults(obj);
      obj.status = { phase: 'Pending', ...(obj.status as Obj | undefined) };
      meta.generation = 1;
    }
    if (def.plural === 'services') setServiceDefaults(obj, this.store);
    const createdStatus = CREATED_STATUS[def.plural];
    if (createdStatus) obj.status = structuredClone(createdStatus);
    if (def.plural === 'persistentvolumes') (obj.status as Obj).lastPhaseTransitionTime = now();
    return { kind: def.kind, apiVersion: apiVersionOf(def), ...this.store.put(def.plural, obj, 'ADDED') };
  }

  private checkPreconditions(current: Obj, meta: Record<string, unknown> | undefined): void {
    if (meta?.resourceVersion && meta.resourceVersion !== current.metadata!.resourceVersion) {
      throw new HttpError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${String(current.metadata!.name)}: the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    if (meta?.uid && meta.uid !== current.metadata!.uid) {
      throw new HttpError(
        409,
        'Conflict',
        `Precondition failed: UID in precondition: ${String(meta.uid)}, UID in object meta: ${String(current.metadata!.uid)}`,
      );
    }
  }

  /** The status subresource changes only status; the main resource never changes status. */
  private store_(def: ResourceDef, current: Obj, next: Obj, statusOnly: boolean): Obj {
    const merged: Obj = statusOnly
      ? { ...current, status: next.status }
      : { ...next, status: current.status ?? next.status };
    // upstream nodeStatusStrategy resets only the spec: nodes/status may change the metadata too
    // (the kubelet drops a stale provided-node-ip annotation that way).
    const metadataFromNext = !statusOnly || def.plural === 'nodes';
    merged.metadata = {
      ...(metadataFromNext ? next.metadata : current.metadata),
      uid: current.metadata!.uid,
      creationTimestamp: current.metadata!.creationTimestamp,
      namespace: current.metadata!.namespace,
      name: current.metadata!.name,
    };
    if (def.plural === 'pods') podGeneration(current, merged);
    return { kind: def.kind, apiVersion: apiVersionOf(def), ...this.store.put(def.plural, merged, 'MODIFIED') };
  }

  private update({ def, namespace, name }: ObjectRef, obj: Obj, statusOnly: boolean): Obj {
    const current = this.mustGet(def, namespace, name);
    this.checkPreconditions(current, obj.metadata);
    return this.store_(def, current, obj, statusOnly);
  }

  /** pods/{name}/ephemeralcontainers (apiserver-ephemeral.ts): only ephemeral containers change. */
  private ephemeralContainers(ref: ObjectRef, method: string, body: Buffer, req: IncomingMessage): Obj {
    const current = this.mustGet(ref.def, ref.namespace, ref.name);
    if (method === 'GET') return current;
    if (method !== 'PUT' && method !== 'PATCH')
      throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed`);
    const next = method === 'PUT' ? parseJson(body) : this.patched(current, body, req.headers['content-type'] ?? '');
    this.checkPreconditions(current, next.metadata as Record<string, unknown> | undefined);
    const result = withEphemeralContainers(current, next);
    if ('invalid' in result) throw new HttpError(422, 'Invalid', result.invalid);
    return this.store_(ref.def, current, result.pod, false);
  }

  private patch({ def, namespace, name }: ObjectRef, body: Buffer, contentType: string, statusOnly: boolean): Obj {
    const current = this.mustGet(def, namespace, name);
    return this.store_(def, current, this.patched(current, body, contentType), statusOnly);
  }

  /** `current` with the patch in `body` applied (its preconditions checked). */
  private patched(current: Obj, body: Buffer, contentType: string): Obj {
    const patch = parseJson(body);
    this.checkPreconditions(current, patch.metadata as Record<string, unknown> | undefined);
    let next: unknown;
    if (contentType.startsWith('application/merge-patch+json')) next = jsonMergePatch(current, patch);
    else if (contentType.startsWith('application/strategic-merge-patch+json'))
      next = strategicMergePatch(current, patch);
    else
      throw new HttpError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json, application/strategic-merge-patch+json (got ${contentType})`,
      );
    return next as Obj;
  }

  /**
   * pods/resize (upstream 1.35): only the containers' cpu/memory requests and limits and their
   * resizePolicy may change; the pod's QoS class may not. Anything else is 422 Invalid.
   */
  private resize(ref: ObjectRef, req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const method = req.method ?? 'GET';
    const current = this.mustGet(ref.def, ref.namespace, ref.name);
    if (method === 'GET') return send(res, 200, current);
    let next: Obj;
    if (method === 'PUT') next = parseJson(body);
    else if (method === 'PATCH') {
      const patch = parseJson(body);
      const type = req.headers['content-type'] ?? '';
      next = (type.startsWith('application/merge-patch+json') ? jsonMergePatch : strategicMergePatch)(
        current,
        patch,
      ) as Obj;
    } else throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed`);
    const spec = resizedSpec(current.spec as Obj, next.spec as Obj | undefined, ref.name);
    const meta = { ...(current.metadata as Obj) };
    meta.generation = Number(meta.generation ?? 1) + 1;
    send(res, 200, this.store_(ref.def, current, { ...current, metadata: meta, spec }, false));
  }

  private delete({ def, namespace, name }: ObjectRef, opts: Obj, q: URLSearchParams): Obj {
    const current = this.mustGet(def, namespace, name);
    this.checkPreconditions(current, opts.preconditions as Record<string, unknown> | undefined);
    if (def.plural === 'pods') {
      const graceRaw =
        opts.gracePeriodSeconds ??
        q.get('gracePeriodSeconds') ??
        (current.spec as Obj | undefined)?.terminationGracePeriodSeconds ??
        30;
      const grace = Number(graceRaw);
      const phase = (current.status as Obj | undefined)?.phase;
      const bound = Boolean((current.spec as Obj | undefined)?.nodeName);
      // Upstream pod strategy: graceful only for a bound pod that has not finished.
      if (grace > 0 && bound && phase !== 'Succeeded' && phase !== 'Failed') {
        const meta = current.metadata!;
        if (meta.deletionTimestamp && Number(meta.deletionGracePeriodSeconds) <= grace) return current;
        meta.deletionTimestamp = new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
        meta.deletionGracePeriodSeconds = grace;
        // upstream rest.BeforeDelete: a graceful deletion is a new generation.
        if (Number(meta.generation) > 0) meta.generation = Number(meta.generation) + 1;
        return { kind: def.kind, apiVersion: apiVersionOf(def), ...this.store.put(def.plural, current, 'MODIFIED') };
      }
    }
    const removed = this.store.remove(def.plural, namespace, name)!;
    return { kind: def.kind, apiVersion: apiVersionOf(def), ...removed };
  }

  private tokenRequest(req: Obj, namespace: string | undefined, name: string): Obj {
    const spec = (req.spec as Obj | undefined) ?? {};
    const seconds = Number(spec.expirationSeconds ?? 3600);
    const token = `kts-test-token.${namespace}.${name}.${++this.tokenCounter}.${randomBytes(6).toString('hex')}`;
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace },
      spec,
      status: {
        token,
        expirationTimestamp: new Date(Date.now() + seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    };
  }

  private watch(res: ServerResponse, def: ResourceDef, namespace: string | undefined, q: URLSearchParams): void {
    const matches = (o: Obj) =>
      (namespace === undefined || o.metadata?.namespace === namespace) &&
      matchesFieldSelector(o, q.get('fieldSelector')) &&
      matchesLabelSelector(o, q.get('labelSelector'));
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const write = (type: string, object: unknown) => {
      if (!res.writableEnded && !res.destroyed) res.write(`${JSON.stringify({ type, object })}\n`);
    };
    const rvParam = q.get('resourceVersion');
    const from = rvParam === null || rvParam === '' || rvParam === '0' ? undefined : Number(rvParam);
    const stamp = (o: Obj) => ({ kind: def.kind, apiVersion: apiVersionOf(def), ...o });
    if (from === undefined) {
      for (const o of this.store.list(def.plural, namespace)) if (matches(o)) write('ADDED', stamp(o));
    } else {
      const changes = this.store.since(from);
      if (!changes) {
        write('ERROR', statusBody(410, 'Expired', `too old resource version: ${from} (${this.store.compactedRv})`));
        res.end();
        return;
      }
      for (const c of changes) if (c.plural === def.plural && matches(c.object)) write(c.type, stamp(c.object));
    }
    const unsubscribe = this.store.subscribe((c) => {
      if (c.plural === def.plural && matches(c.object)) write(c.type, stamp(c.object));
    });
    const timers: NodeJS.Timeout[] = [];
    if (q.get('allowWatchBookmarks') === 'true') {
      timers.push(
        setInterval(
          () =>
            write('BOOKMARK', {
              kind: def.kind,
              apiVersion: apiVersionOf(def),
              metadata: { resourceVersion: String(this.store.rv) },
            }),
          this.bookmarkMs,
        ),
      );
    }
    const timeout = Number(q.get('timeoutSeconds') ?? 0);
    if (timeout > 0) timers.push(setTimeout(() => res.end(), timeout * 1000));
    const cleanup = () => {
      unsubscribe();
      for (const t of timers) clearTimeout(t);
    };
    res.on('close', cleanup);
  }
}

/** The User-Agent of `call()`: the test's own requests, told apart from the agent's in `traffic`. */
export const TEST_CALL_USER_AGENT = 'kts-test-apiserver-call';

/** The first address of the service CIDR, which a real apiserver gives its own Service. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';

/** Service defaulting and cluster IP allocation (the apiserver's, reduced): type, IP, port protocols. */
function setServiceDefaults(svc: Obj, store: ApiStore): void {
  const spec = ((svc.spec as Obj | undefined) ?? {}) as Obj & { ports?: Obj[] };
  svc.spec = spec;
  spec.type ??= 'ClusterIP';
  for (const p of spec.ports ?? []) p.protocol ??= 'TCP';
  if (spec.type === 'ExternalName' || spec.clusterIP) return;
  const used = new Set(store.list('services').map((s) => (s.spec as Obj | undefined)?.clusterIP));
  let n = 100;
  while (used.has(`10.96.${n >> 8}.${n & 255}`)) n++;
  spec.clusterIP = `10.96.${n >> 8}.${n & 255}`;
  spec.clusterIPs = [spec.clusterIP];
}

/** default/kubernetes, as the apiserver keeps it: port 443 (https) to the apiserver's own port. */
function ensureKubernetesService(store: ApiStore, port: number): void {
  if (store.get('services', 'default', 'kubernetes')) return;
  store.put(
    'services',
    {
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { component: 'apiserver', provider: 'kubernetes' },
      },
      spec: {
        type: 'ClusterIP',
        clusterIP: KUBERNETES_SERVICE_IP,
        clusterIPs: [KUBERNETES_SERVICE_IP],
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }],
      },
    },
    'ADDED',
  );
}

const CSR_COLLECTION = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

function authenticate(req: IncomingMessage, adminToken: string, bootstrapTokens: string[]): RequestUser | undefined {
  const auth = req.headers.authorization;
  if (auth === `Bearer ${adminToken}`)
    return { name: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };
  const bearer = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
  if (bearer && bootstrapTokens.includes(bearer)) {
    return {
      name: `system:bootstrap:${bearer.split('.')[0]}`,
      groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'],
    };
  }
  const sock = req.socket as TLSSocket;
  if (!auth && sock.authorized) {
    const peer = sock.getPeerCertificate();
    const o = peer?.subject?.O;
    const cn = peer?.subject?.CN;
    if (typeof cn === 'string' && cn)
      return {
        name: cn,
        groups: [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated'],
        certSerial: peer.serialNumber,
      };
  }
  return undefined;
}

/** Bootstrap tokens may only file and read CSRs (kubeadm's RBAC for system:bootstrappers). */
function authorize(user: RequestUser, method: string, path: string): void {
  if (!user.groups.includes('system:bootstrappers')) return;
  if (
    path === '/version' ||
    path === '/healthz' ||
    (path.startsWith(CSR_COLLECTION) && (method === 'GET' || method === 'POST'))
  )
    return;
  throw new HttpError(403, 'Forbidden', `User "${user.name}" cannot ${method.toLowerCase()} ${path}`);
}

/**
 * kube-apiserver's pod generation (KEP-5067, GA in 1.35): what a client sends is ignored; a write
 * that changes the spec (an update, a patch, a subresource such as ephemeralcontainers or resize)
 * is the next generation, any other write keeps the current one.
 */
export function podGeneration(current: Obj, next: Obj): void {
  const was = Number(current.metadata?.generation ?? 0);
  const generation = deepEqual(current.spec, next.spec) ? was : was + 1;
  if (generation > 0) next.metadata!.generation = generation;
  else delete next.metadata!.generation;
}

/** A created CSR records its requester (spec.username / groups), as kube-apiserver does. */
function stampRequester(user: RequestUser, method: string, path: string, body: Buffer): Buffer {
  if (method !== 'POST' || path !== CSR_COLLECTION || body.length === 0) return body;
  const obj = parseJson(body);
  obj.spec = { ...(obj.spec as Obj | undefined), username: user.name, groups: user.groups };
  return Buffer.from(JSON.stringify(obj));
}

export async function startTestApiserver(opts: TestApiserverOptions = {}): Promise<TestApiserver> {
  const certs = opts.certs ?? makeTestCerts();
  const store = opts.store ?? new ApiStore();
  const token = opts.token ?? `kts-${randomBytes(8).toString('hex')}`;
  const extraHandlers = opts.extraHandlers ?? [];
  const requests: RequestRecord[] = [];
  const handler = new ApiHandler(store, opts.bookmarkMs ?? 1000);
  const sockets = new Set<Socket>();
  const users: RequestUser[] = [];
  const nodeProxy = new NodeProxy(store, certs);
  const traffic = new ApiTraffic();
  /** Counts a request under its User-Agent; a watch stays open until its response closes. */
  const countRequest = (req: IncomingMessage, res: ServerResponse | undefined, url: URL) => {
    const method = req.method ?? 'GET';
    const r = parsePath(url.pathname);
    const route = r && { plural: r.def.plural, name: r.name, sub: r.sub };
    const closed = traffic.count(req.headers['user-agent'] ?? '', requestKind(method, url, route));
    if (closed) res?.on('close', closed);
  };
  // Client certificates are asked for, not required: the kubelet's bootstrapped certificate is one.
  const server: Server = createServer(
    { cert: certs.cert, key: certs.key, ca: certs.ca, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'https://127.0.0.1');
        const rawBody = await readBody(req);
        requests.push({
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          contentType: req.headers['content-type'],
          at: Date.now(),
        });
        countRequest(req, res, url);
        try {
          for (const h of extraHandlers) if (h(req, res, rawBody)) return;
          const user = authenticate(req, token, opts.bootstrapTokens ?? []);
          if (!user) throw new HttpError(401, 'Unauthorized', 'Unauthorized');
          users.push(user);
          authorize(user, req.method ?? 'GET', url.pathname);
          if (nodeProxy.matches(url.pathname)) return nodeProxy.handle(req, res, url);
          handler.handle(req, res, url, stampRequester(user, req.method ?? 'GET', url.pathname, rawBody));
        } catch (err) {
          const e = err instanceof HttpError ? err : new HttpError(500, 'InternalError', String(err));
          if (!res.headersSent) send(res, e.code, statusBody(e.code, e.reason, e.message));
          else res.end();
        }
      })();
    },
  );
  // kube-apiserver keeps an idle connection 90 s (secure_serving.go, IdleTimeout, as Go's
  // DefaultTransport); Node's default of 5 s made the agent open a TLS connection per lease update.
  server.keepAliveTimeout = 90_000;
  // pods/exec, attach and portforward arrive as upgrades: proxied to the node's kubelet.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      contentType: req.headers['content-type'],
      at: Date.now(),
    });
    countRequest(req, undefined, url);
    const user = authenticate(req, token, opts.bootstrapTokens ?? []);
    if (!user || user.groups.includes('system:bootstrappers') || !nodeProxy.matches(url.pathname)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    users.push(user);
    nodeProxy.upgrade(req, socket, head, url);
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  ensureKubernetesService(store, port);
  const url = `https://127.0.0.1:${port}`;
  return {
    port,
    url,
    store,
    certs,
    token,
    requests,
    extraHandlers,
    users,
    traffic,
    call: (method, path, body, contentType) =>
      new Promise((resolve, reject) => {
        const text = body === undefined ? undefined : JSON.stringify(body);
        const headers = {
          authorization: `Bearer ${token}`,
          'user-agent': TEST_CALL_USER_AGENT,
          'content-type': contentType ?? 'application/json',
          'content-length': String(text === undefined ? 0 : Buffer.byteLength(text)),
        };
        const req = httpsRequest(`${url}${path}`, { method, ca: certs.ca, headers, timeout: 10_000 }, (res) => {
          let answer = '';
          res.on('data', (c) => (answer += c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: answer ? (JSON.parse(answer) as Obj) : {} }),
          );
        });
        req.on('error', reject);
        req.end(text);
      }),
    kubeconfig: (dir: string) => writeKubeconfig(join(dir, 'kubeconfig'), url, certs.caFile, token),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

export { ApiStore } from './apiserver-store.js';
export { now as apiNow };
