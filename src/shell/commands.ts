import * as vscode from 'vscode';
import { baseUrlProblem, setBaseUrlSetting } from './config';
import { showGatewayError } from './errors';
import { credentialName, gatewayOrigin, hostOf, isCleartextRemote, type CredentialKind } from './origins';
import { loadGateway, type CredentialFeature } from './services';

type Register = (id: string, fn: (...args: unknown[]) => unknown) => void;

/** Commands for the connection: URL, API key, access token, verify, sign out, log, status menu. */
export function registerShellCommands(services: CredentialFeature, reg: Register): void {
  // No arguments from callers: any extension can run a command, and one that set the URL or a
  // credential would decide where our stored key is sent.
  reg('modelGateway.setBaseUrl', async () => {
    const url = await services.prompts.input({
      title: vscode.l10n.t('Model Gateway: Gateway URL'),
      prompt: vscode.l10n.t('The base address of your gateway (with or without /v1)'),
      placeHolder: vscode.l10n.t('https://gateway.example.com'),
      value: services.settings().baseUrl,
      ignoreFocusOut: true,
      validateInput: baseUrlProblem,
    });
    if (url === undefined) return;
    const problem = baseUrlProblem(url);
    if (problem) {
      void vscode.window.showErrorMessage(problem);
      return;
    }
    const origin = gatewayOrigin(url)!;
    if (isCleartextRemote(origin) && !(await confirmCleartext(services, origin))) return;
    await setBaseUrlSetting(url.trim());
    // Credentials entered for another gateway move only when the person says they belong here too.
    const held = services.withheldCredentials();
    if (held.length) await offerCredentials(services, held, origin);
    // Awaited: a caller setting up the connection (VS Code's Language Models editor) waits for the key too.
    if (!services.credentials.getApiKey()) await vscode.commands.executeCommand('modelGateway.setApiKey');
  });

  // Asks the person (a modal no caller can answer) whether the stored credentials belong to the
  // gateway the URL now names: a changed user setting, a settings sync or another extension's
  // edit of the URL never moves them by itself.
  reg('modelGateway.useCredentialsHere', async () => {
    const origin = services.gatewayOrigin();
    if (!origin) return false;
    const withheld = services.withheldCredentials();
    if (!withheld.length) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Your credentials are already used with {0}.', hostOf(origin)));
      return true;
    }
    return offerCredentials(services, withheld, origin);
  });

  reg('modelGateway.setApiKey', async () => {
    const key = await askSecret(services, {
      title: vscode.l10n.t('Model Gateway: API Key'),
      prompt: vscode.l10n.t('Your gateway API key (stored in the OS keychain via VS Code secret storage, never in settings)'),
      placeHolder: vscode.l10n.t('sk-…'),
      what: vscode.l10n.t('an API key'),
    });
    if (!key) return false;
    await services.credentials.setApiKey(key, await entryOrigin(services));
    services.log.info('API key saved to secret storage');
    if (!services.settings().baseUrl) {
      void vscode.commands.executeCommand('modelGateway.setBaseUrl');
      return true;
    }
    return verify(services);
  });

  reg('modelGateway.setAccessToken', async () => {
    const token = await askSecret(services, {
      title: vscode.l10n.t('Model Gateway: System Access Token'),
      prompt: vscode.l10n.t("The account's system access token (gateway console → account settings); it manages keys and reads the balance"),
      what: vscode.l10n.t('an access token'),
    });
    if (!token) return false;
    await services.credentials.setAccessToken(token, await entryOrigin(services));
    services.log.info('System access token saved to secret storage');
    await checkAccountAccess(services);
    void vscode.commands.executeCommand('modelGateway.refreshStatus');
    return true;
  });

  reg('modelGateway.setAccountUserId', async () => {
    const saved = await askAccountUserId(services);
    if (saved) {
      await checkAccountAccess(services);
      void vscode.commands.executeCommand('modelGateway.refreshStatus');
    }
    return saved;
  });

  reg('modelGateway.verifyKey', () => verify(services));

  reg('modelGateway.signOut', async () => {
    if (
      !(await services.prompts.confirm(
        vscode.l10n.t('Remove the API key and the system access token from this machine?'),
        undefined,
        vscode.l10n.t('Sign Out'),
      ))
    )
      return;
    await services.credentials.clear();
    services.log.info('Signed out: credentials removed from secret storage');
    const env = [services.credentials.apiKeySource(), services.credentials.accessTokenSource()].includes('environment');
    if (env) void vscode.window.showInformationMessage(vscode.l10n.t('Signed out. Credentials from MODEL_GATEWAY_* environment variables still apply.'));
  });

  reg('modelGateway.showLog', () => services.log.show());

  reg('modelGateway.statusActions', async () => {
    const items: (vscode.QuickPickItem & { command: string })[] = [];
    const s = services.settings();
    if (!s.baseUrl) items.push({ label: vscode.l10n.t('$(link) Set Gateway URL'), command: 'modelGateway.setBaseUrl' });
    if (!services.credentials.getApiKey()) items.push({ label: vscode.l10n.t('$(key) Set API Key'), command: 'modelGateway.setApiKey' });
    if (services.withheldCredentials().length)
      items.push({
        label: vscode.l10n.t('$(shield) Use My Credentials with This Gateway'),
        description: vscode.l10n.t('they were entered for another one'),
        command: 'modelGateway.useCredentialsHere',
      });
    if (services.isConfigured()) {
      items.push({ label: vscode.l10n.t('$(refresh) Refresh Connection and Balance'), command: 'modelGateway.refreshStatus' });
      items.push({ label: vscode.l10n.t('$(verified) Verify API Key'), command: 'modelGateway.verifyKey' });
      if (!services.credentials.getAccessToken())
        items.push({
          label: vscode.l10n.t('$(key) Set System Access Token'),
          description: vscode.l10n.t('to see the balance and manage keys'),
          command: 'modelGateway.setAccessToken',
        });
      items.push({ label: vscode.l10n.t('$(graph) Show Usage and Spend'), command: 'modelGateway.usage.open' });
      items.push({ label: vscode.l10n.t('$(account) Open Account View'), command: 'modelGateway.account.focus' });
    }
    items.push({ label: vscode.l10n.t('$(output) Show Log'), command: 'modelGateway.showLog' });
    items.push({ label: vscode.l10n.t('$(gear) Open Settings'), command: 'modelGateway.openSettings' });
    if (services.credentials.getApiKey() || services.credentials.getAccessToken())
      items.push({ label: vscode.l10n.t('$(sign-out) Sign Out'), command: 'modelGateway.signOut' });
    const pick = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Model Gateway') });
    if (pick) await vscode.commands.executeCommand(pick.command);
  });

  reg('modelGateway.openSettings', () => vscode.commands.executeCommand('workbench.action.openSettings', '@ext:model-gateway.model-gateway'));
  // The user's settings tab, so a value lands where the client reads it (workspace values are
  // ignored). "proxy" finds every http.proxy* setting and, by its description, modelGateway.tls.caFiles.
  reg('modelGateway.openNetworkSettings', () => vscode.commands.executeCommand('workbench.action.openGlobalSettings', { query: 'proxy' }));
}

