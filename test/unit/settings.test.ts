import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOLEAN_SETTINGS, NUMBER_SETTINGS, numberSetting, STRING_SETTINGS } from '../../src/shell/settingsSchema';

interface Declared {
  type: string | string[];
  scope?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
}

function restricted(): string[] {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    capabilities: { untrustedWorkspaces: { restrictedConfigurations?: string[] } };
  };
  return pkg.capabilities.untrustedWorkspaces.restrictedConfigurations ?? [];
}

function declared(): Record<string, Declared> {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, Declared> } | { properties: Record<string, Declared> }[] };
  };
  const c = pkg.contributes.configuration;
  return Object.assign({}, ...(Array.isArray(c) ? c : [c]).map((x) => x.properties)) as Record<string, Declared>;
}

describe('settings: package.json and the readers agree', () => {
  const props = declared();

  it('every number setting has the same default, minimum and maximum in both', () => {
    const numbers = Object.entries(props).filter(([, v]) => v.type === 'number' || v.type === 'integer');
    assert.deepEqual(numbers.map(([k]) => k).sort(), Object.keys(NUMBER_SETTINGS).sort(), 'the same number settings');
    for (const [key, v] of numbers) {
      const rule = NUMBER_SETTINGS[key as keyof typeof NUMBER_SETTINGS] as { default: number; minimum?: number; maximum?: number };
      assert.deepEqual(
        { default: v.default, minimum: v.minimum, maximum: v.maximum },
        { default: rule.default, minimum: rule.minimum, maximum: rule.maximum },
        key,
      );
    }
  });

  it('string and boolean defaults match', () => {
    for (const [key, d] of Object.entries(STRING_SETTINGS)) assert.equal(props[key]?.default, d, key);
    for (const [key, d] of Object.entries(BOOLEAN_SETTINGS)) {
      assert.equal(props[key]?.type, 'boolean', key);
      assert.equal(props[key]?.default, d, key);
    }
    const strings = Object.entries(props)
      .filter(([, v]) => v.type === 'string')
      .map(([k]) => k);
    for (const key of strings) assert.ok(key in STRING_SETTINGS, `${key} has a default in settingsSchema.ts`);
  });

  it('a value outside the limits falls back to the default; a fraction of a count is cut', () => {
    assert.equal(numberSetting('modelGateway.chat.maxToolSteps', 0), 25);
    assert.equal(numberSetting('modelGateway.chat.maxToolSteps', 201), 25);
    assert.equal(numberSetting('modelGateway.chat.maxToolSteps', 7.9), 7);
    assert.equal(numberSetting('modelGateway.chat.maxToolSteps', '9'), 25);
    assert.equal(numberSetting('modelGateway.requestTimeoutSeconds', 4), 600);
    assert.equal(numberSetting('modelGateway.lowBalanceWarningDollars', 1e9), 1e9, 'no maximum declared, none applied');
    assert.equal(numberSetting('modelGateway.assets.videoPollSeconds', 1), 1);
  });
});

describe('settings: what a cloned repository can set', () => {
  const props = declared();
  const userOnly = (v: Declared) => v.scope === 'application' || v.scope === 'machine';

  it('where requests and credentials go, and the spending cap, are user settings only', () => {
    for (const key of [
      'modelGateway.baseUrl',
      'modelGateway.extraHeaders',
      'modelGateway.userId',
      'modelGateway.lm.dailyCapDollars',
      'modelGateway.agent.allowedCommands',
      'modelGateway.agent.autoApprove',
    ]) {
      assert.equal(props[key]?.scope, 'application', key);
    }
  });

  it('every other setting that spends, writes or decides what is sent is restricted in untrusted workspaces', () => {
    const list = restricted();
    for (const key of list) assert.ok(props[key], `${key} is a declared setting`);
    // Lists that only add restrictions are read as the union of every level instead.
    const additive = new Set([
      'modelGateway.chat.toolExcludes',
      'modelGateway.chat.secretFiles',
      'modelGateway.search.excludes',
      'modelGateway.agent.deniedCommands',
    ]);
    const open = Object.entries(props)
      .filter(([k, v]) => !userOnly(v) && !list.includes(k) && !additive.has(k))
      .map(([k]) => k);
    assert.deepEqual(open, [], 'settings a repository could set in Restricted Mode');
  });
});
