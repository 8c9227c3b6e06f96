/**
 * The kubelet's node informer (upstream NewMainKubelet's nodeLister): one list+watch of this
 * node's own Node (fieldSelector metadata.name=<node>), started with the API clients. The node
 * status loop reads the Node from it every nodeStatusUpdateFrequency instead of GETting it, so
 * an idle node makes no Node request between its status patches (every
 * nodeStatusReportFrequency or on change): one long-lived watch instead of a GET every 10 s.
 */
import type { ApiClient } from '../apiclient/types.js';
import { ReflectedStore } from '../apiclient/reflected-store.js';
import type { ApiNode } from '../nodestatus/types.js';

export class NodeInformer {
  private readonly store: ReflectedStore<ApiNode>;

  constructor(
    client: ApiClient,
    private readonly nodeName: string,
  ) {
    this.store = new ReflectedStore<ApiNode>({
      client,
      path: '/api/v1/nodes',
      query: { fieldSelector: `metadata.name=${nodeName}` },
      what: `node ${nodeName}`,
      key: (n) => n.metadata?.name,
      // A server that ignored the selector sends other Nodes: only ours is kept.
      admit: (n) => n.metadata?.name === nodeName,
    });
  }

  start(): void {
    this.store.start();
  }

  stop(): void {
    this.store.stop();
  }

  /** The Node as last listed or watched; undefined before the first list or once it is deleted. */
  get(): ApiNode | undefined {
    return this.store.get(this.nodeName);
  }
}