/**
 * The origin a credential typed now is entered for: the gateway URL in use. Plain http to another
 * machine is confirmed first; declined, the credential is kept unbound, and not sent over plain
 * http until confirmed.
 */
async function entryOrigin(services: CredentialFeature): Promise<string | undefined> {
  const origin = services.gatewayOrigin();
  if (!origin) return undefined;
  if (isCleartextRemote(origin) && !(await confirmCleartext(services, origin))) return undefined;
  return origin;
}

function confirmCleartext(services: CredentialFeature, origin: string): Promise<boolean> {
  return services.prompts.confirm(
    vscode.l10n.t('{0} is reached over plain http: your API key and access token would cross the network unencrypted.', hostOf(origin)),
    vscode.l10n.t(
      'Anyone on the network path (a shared Wi-Fi, a proxy) could read them and spend your balance. Use https unless this gateway is on a network you trust.',
    ),
    vscode.l10n.t('Use Plain http Anyway'),
  );
}

/** Asks whether credentials entered elsewhere belong to `origin`; binds them there on yes. */
async function offerCredentials(services: CredentialFeature, kinds: CredentialKind[], origin: string): Promise<boolean> {
  const names = kinds.length > 1 ? vscode.l10n.t('{0} and {1}', credentialName(kinds[0]), credentialName(kinds[1])) : credentialName(kinds[0]);
  const from = [...new Set(kinds.map((k) => services.credentials.boundOrigin(k)).filter((o): o is string => !!o))];
  const fromHosts = from.length > 1 ? vscode.l10n.t('{0} and {1}', hostOf(from[0]), hostOf(from[1])) : hostOf(from[0] ?? '');
  const message = from.length
    ? kinds.length > 1
      ? vscode.l10n.t('Your {0} were entered for {1}. Send them to {2} too?', names, fromHosts, hostOf(origin))
      : vscode.l10n.t('Your {0} was entered for {1}. Send it to {2} too?', names, fromHosts, hostOf(origin))
    : vscode.l10n.t('Send your {0} to {1}?', names, hostOf(origin));
  const detail = [
    kinds.includes('accessToken')
      ? vscode.l10n.t(
          'Only if {0} is your gateway: a server you do not control that receives the {1} can spend your balance and manage your account and its keys.',
          origin,
          names,
        )
      : vscode.l10n.t('Only if {0} is your gateway: a server you do not control that receives the {1} can spend your balance.', origin, names),
    isCleartextRemote(origin) ? vscode.l10n.t('This gateway uses plain http: they would also cross the network unencrypted.') : '',
  ]
    .filter(Boolean)
    .join(' ');
  if (!(await services.prompts.confirm(message, detail, vscode.l10n.t('Use with {0}', hostOf(origin))))) return false;
  await services.credentials.bind(kinds, origin);
  services.log.info(`${names} confirmed for ${origin}`);
  return true;
}

