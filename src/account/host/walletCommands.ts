import * as vscode from 'vscode';
import { formatDollars } from '../../common/money';
import { showGatewayError } from '../../shell/errors';
import type { CredentialFeature } from '../../shell/services';
import type { AccountTree } from './tree';

/** Longest redemption code both servers store (one-api and new-api keep 32; some forks more). */
const MAX_CODE = 64;

/**
 * Redeem a Code, Check In and Open Plans. None takes arguments: the code comes from the person's
 * input box, so no other extension can spend a code or check in on the person's account.
 */
export function registerWalletCommands(services: CredentialFeature, tree: AccountTree, reg: (id: string, fn: (...args: unknown[]) => unknown) => void): void {
  const wallet = () => services.client().account.wallet;

  reg('modelGateway.account.redeem', async () => {
    if (!services.credentials.getAccessToken()) {
      const set = vscode.l10n.t('Set Access Token');
      const pick = await vscode.window.showInformationMessage(
        vscode.l10n.t('Redeeming a code needs the system access token (the code tops up the account, not a key).'),
        set,
      );
      if (pick === set) await vscode.commands.executeCommand('modelGateway.setAccessToken');
      return;
    }
    const code = await vscode.window.showInputBox({
      title: vscode.l10n.t('Redeem a Code'),
      prompt: vscode.l10n.t("A redemption code from the gateway's operator tops up the account's balance."),
      placeHolder: vscode.l10n.t('Redemption code'),
      ignoreFocusOut: true,
      validateInput: (v) =>
        !v.trim() ? vscode.l10n.t('Enter the code') : v.trim().length > MAX_CODE ? vscode.l10n.t('At most {0} characters', MAX_CODE) : undefined,
    });
    if (!code?.trim()) return;
    try {
      const got = await vscode.window.withProgress({ location: { viewId: 'modelGateway.account' }, title: vscode.l10n.t('Redeeming…') }, () =>
        wallet().redeem(code),
      );
      const me = await services
        .client()
        .account.self()
        .catch(() => undefined);
      services.notifySpend();
      tree.refreshBalance();
      void vscode.window.showInformationMessage(
        me
          ? vscode.l10n.t('Redeemed: {0} added. The balance is now {1}.', formatDollars(got.dollars), formatDollars(me.balanceDollars))
          : vscode.l10n.t('Redeemed: {0} added.', formatDollars(got.dollars)),
      );
    } catch (err) {
      // A wrong or used code: the gateway's own words (该兑换码已被使用), nothing else changed.
      showGatewayError(services, vscode.l10n.t('Redeem a Code'), err);
    }
  });

  reg('modelGateway.account.checkIn', async () => {
    try {
      const status = await wallet().checkinStatus();
      if (!status?.enabled) {
        void vscode.window.showInformationMessage(vscode.l10n.t('This gateway has no daily check-in turned on.'));
        return;
      }
      if (status.checkedInToday) {
        void vscode.window.showInformationMessage(vscode.l10n.t('Already checked in today: come back tomorrow.'));
        return;
      }
      const got = await wallet().checkin(status.nonce);
      services.notifySpend();
      tree.refreshBalance();
      void vscode.window.showInformationMessage(vscode.l10n.t('Checked in: {0} added to the balance.', formatDollars(got.dollars)));
    } catch (err) {
      showGatewayError(services, vscode.l10n.t('Check In'), err);
    }
  });

  reg('modelGateway.account.openPlans', () => {
    const base = services.settings().baseUrl;
    if (!base) return;
    // new-api's console shows plans and top-ups on its wallet page.
    void vscode.env.openExternal(vscode.Uri.parse(`${new URL(base).origin}/console/topup`));
  });
}
