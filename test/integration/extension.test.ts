// @profile-dependent: sign-in and the account state differ (New-Api-User, balance).
// @vscode-specific: activation, contributions and the engines claim on each VS Code; the credential scan of each profile.
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { AccountNode } from '../../src/account/host/tree';
import { config } from './config';
import { api, emulatorRequests, runAnswering, until } from './helpers';

function label(item: vscode.TreeItem): string {
  return typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
}

async function children(node?: AccountNode): Promise<{ node: AccountNode; item: vscode.TreeItem }[]> {
  const { testing } = await api();
  const nodes = await testing.accountTree.getChildren(node);
  return nodes.map((n) => ({ node: n, item: testing.accountTree.getTreeItem(n) }));
}

function allSettingsText(): string {
  const c = vscode.workspace.getConfiguration('modelGateway');
  return JSON.stringify(['baseUrl', 'userId', 'requestTimeoutSeconds', 'defaultModels'].map((k) => c.inspect(k)));
}

describe('Model Gateway in a real VS Code', () => {
  it('activates, quickly, and registers every contributed command', async () => {
    const { activationMs } = await api();
    ((globalThis as { __modelGatewayMetrics?: Record<string, number> }).__modelGatewayMetrics ??= {}).activationMs = activationMs;
    assert.ok(activationMs > 0);
    const pkg = vscode.extensions.getExtension(config.extensionId)!.packageJSON as { contributes: { commands: { command: string }[] } };
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = pkg.contributes.commands.map((c) => c.command).filter((c) => !registered.has(c));
    assert.deepEqual(missing, []);
    assert.equal(vscode.version, config.vscodeVersion, 'the VS Code version the run asked for');
  });

  it('starts unconfigured: the account tree is empty so the welcome view shows', async () => {
    const { testing } = await api();
    await runAnswering('modelGateway.signOut', true);
    await vscode.workspace.getConfiguration('modelGateway').update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    assert.equal(testing.services.isConfigured(), false);
    assert.deepEqual(await children(), []);
    assert.equal((await testing.status.refresh()).kind, 'unconfigured');
  });

  it('stores the API key in secret storage, never in settings, and verifies it', async () => {
    const { testing } = await api();
    // The welcome flow: the URL, then the key it asks for at once.
    await runAnswering('modelGateway.setBaseUrl', `${config.emulatorUrl}/v1`, config.demoKey);
    assert.equal(vscode.workspace.getConfiguration('modelGateway').get('baseUrl'), `${config.emulatorUrl}/v1`);
    await until('the key asked for after the URL', () => Promise.resolve(testing.services.credentials.getApiKey() === config.demoKey || undefined));
    assert.equal(testing.services.credentials.apiKeySource(), 'secret-storage');
    assert.ok(!allSettingsText().includes(config.demoKey), 'the key is in no setting');
    assert.equal(await vscode.commands.executeCommand('modelGateway.verifyKey'), true);
    const state = await testing.status.refresh();
    assert.equal(state.kind, 'connected');
  });

  it("takes no URL or credential from a command's caller: another extension cannot redirect the key", async () => {
    const { testing } = await api();
    const before = vscode.workspace.getConfiguration('modelGateway').get('baseUrl');
    // The person dismisses the box that opens instead.
    testing.services.prompts.answerNext(undefined);
    await vscode.commands.executeCommand('modelGateway.setBaseUrl', 'http://127.0.0.1:9/steal');
    assert.equal(vscode.workspace.getConfiguration('modelGateway').get('baseUrl'), before);
    testing.services.prompts.answerNext(undefined);
    assert.equal(await vscode.commands.executeCommand('modelGateway.setApiKey', 'sk-planted-by-another-extension'), false);
    assert.equal(testing.services.credentials.getApiKey(), config.demoKey);
  });

  it("without an access token the tree offers to set one and lists the key's models", async () => {
    const rows = await children();
    // The key's own row first (new-api names it from /api/usage/token; one-api's billing routes do not).
    assert.equal(rows[0].node.kind, 'thisKey');
    assert.equal(label(rows[0].item), config.profile === 'new-api' ? 'API key “demo”' : 'This API key');
    assert.match(String(rows[0].item.description), /^unlimited · \$\d+\.\d+ used$/);
    const offer = rows.find((r) => r.node.kind === 'message')!;
    assert.match(label(offer.item), /set the system access token/);
    assert.equal(offer.item.command?.command, 'modelGateway.setAccessToken');
    const models = await children(rows.find((r) => r.node.kind === 'models')!.node);
    assert.ok(models.map((m) => label(m.item)).includes('gpt-4o-mini'));
  });

  it("with the access token but not new-api's user id, the key still connects and the status says what the account side needs", async () => {
    const { testing } = await api();
    // The person sets the token and closes the user id question.
    assert.equal(await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, undefined), true);
    const state = await testing.status.refresh();
    assert.equal(state.kind, 'connected', JSON.stringify(state));
    if (config.profile === 'new-api')
      assert.ok(state.kind === 'connected' && /user id/i.test(state.accountHint ?? '') && state.balanceDollars === undefined, JSON.stringify(state));
    // one-api takes the token alone: the balance shows, with no hint.
    else assert.ok(state.kind === 'connected' && state.accountHint === undefined && state.balanceDollars !== undefined, JSON.stringify(state));
  });

  it('shows the account, balance, keys and models with the access token', async () => {
    const { testing } = await api();
    assert.equal(await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, config.demoUserId), true);
    // new-api refused the token without the user id, so it was asked for and kept with the token;
    // one-api never asks.
    assert.equal(testing.services.credentials.getAccountUserId(), config.profile === 'new-api' ? config.demoUserId : undefined);
    assert.ok(!allSettingsText().includes(config.demoAccessToken));
    const rows = await until('the account row', async () => {
      const r = await children();
      return r[0]?.node.kind === 'account' ? r : undefined;
    });
    assert.equal(label(rows[0].item), 'demo');
    assert.match(String(rows[0].item.description), /^\$\d+\.\d\d/);
    const state = await testing.status.refresh();
    assert.ok(state.kind === 'connected' && state.balanceDollars !== undefined && state.username === 'demo');
    const row = (kind: string) => rows.find((r) => r.node.kind === kind)!;
    // new-api offers a plan (the emulator's operator has one); one-api has none: no row.
    assert.equal(
      rows.some((r) => r.node.kind === 'plan'),
      config.profile === 'new-api',
    );
    const keys = await children(row('keys').node);
    assert.ok(
      keys.some((k) => label(k.item) === 'demo'),
      'the demo key is listed',
    );
    const demo = keys.find((k) => label(k.item) === 'demo')!;
    assert.match(String(demo.item.description), /^in use here · sk-emul…0000 · unlimited · expires never$/, 'the key this extension uses is marked');
    // Disabling the key in use asks first, specifically; declining keeps it.
    testing.services.prompts.answerNext(false);
    await vscode.commands.executeCommand('modelGateway.keys.disable', demo.node);
    assert.equal(testing.services.prompts.pendingAnswers(), 0, 'the question was asked');
    assert.equal(await vscode.commands.executeCommand('modelGateway.verifyKey'), true, 'the key in use still works');
    const groups = await children(row('models').node);
    assert.deepEqual(
      groups.map((g) => label(g.item)),
      ['Available to this account', 'All models'],
    );
    assert.ok((await children(groups[1].node)).some((m) => label(m.item) === 'claude-sonnet-emu'));
  });

  it("creates, disables, enables, finds and deletes a key from the tree's commands", async () => {
    const created = await vscode.commands.executeCommand<{ id: number; name: string }>('modelGateway.keys.create', {
      name: 'integration-key',
      quotaDollars: 2,
      expiresInDays: 30,
    });
    assert.ok(created && created.id > 0);
    assert.ok(!('key' in created), 'a command never returns the secret');
    const findRow = async () => {
      const root = await children();
      return (await children(root.find((r) => r.node.kind === 'keys')!.node)).find((k) => label(k.item) === 'integration-key');
    };
    const row = await until('the new key in the tree', findRow);
    assert.match(String(row.item.description), /\$2\.00 left · expires \d{4}-\d\d-\d\d/);
    assert.equal(row.item.contextValue, 'key.enabled');
    await vscode.commands.executeCommand('modelGateway.keys.disable', row.node);
    assert.equal(
      (await until('disabled', async () => ((await findRow())?.item.contextValue === 'key.disabled' ? await findRow() : undefined))).item.contextValue,
      'key.disabled',
    );
    await vscode.commands.executeCommand('modelGateway.keys.enable', (await findRow())!.node);
    await until('enabled again', async () => (await findRow())?.item.contextValue === 'key.enabled');
    await vscode.commands.executeCommand('modelGateway.keys.filter', 'integration');
    const keysRow = async () => (await children()).find((r) => r.node.kind === 'keys')!;
    const filtered = await children((await keysRow()).node);
    assert.deepEqual(
      filtered.map((k) => label(k.item)),
      ['integration-key'],
    );
    assert.match(String((await keysRow()).item.description), /matching "integration"/);
    await vscode.commands.executeCommand('modelGateway.keys.clearFilter');
    // A caller's own id or look-alike row is not a row of the tree: the person is asked instead.
    await vscode.env.clipboard.writeText('');
    const reveals = async () => (await emulatorRequests()).filter((r) => /^(GET|POST) \/api\/token\/\d+\/key/.test(r)).length;
    const revealsBefore = await reveals();
    const { testing } = await api();
    testing.services.prompts.answerNext(undefined);
    assert.equal(await vscode.commands.executeCommand('modelGateway.keys.copy', created.id), false);
    testing.services.prompts.answerNext(undefined);
    assert.equal(await vscode.commands.executeCommand('modelGateway.keys.copy', { kind: 'key', record: { id: created.id, name: 'x' } }), false);
    assert.equal(await vscode.env.clipboard.readText(), '');
    assert.equal(await reveals(), revealsBefore, 'no key was revealed for a caller');
    assert.equal(await vscode.commands.executeCommand('modelGateway.keys.copy', (await findRow())!.node), true);
    const copied = await vscode.env.clipboard.readText();
    assert.match(copied, /^sk-[0-9a-f]{48}$/);
    testing.services.prompts.answerNext(false);
    assert.equal(await vscode.commands.executeCommand('modelGateway.keys.delete', (await findRow())!.node), false, 'declining the confirmation keeps the key');
    assert.equal(await runAnswering('modelGateway.keys.delete', 'integration-key', true), true, 'chosen by name, then confirmed');
    await until('the key gone', async () => ((await findRow()) === undefined ? true : undefined));
    await vscode.env.clipboard.writeText('');
  });

  it('sets a default model for a job from a model row', async () => {
    await vscode.commands.executeCommand('modelGateway.models.setDefault', 'gpt-4o', 'chat');
    assert.equal(vscode.workspace.getConfiguration('modelGateway').get('defaultModels.chat'), 'gpt-4o');
    await vscode.workspace.getConfiguration('modelGateway').update('defaultModels.chat', undefined, vscode.ConfigurationTarget.Global);
  });

  it('shows an account API refusal as a message on the tree', async () => {
    await runAnswering('modelGateway.setAccessToken', 'not-a-valid-access-token');
    const rows = await until('the error row', async () => {
      const r = await children();
      return r[0]?.node.kind === 'message' && (r[0].item.iconPath as { id?: string } | undefined)?.id === 'error' ? r : undefined;
    });
    assert.match(label(rows[0].item), /Set a valid system access token/);
    await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, config.demoUserId);
  });

  it('a refused API key shows as an error state, and a good key recovers', async () => {
    const { testing } = await api();
    assert.equal(await runAnswering('modelGateway.setApiKey', config.spareKey.replace(/.$/, 'x')), false);
    const state = await testing.status.refresh();
    assert.equal(state.kind, 'error');
    assert.ok(state.kind === 'error' && /Set a valid key/.test(state.message));
    assert.equal(await runAnswering('modelGateway.setApiKey', config.demoKey), true);
    assert.equal((await testing.status.refresh()).kind, 'connected');
  });

  it('signs out: both credentials removed, the tree empties for the welcome view', async () => {
    const { testing } = await api();
    await runAnswering('modelGateway.signOut', true);
    assert.equal(testing.services.credentials.getApiKey(), undefined);
    assert.equal(testing.services.credentials.getAccessToken(), undefined);
    assert.deepEqual(await children(), []);
    testing.services.log.info(`a log line that mentions ${config.demoKey} and Bearer ${config.demoAccessToken}`);
  });
});
