/**
 * The CSI registration handler's version checks. Cases after upstream
 * pkg/volume/csi/csi_plugin_test.go TestValidatePlugin and TestValidatePluginExistingDriver.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CsiRegistrationHandler, highestSupportedVersion } from '../../../src/volume/csi/csi-registration.js';

const EP = '/var/lib/kubelet/plugins/d/csi.sock';

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
      await h.registerPlugin('d', EP, [existing]);
      if (ok) h.validatePlugin('d', EP, [offered]);
      else assert.throws(() => h.validatePlugin('d', EP, [offered]), /higher or equal version/);
    });
  }

  it('deregistering an older endpoint keeps the newer registration', async () => {
    const gone: string[] = [];
    const h = new CsiRegistrationHandler({ onDeregister: (d) => void gone.push(d.endpoint) });
    await h.registerPlugin('d', '/old.sock', ['1.0.0']);
    await h.registerPlugin('d', '/new.sock', ['1.1.0']);
    await h.deRegisterPlugin('d', '/old.sock');
    assert.equal(h.get('d')?.endpoint, '/new.sock');
    await h.deRegisterPlugin('d', '/new.sock');
    assert.equal(h.get('d'), undefined);
    assert.deepEqual(gone, ['/new.sock']);
  });
});
