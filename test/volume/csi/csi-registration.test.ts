/**
 * The CSI registration handler's version checks. Cases after upstream
 * pkg/volume/csi/csi_plugin_test.go TestValidatePlugin and TestValidatePluginExistingDriver.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CsiRegistrationHandler, highestSupportedVersion } from '../../../src/volume/csi/csi-registration.js';
import { CSI_NODE_SERVICE } from '../../../src/volume/csi/proto.js';
import { testTempDir } from '../../support/temp-dir.js';
import { startServer, type TestServer } from './grpc-server.js';

const dir = testTempDir('kts-csi-reg-');
const EP = join(dir, 'csi.sock');
const OLD = join(dir, 'old.sock');
const NEW = join(dir, 'new.sock');
const servers: TestServer[] = [];
before(async () => {
  for (const p of [EP, OLD, NEW]) {
    servers.push(await startServer(p, { [CSI_NODE_SERVICE]: { NodeGetInfo: () => ({ nodeId: 'n1' }) } }));
  }
});
after(async () => {
  for (const s of servers) await s.stop();
});

describe('CsiRegistrationHandler.validatePlugin (upstream TestValidatePlugin)', () => {
  const cases: Array<[string[], boolean]> = [
    [['v1.0.0'], true],
    [['0.3.0', '1.0.0'], true],
    [['1.0.0', '2.0.0'], true],
    [['v1.2', 'v1.10.0'], true],
    [['0.2.0', '0.3.0'], false],
    [['2.0.0'], false],
    [['var', 'v1.0.0'], true],
    [['var'], false],
    [[], false],
  ];
  for (const [versions, ok] of cases) {
    it(`${JSON.stringify(versions)} → ${ok ? 'accepted' : 'refused'}`, () => {
      const h = new CsiRegistrationHandler();
      if (ok) h.validatePlugin('d', EP, versions);
      else assert.throws(() => h.validatePlugin('d', EP, versions), { code: 'KTS_ERR_PLUGIN_REGISTRATION' });
    });
  }

  it('picks the highest v1 version', () => {
    assert.deepEqual(highestSupportedVersion(['1.0.0', 'v1.10.0', '1.2.3', '2.0.0']), {
      major: 1,
      minor: 10,
      patch: 0,
    });
  });
});

describe('an existing driver of the same name (upstream TestValidatePluginExistingDriver)', () => {
  const cases: Array<[string, string, boolean]> = [
    ['1.0.0', '1.0.0', false],
    ['1.0.0', '1.1.0', true],
    ['1.2.0', '1.1.0', false],
  ];
  for (const [existing, offered, ok] of cases) {
    it(`registered ${existing}, offered ${offered} → ${ok ? 'accepted' : 'refused'}`, async () => {
      const h = new CsiRegistrationHandler();
      await h.registerPlugin('d', EP, [existing], 1000);
      if (ok) h.validatePlugin('d', EP, [offered]);
      else assert.throws(() => h.validatePlugin('d', EP, [offered]), /higher or equal version/);
    });
  }

  it('deregistering an older endpoint keeps the newer registration', async () => {
    const gone: string[] = [];
    const h = new CsiRegistrationHandler({ onDeregister: (d) => void gone.push(d.endpoint) });
    await h.registerPlugin('d', OLD, ['1.0.0'], 1000);
    await h.registerPlugin('d', NEW, ['1.1.0'], 1000);
    await h.deRegisterPlugin('d', OLD);
    assert.equal(h.get('d')?.endpoint, NEW);
    await h.deRegisterPlugin('d', NEW);
    assert.equal(h.get('d'), undefined);
    assert.deepEqual(gone, [NEW]);
  });
});
