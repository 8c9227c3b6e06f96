/**
 * PreventStaticPodAPIReferences: upstream HasAPIObjectReference (pkg/api/pod/util.go), case by
 * case in its order, and the refusal of such a pod by the file and http sources (upstream
 * tryDecodeSinglePod: "static pods may not reference <resource>").
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { ManifestError } from '../../src/errors.js';
import { apiObjectReference } from '../../src/podconfig/api-references.js';
import { decodeStaticPodManifest, decodeUrlManifest } from '../../src/podconfig/manifest.js';

const ctr = (extra: Record<string, unknown> = {}) => ({ name: 'c', image: 'busybox', ...extra });
const pod = (spec: Record<string, unknown>): Pod => ({ spec: { containers: [ctr()], ...spec } }) as Pod;
const vol = (source: Record<string, unknown>) => ({ volumes: [{ name: 'v', ...source }] });
const projected = (source: Record<string, unknown>) => vol({ projected: { sources: [source] } });

describe('apiObjectReference (upstream HasAPIObjectReference)', () => {
  const cases: Array<[string, Record<string, unknown>, string | undefined]> = [
    ['nothing but containers', {}, undefined],
    ['serviceAccountName', { serviceAccountName: 'sa' }, 'serviceaccounts'],
    ['imagePullSecrets', { imagePullSecrets: [{ name: 's' }] }, 'secrets'],
    [
      'env secretKeyRef',
      { containers: [ctr({ env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] })] },
      'secrets',
    ],
    [
      'envFrom secretRef in an init container',
      { initContainers: [ctr({ envFrom: [{ secretRef: { name: 's' } }] })] },
      'secrets',
    ],
    [
      'env in an ephemeral container',
      { ephemeralContainers: [ctr({ envFrom: [{ secretRef: { name: 's' } }] })] },
      'secrets',
    ],
    ['csi nodePublishSecretRef', vol({ csi: { driver: 'd', nodePublishSecretRef: { name: 's' } } }), 'secrets'],
    ['rbd secretRef', vol({ rbd: { monitors: ['m'], image: 'i', secretRef: { name: 's' } } }), 'secrets'],
    ['secret volume (counted as secrets first)', vol({ secret: { secretName: 's' } }), 'secrets'],
    ['projected secret', projected({ secret: { name: 's' } }), 'secrets'],
    [
      'env configMapKeyRef',
      { containers: [ctr({ env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }] })] },
      'configmaps',
    ],
    ['envFrom configMapRef', { containers: [ctr({ envFrom: [{ configMapRef: { name: 'c' } }] })] }, 'configmaps'],
    ['configMap volume', vol({ configMap: { name: 'c' } }), 'configmaps'],
    ['projected configMap', projected({ configMap: { name: 'c' } }), 'configmaps'],
    ['resourceClaims', { resourceClaims: [{ name: 'r', resourceClaimName: 'x' }] }, 'resourceclaims'],
    ['csi volume without a secret', vol({ csi: { driver: 'd' } }), 'csidrivers (via CSI volumes)'],
    ['glusterfs volume', vol({ glusterfs: { endpoints: 'e', path: 'p' } }), 'endpoints (via glusterFS volumes)'],
    ['persistentVolumeClaim', vol({ persistentVolumeClaim: { claimName: 'c' } }), 'persistentvolumeclaims'],
    [
      'ephemeral volume',
      vol({ ephemeral: { volumeClaimTemplate: { spec: {} } } }),
      'persistentvolumeclaims (via ephemeral volumes)',
    ],
    ['azureFile (a secret by name)', vol({ azureFile: { secretName: 's', shareName: 'x' } }), 'secrets'],
    [
      'projected serviceAccountToken',
      projected({ serviceAccountToken: { path: 't' } }),
      'serviceaccounts (via projected volumes)',
    ],
    [
      'projected clusterTrustBundle',
      projected({ clusterTrustBundle: { path: 'b', name: 'n' } }),
      'clustertrustbundles',
    ],
    [
      'projected podCertificate',
      projected({ podCertificate: { signerName: 'a/b', keyType: 'ED25519', credentialBundlePath: 'p' } }),
      'podcertificates',
    ],
    ['projected downwardAPI only', projected({ downwardAPI: { items: [] } }), undefined],
    [
      'emptyDir, hostPath and downwardAPI',
      {
        volumes: [
          { name: 'a', emptyDir: {} },
          { name: 'b', hostPath: { path: '/x' } },
          { name: 'c', downwardAPI: {} },
        ],
      },
      undefined,
    ],
  ];
  for (const [name, spec, want] of cases) it(name, () => assert.equal(apiObjectReference(pod(spec)), want));
});

describe('the file and http sources refuse such pods', () => {
  const text = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web' },
    spec: { containers: [ctr()], volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }] },
  });
  it('a static pod file', () =>
    assert.throws(
      () => decodeStaticPodManifest(text, { file: '/m/web.json', nodeName: 'n' }),
      (e: unknown) =>
        e instanceof ManifestError && e.message === '/m/web.json: spec: static pods may not reference configmaps',
    ));
  it('a PodList item from a manifest URL', () => {
    const listText = JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [JSON.parse(text)] });
    assert.throws(() => decodeUrlManifest(listText, { url: 'http://m/pods', nodeName: 'n' }), {
      message: 'http://m/pods: items[0].spec: static pods may not reference configmaps',
    });
  });
});
