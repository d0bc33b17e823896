import * as vscode from 'vscode';
import type { ApiKeyRecord, UpdateKeyRequest } from '../../gateway';
import { dollarsToQuota, isSameKey, quotaToDollars } from '../../common/money';
import { setDefaultModel, type Job } from '../../shell/config';
import { showGatewayError } from '../../shell/errors';
import type { CredentialFeature } from '../../shell/services';
import { jobsFor, keyState } from '../core/format';
import type { AccountNode, AccountTree } from './tree';

/** Arguments a caller (a test, or another command) may pass instead of answering the wizard. */
export interface CreateKeyArgs {
  name: string;
  /** Days until expiry; 0 or absent means never. */
  expiresInDays?: number;
  /** Dollars of quota; absent means unlimited. */
  quotaDollars?: number;
  subnet?: string;
}

const DAY = 86_400;

/**
 * The key row a command was run on. Only rows this tree handed to VS Code count (the context
 * menu passes them back): a caller's own `{id}` or number is ignored, so no other extension can
 * copy, change or delete a key without the person choosing it.
 */
function keyNodeOf(tree: AccountTree, arg: unknown): Extract<AccountNode, { kind: 'key' }> | undefined {
  return tree.owns(arg) && arg.kind === 'key' ? arg : undefined;
}

const inUseDetail = (): string => vscode.l10n.t('Chat, search and media in this editor stop working until you set another key (Model Gateway: Set API Key).');

/** Whether a key (by id) is the one this extension uses, as far as the listed key shows it. */
async function isKeyInUse(tree: AccountTree, services: CredentialFeature, id: number): Promise<boolean> {
  const keys = await tree.keys();
  const record = keys.ok ? keys.value.find((k) => k.id === id) : undefined;
  return !!record && isSameKey(record.key, services.credentials.getApiKey());
}

async function pickKey(services: CredentialFeature, tree: AccountTree, arg: unknown, action: string): Promise<number | undefined> {
  const node = keyNodeOf(tree, arg);
  if (node) return node.record.id;
  const keys = await tree.keys();
  if (!keys.ok) return undefined;
  const pick = await services.prompts.pick(
    keys.value.map((k) => ({ label: k.name || vscode.l10n.t('key {0}', k.id), description: keyState(k.state), id: k.id })),
    { title: vscode.l10n.t('{0}: choose a key', action), ignoreFocusOut: true },
  );
  return pick?.id;
}

/** Edit Key's dialog: which field, then its new value (undefined when the person leaves). */
async function askUpdateKeyRequest(id: number, current: ApiKeyRecord): Promise<UpdateKeyRequest | undefined> {
  const field = await vscode.window.showQuickPick(
    [
      { label: vscode.l10n.t('Name'), description: current.name, field: 'name' as const },
      {
        label: vscode.l10n.t('Quota'),
        description: current.unlimitedQuota ? vscode.l10n.t('unlimited') : `$${quotaToDollars(current.remainQuota).toFixed(2)}`,
        field: 'quota' as const,
      },
      {
        label: vscode.l10n.t('Expiry'),
        description: current.expiredTime === -1 ? vscode.l10n.t('never') : new Date(current.expiredTime * 1000).toISOString().slice(0, 10),
        field: 'expiry' as const,
      },
      { label: vscode.l10n.t('Allowed addresses'), description: current.subnet || vscode.l10n.t('any'), field: 'subnet' as const },
    ],
    { title: vscode.l10n.t('Edit "{0}"', current.name), ignoreFocusOut: true },
  );
  if (!field) return undefined;
  let change: UpdateKeyRequest | undefined;
  if (field.field === 'name') {
    const name = await vscode.window.showInputBox({
      title: vscode.l10n.t('New name'),
      value: current.name,
      validateInput: (v) => (!v.trim() ? vscode.l10n.t('Enter a name') : v.length > 50 ? vscode.l10n.t('At most 50 characters') : undefined),
    });
    if (name !== undefined) change = { id, name: name.trim() };
  } else if (field.field === 'quota') {
    const q = await vscode.window.showInputBox({
      title: vscode.l10n.t('Quota in dollars (empty for unlimited)'),
      validateInput: (v) => (!v.trim() || Number(v) >= 0 ? undefined : vscode.l10n.t('Enter an amount in dollars')),
    });
    if (q !== undefined) change = q.trim() ? { id, remain_quota: dollarsToQuota(Number(q)), unlimited_quota: false } : { id, unlimited_quota: true };
  } else if (field.field === 'expiry') {
    const days = await vscode.window.showInputBox({
      title: vscode.l10n.t('Days from now until expiry (0 for never)'),
      validateInput: (v) => (/^\d+$/.test(v.trim()) ? undefined : vscode.l10n.t('Enter a whole number of days')),
    });
    if (days !== undefined) change = { id, expired_time: Number(days) === 0 ? -1 : Math.floor(Date.now() / 1000) + Number(days) * DAY };
  } else {
    const subnet = await vscode.window.showInputBox({ title: vscode.l10n.t('Allowed addresses (empty for any)'), value: current.subnet });
    if (subnet !== undefined) change = { id, subnet: subnet.trim() };
  }
  return change;
}