/** A secret typed in a password box (never taken from a command's caller). */
async function askSecret(services: CredentialFeature, o: { title: string; prompt: string; placeHolder?: string; what: string }): Promise<string | undefined> {
  return services.prompts.input({
    title: o.title,
    prompt: o.prompt,
    placeHolder: o.placeHolder,
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim().length < 8 ? vscode.l10n.t('That is too short to be {0}', o.what) : undefined),
  });
}

/** GET /v1/models with the current key; true when it is valid. */
async function verify(services: CredentialFeature): Promise<boolean> {
  try {
    const valid = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Verifying the API key…') }, () =>
      services.client().models.verifyKey(),
    );
    if (valid) {
      services.log.info('API key verified');
      void vscode.window.showInformationMessage(vscode.l10n.t('The API key is valid.'));
    } else {
      services.log.warn('The gateway refused the API key (401)');
      void vscode.window
        .showErrorMessage(
          vscode.l10n.t('The gateway refused this API key (401: missing, invalid or expired). Check it and set it again.'),
          vscode.l10n.t('Set API Key'),
        )
        .then((choice) => choice && vscode.commands.executeCommand('modelGateway.setApiKey'));
    }
    return valid;
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not verify the API key'), err);
    return false;
  }
}

/**
 * Tries the access token once. new-api (2025) refuses it without the account's user id
 * (`New-Api-User`); then the id is asked for at once, kept with the token, and tried again.
 */
async function checkAccountAccess(services: CredentialFeature): Promise<void> {
  if (!services.settings().baseUrl) return;
  const gw = loadGateway();
  try {
    await services.client().account.self();
  } catch (err) {
    if (err instanceof gw.AccountApiError && err.code === gw.NEW_API_USER_REQUIRED && (await askAccountUserId(services))) {
      try {
        await services.client().account.self();
        return;
      } catch (again) {
        showGatewayError(services, vscode.l10n.t('The gateway still refuses the access token'), again);
        return;
      }
    }
    showGatewayError(services, vscode.l10n.t('The gateway refused the access token'), err);
  }
}

/** Asks for new-api's account user id and keeps it with the access token; false when cancelled. */
async function askAccountUserId(services: CredentialFeature): Promise<boolean> {
  const id = await services.prompts.input({
    title: vscode.l10n.t('Model Gateway: Account User Id'),
    prompt: vscode.l10n.t(
      'This gateway (new-api) wants your numeric user id with the access token: it is the ID in the gateway console (personal settings, or the user list).',
    ),
    placeHolder: 'e.g. 1',
    value: services.credentials.getAccountUserId() ?? services.settings().userId,
    ignoreFocusOut: true,
    validateInput: (v) => (/^\d+$/.test(v.trim()) ? undefined : vscode.l10n.t('Enter the number shown as ID')),
  });
  if (id === undefined) return false;
  await services.credentials.setAccountUserId(id);
  services.log.info('Account user id saved with the access token');
  return true;
}
