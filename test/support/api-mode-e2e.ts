/**
 * The shared setup of the e2e files that drive the agent in API server mode with the real
 * kubectl: a namespace unique to the run and mode, the test runtime, the agent's directories,
 * a test apiserver and its kubeconfig, and one `after` that stops the agent (whichever instance
 * `fx.kubelet` holds last), the apiserver and the pods, and unmounts what the agent left.
 */
import { after } from 'node:test';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint } from './containerd.js';
import { kubectlRunner, kubectlSkip } from './kubectl.js';
import { makeKubeletDirs, stopKubelet, unmountUnder, type KubeletProcess } from './kubelet-process.js';
import { startTestApiserver, type TestApiserver } from './test-apiserver.js';

export interface ApiModeE2e {
  /** `<prefix>-<native|ts>-<random>`: pods of concurrent runs never meet. */
  ns: string;
  node: string;
  endpoint: string;
  runtime: ReturnType<typeof connectRuntime>['runtime'];
  dir: string;
  manifests: string;
  api: TestApiserver;
  kubeconfig: string;
  /** false when kubectl runs, else why a test that needs it is skipped. */
  skip: false | string;
  kubectl: ReturnType<typeof kubectlRunner>;
  /** The agent the test started last; stopped after the file's tests. */
  kubelet?: KubeletProcess | undefined;
}

export async function apiModeE2e(prefix: string): Promise<ApiModeE2e> {
  const mode = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
  const ns = `${prefix}-${mode}-${Math.random().toString(36).slice(2, 7)}`;
  const endpoint = await runtimeEndpoint();
  const { runtime } = connectRuntime(endpoint);
  const { dir, manifests } = makeKubeletDirs();
  const api = await startTestApiserver();
  const kubeconfig = api.kubeconfig(dir);
  const fx: ApiModeE2e = {
    ns,
    node: 'e2e-node',
    endpoint,
    runtime,
    dir,
    manifests,
    api,
    kubeconfig,
    skip: await kubectlSkip,
    kubectl: kubectlRunner(kubeconfig, ns),
  };
  after(async () => {
    if (fx.kubelet) await stopKubelet(fx.kubelet);
    await api.stop();
    await removeTestPods(runtime, { namespace: ns });
    await unmountUnder(dir);
    runtime.close();
  });
  return fx;
}