/** The wizard: name, expiry, quota, subnet. Undefined when the person cancels. */
async function askCreateArgs(): Promise<CreateKeyArgs | undefined> {
  const title = vscode.l10n.t('Create API Key');
  const name = await vscode.window.showInputBox({
    title: `${title} (1/4)`,
    prompt: vscode.l10n.t('A name to recognise the key by'),
    ignoreFocusOut: true,
    validateInput: (v) => (!v.trim() ? vscode.l10n.t('Enter a name') : v.trim().length > 50 ? vscode.l10n.t('At most 50 characters') : undefined),
  });
  if (name === undefined) return undefined;
  const expiry = await vscode.window.showQuickPick(
    [
      { label: vscode.l10n.t('Never expires'), days: 0 },
      { label: vscode.l10n.t('7 days'), days: 7 },
      { label: vscode.l10n.t('30 days'), days: 30 },
      { label: vscode.l10n.t('90 days'), days: 90 },
      { label: vscode.l10n.t('1 year'), days: 365 },
    ],
    { title: vscode.l10n.t('{0} (2/4): expiry', title), ignoreFocusOut: true },
  );
  if (!expiry) return undefined;
  const quota = await vscode.window.showInputBox({
    title: vscode.l10n.t('{0} (3/4): quota', title),
    prompt: vscode.l10n.t('Spending limit in dollars, or leave empty for unlimited'),
    ignoreFocusOut: true,
    validateInput: (v) =>
      !v.trim() || (Number(v) > 0 && Number.isFinite(Number(v))) ? undefined : vscode.l10n.t('Enter a positive amount in dollars, or leave empty'),
  });
  if (quota === undefined) return undefined;
  const subnet = await vscode.window.showInputBox({
    title: vscode.l10n.t('{0} (4/4): allowed addresses', title),
    prompt: vscode.l10n.t('Optional IP range the key may be used from (e.g. 203.0.113.0/24); empty allows any address'),
    ignoreFocusOut: true,
  });
  if (subnet === undefined) return undefined;
  return { name: name.trim(), expiresInDays: expiry.days, quotaDollars: quota.trim() ? Number(quota) : undefined, subnet: subnet.trim() };
}

export function registerAccountCommands(services: CredentialFeature, tree: AccountTree, reg: (id: string, fn: (...args: unknown[]) => unknown) => void): void {
  const account = () => services.client().account;

  reg('modelGateway.account.refresh', () => {
    tree.refresh();
  });

  reg('modelGateway.keys.create', async (arg?: unknown) => {
    const args = (arg as CreateKeyArgs | undefined)?.name ? (arg as CreateKeyArgs) : await askCreateArgs();
    if (!args) return undefined;
    let record: ApiKeyRecord;
    try {
      record = await account().tokens.create({
        name: args.name,
        expired_time: args.expiresInDays ? Math.floor(Date.now() / 1000) + args.expiresInDays * DAY : -1,
        remain_quota: args.quotaDollars === undefined ? 0 : dollarsToQuota(args.quotaDollars),
        unlimited_quota: args.quotaDollars === undefined,
        subnet: args.subnet ?? '',
      });
    } catch (err) {
      showGatewayError(services, vscode.l10n.t('Could not create the key'), err);
      return undefined;
    }
    services.log.info(`created key ${record.id} "${record.name}"`);
    tree.refreshKeys();
    // Only the person, in the wizard's dialog, may copy the new key or make it this extension's
    // key; a caller that passed the answers gets neither, and the key is never returned.
    if (!(arg as CreateKeyArgs | undefined)?.name) await offerNewKey(services, record);
    return { id: record.id, name: record.name };
  });

  const setEnabled = (enabled: boolean) => async (arg?: unknown) => {
    const id = await pickKey(services, tree, arg, enabled ? vscode.l10n.t('Enable key') : vscode.l10n.t('Disable key'));
    if (id === undefined) return;
    if (
      !enabled &&
      (await isKeyInUse(tree, services, id)) &&
      !(await services.prompts.confirm(vscode.l10n.t('Disable the key Model Gateway uses?'), inUseDetail(), vscode.l10n.t('Disable')))
    )
      return;
    try {
      const r = await account().tokens.setEnabled(id, enabled);
      services.log.info(`${enabled ? 'enabled' : 'disabled'} key ${id}`);
      tree.refreshKeys();
      return { id: r.id, state: r.state };
    } catch (err) {
      showGatewayError(services, enabled ? vscode.l10n.t('Could not enable the key') : vscode.l10n.t('Could not disable the key'), err);
    }
  };
  reg('modelGateway.keys.enable', setEnabled(true));
  reg('modelGateway.keys.disable', setEnabled(false));

  reg('modelGateway.keys.edit', async (arg?: unknown) => {
    const id = await pickKey(services, tree, arg, vscode.l10n.t('Edit key'));
    if (id === undefined) return;
    try {
      const current = await account().tokens.get(id);
      const change = await askUpdateKeyRequest(id, current);
      if (!change) return;
      await account().tokens.update(change);
      tree.refreshKeys();
    } catch (err) {
      showGatewayError(services, vscode.l10n.t('Could not edit the key'), err);
    }
  });

  reg('modelGateway.keys.copy', async (arg?: unknown) => {
    const id = await pickKey(services, tree, arg, vscode.l10n.t('Copy key'));
    if (id === undefined) return false;
    try {
      const key = await account().tokens.reveal(id);
      if (!key) {
        void vscode.window.showWarningMessage(vscode.l10n.t('This gateway does not reveal existing keys; copy it when you create one.'));
        return false;
      }
      await vscode.env.clipboard.writeText(key);
      void vscode.window.showInformationMessage(vscode.l10n.t('The key is on the clipboard.'));
      return true;
    } catch (err) {
      showGatewayError(services, vscode.l10n.t('Could not copy the key'), err);
      return false;
    }
  });

  reg('modelGateway.keys.delete', async (arg?: unknown) => {
    const id = await pickKey(services, tree, arg, vscode.l10n.t('Delete key'));
    if (id === undefined) return false;
    const name = keyNodeOf(tree, arg)?.record.name ?? vscode.l10n.t('key {0}', id);
    const inUse = await isKeyInUse(tree, services, id);
    const detail = inUse
      ? vscode.l10n.t('{0} This cannot be undone.', inUseDetail())
      : vscode.l10n.t('Anything using this key stops working at once. This cannot be undone.');
    if (
      !(await services.prompts.confirm(
        inUse ? vscode.l10n.t('Delete "{0}", the key Model Gateway uses?', name) : vscode.l10n.t('Delete the API key "{0}"?', name),
        detail,
        vscode.l10n.t('Delete'),
      ))
    )
      return false;
    try {
      await account().tokens.delete(id);
      services.log.info(`deleted key ${id}`);
      tree.refreshKeys();
      return true;
    } catch (err) {
      showGatewayError(services, vscode.l10n.t('Could not delete the key'), err);
      return false;
    }
  });

  reg('modelGateway.keys.filter', async (arg?: unknown) => {
    const text =
      typeof arg === 'string'
        ? arg
        : await vscode.window.showInputBox({ title: vscode.l10n.t('Search API keys by name'), value: tree.filter, ignoreFocusOut: true });
    if (text === undefined) return;
    tree.setFilter(text);
  });
  reg('modelGateway.keys.clearFilter', () => tree.setFilter(''));

  reg('modelGateway.models.setDefault', (arg?: unknown, jobArg?: unknown) => setDefaultModelCommand(services, arg, jobArg));
}

/**
 * Makes a model (the tree's model row, an id, or one the person picks) the default for one of the
 * jobs it can do (`jobArg`, the only one, or the one the person picks).
 */
async function setDefaultModelCommand(services: CredentialFeature, arg?: unknown, jobArg?: unknown): Promise<void> {
  let model =
    typeof arg === 'string' ? arg : (arg as AccountNode | undefined)?.kind === 'model' ? (arg as Extract<AccountNode, { kind: 'model' }>).id : undefined;
  if (!model) {
    try {
      const ids = (await services.client().models.list()).map((m) => m.id).sort();
      model = await vscode.window.showQuickPick(ids, { title: vscode.l10n.t('Choose a model'), ignoreFocusOut: true });
    } catch (err) {
      showGatewayError(services, vscode.l10n.t('Could not list the models'), err);
      return;
    }
    if (!model) return;
  }
  const settings = services.settings();
  // Only the jobs this model can do (read from its id, as gateways name their models).
  const jobs = jobsFor(model);
  if (jobs.length === 0) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('{0} is not a model for a default job (chat, embeddings, rerank, speech, transcription, image or video).', model),
    );
    return;
  }
  const job =
    typeof jobArg === 'string' && (jobs as readonly string[]).includes(jobArg)
      ? (jobArg as Job)
      : jobs.length === 1
        ? jobs[0]
        : (
            await vscode.window.showQuickPick(
              jobs.map((j) => ({
                label: j,
                description: settings.defaultModels[j] ? vscode.l10n.t('now {0}', settings.defaultModels[j]) : vscode.l10n.t('not set'),
                job: j,
              })),
              { title: vscode.l10n.t('Make {0} the default for…', model), ignoreFocusOut: true },
            )
          )?.job;
  if (!job) return;
  await setDefaultModel(job, model);
  void vscode.window.showInformationMessage(vscode.l10n.t('{0} is now the default {1} model.', model, job));
}

/** Shows a new key once, in a modal (so it stays out of the notification history). */
async function offerNewKey(services: CredentialFeature, record: ApiKeyRecord): Promise<void> {
  if (!record.keyIsFull) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('Key "{0}" created. This gateway does not return the new key; copy it from the gateway console.', record.name),
    );
    return;
  }
  const copy = vscode.l10n.t('Copy');
  const use = vscode.l10n.t("Use as This Extension's Key");
  const choice = await vscode.window.showInformationMessage(
    vscode.l10n.t('Key "{0}" created. It is shown this once:', record.name),
    { modal: true, detail: record.key },
    copy,
    use,
  );
  if (choice === copy) await vscode.env.clipboard.writeText(record.key);
  if (choice === use) {
    // Created by the gateway in use (its origin already holds the access token that made it).
    await services.credentials.setApiKey(record.key, services.gatewayOrigin());
    void vscode.window.showInformationMessage(vscode.l10n.t('Model Gateway now uses the key "{0}".', record.name));
  }
}
